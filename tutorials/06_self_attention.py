# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 6. From RNN attention to self-attention
#
# Attention did not start with the Transformer. It started in recurrent translation models, as
# a way for the decoder to look back at the source sentence, and the lecture follows that path:
# first RNN attention (its formula, its score functions, two ways to wire it into a decoder,
# and what the wiring means for parallel computation), then self-attention, which keeps the
# attention and drops the recurrence.
#
# An RNN encoder reads "I enjoyed the movie transformers" one word at a time: the state for
# word $t$ is computed from the state for word $t-1$, so the five states come out in sequence
# even though the whole sentence was available from the start. Attention helps the decoder
# with alignment but not with this wait.
#
# Self-attention drops the recurrence. Every word of a sentence is compared with every word of
# the *same* sentence, itself included, and each comparison needs only the two words'
# embeddings. Nothing waits for anything, so all outputs can be computed at once. This tutorial
# builds it by hand on the lecture's five-word example, then as one matrix formula, and checks
# both against `minigrad.nn.functional.scaled_dot_product_attention`.

# %%
import math
import shutil

from _common import SMALL, out_path, savefig, show_image

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.functional import cat, stack
from minigrad.nn import functional as F
from minigrad.nn.scores import SCORES
from minigrad.viz import draw_graph, render_graph

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Where attention started: the recurrent encoder-decoder
#
# Before Transformers, translation used two recurrent networks. The encoder reads the source
# one word at a time, $\mathbf h_i = f(\mathbf h_{i-1}, \mathbf x_i)$; the decoder then writes the
# target one word at a time, and stops when it writes the end-of-sequence token. In the plain
# version the decoder receives a single vector $\mathbf c$, the encoder's final state, which
# must hold the whole sentence: the longer the sentence, the harder that squeeze (the
# bottleneck), and nothing links a target word to the source words it translates.
#
# Attention (Bahdanau et al., 2015) keeps *all* encoder states. At every decoder step $t$ the
# previous decoder state $\mathbf s_{t-1}$ is compared with each of them by a similarity
# function, the scores are normalised into weights, and their weighted sum becomes that step's
# context:
#
# $$\alpha_{ti} = \frac{\exp \operatorname{sim}(\mathbf s_{t-1}, \mathbf h_i)}{\sum_k \exp \operatorname{sim}(\mathbf s_{t-1}, \mathbf h_k)},
#   \qquad \mathbf c_t = \sum_i \alpha_{ti}\, \mathbf h_i .$$
#
# ### Score functions, with numbers
#
# The similarity $\operatorname{sim}(\mathbf s, \mathbf h)$ can be chosen in several ways
# (the lecture lists them; all are in `minigrad.nn.scores`):
#
# | name | formula | trainable |
# |---|---|---|
# | dot | $\mathbf s^\top \mathbf h$ | nothing |
# | scaled dot | $\mathbf s^\top \mathbf h / \sqrt d$ | nothing |
# | bilinear (Luong's "general") | $\mathbf s^\top W \mathbf h$ | $W$ |
# | additive (Bahdanau) | $\mathbf v^\top \tanh(W \mathbf s + U \mathbf h + \mathbf b)$ | $W, U, \mathbf b, \mathbf v$: a small network |
#
# A decoder state $\mathbf s = [1, 0]$ and three encoder states $\mathbf h_1 = [2, 1]$,
# $\mathbf h_2 = [0, 1]$, $\mathbf h_3 = [1, 1]$ ($d = 2$). By hand:
#
# * dot: $[2, 0, 1]$; scaled dot: divided by $\sqrt 2$, $[1.41, 0, 0.71]$;
# * bilinear with $W = \begin{bmatrix}2 & -1\\ 0 & 1\end{bmatrix}$: $\mathbf s^\top W = [2, -1]$, so $[3, -1, 1]$;
# * additive with $W = U = I$, $\mathbf b = 0$, $\mathbf v = [1, -1]$:
#   $\tanh(\mathbf s + \mathbf h_1) = \tanh([3, 1]) = [0.995, 0.762]$ gives $0.23$; $\mathbf h_2$
#   gives $\tanh 1 - \tanh 1 = 0$; $\mathbf h_3$: $\tanh 2 - \tanh 1 = 0.20$.
#
# The same numbers from the library's score modules, with those weights copied in, and the
# weights $\alpha$ each score gives after the softmax:

# %%
s_query = mg.tensor([[1.0, 0.0]])                                  # (B, d): one decoder state
h_keys = mg.tensor([[[2.0, 1.0], [0.0, 1.0], [1.0, 1.0]]])         # (B, S, d): three encoder states
scorers = {name: SCORES[name]() if name in ("dot", "scaled_dot") else SCORES[name](2, 2)
           for name in ("dot", "scaled_dot", "bilinear", "additive")}
with mg.no_grad():
    scorers["bilinear"].W.weight.copy_(np.array([[2.0, -1.0], [0.0, 1.0]]))
    scorers["additive"].W.weight.copy_(np.eye(2))
    scorers["additive"].U.weight.copy_(np.eye(2))
    scorers["additive"].U.bias.copy_(np.zeros(2))
    scorers["additive"].v.copy_(np.array([1.0, -1.0]))
    score_values = {name: sc(s_query, h_keys).numpy()[0] for name, sc in scorers.items()}
for name, e in score_values.items():
    alpha_rnn = np.exp(e) / np.exp(e).sum()
    print(f"{name:<11} scores {e.round(3)}  weights {alpha_rnn.round(3)}")
assert np.allclose(score_values["dot"], [2, 0, 1])
assert np.allclose(score_values["scaled_dot"], np.array([2, 0, 1]) / np.sqrt(2))
assert np.allclose(score_values["bilinear"], [3, -1, 1])
assert np.allclose(score_values["additive"].round(2), [0.23, 0.0, 0.20], atol=1e-6)

# %% [markdown]
# The scaled dot product is the one self-attention uses below (and the reason for the
# $\sqrt d$ is the last section of this tutorial). The additive score pays for its flexibility
# with a small network evaluated for every (query, key) pair.
#
# ### Which decoder state asks the question? Bahdanau's wiring and Luong's
#
# There are two classic ways to wire attention into a recurrent decoder, and the difference
# decides what can run in parallel (the lecture's first question, Q1).
#
# * **The lecture's model** (Bahdanau et al.): at step $t$ the *previous* state asks,
#   $\alpha_{ti} \propto \exp a(\mathbf s_{t-1}, \mathbf h_i)$, and the context is fed **into** the
#   recurrence, $\mathbf s_t = f(\mathbf s_{t-1}, [\mathbf y_{t-1}; \mathbf c_t])$. So row $t+1$ of
#   the attention matrix needs $\mathbf s_t$, which needs $\mathbf c_t$, which needs all of row $t$:
#   the rows come out one at a time, even in training with teacher forcing.
# * **Luong et al.'s "global" attention** (the library's `minigrad.models.rnn_seq2seq`,
#   trained in tutorial 14): the *current* state asks, $\alpha_{ti} \propto \exp a(\mathbf s_t, \mathbf h_i)$, and
#   the context only feeds the output layer, not the recurrence. With teacher forcing all the
#   states $\mathbf s_1, \dots, \mathbf s_T$ come from one run of the decoder GRU over the known
#   target, and then every row of attention weights comes from one batched operation.
#
# (Within one row, both compute all $\alpha_{t1}, \dots, \alpha_{tn}$ at once, and both encoders
# are recurrent.) We build both decoders from a `GRUCell` and an additive score, then test the
# dependency directly: nudge the context $\mathbf c_{t'}$ of one step and record which rows of
# attention weights move.

# %%
from minigrad.functional import cat, stack


class AttentionDecoder(mg.nn.Module):
    """A GRU decoder with additive attention; `feed_context` True is the lecture's wiring."""

    def __init__(self, emb, hidden, feed_context):
        super().__init__()
        self.feed_context = feed_context
        self.cell = mg.nn.GRUCell(emb + (hidden if feed_context else 0), hidden)
        self.score = mg.nn.AdditiveScore(hidden, hidden)

    def forward(self, y, memory, s0, nudge=None):
        """y (B, T, E) target embeddings, memory (B, S, H), s0 (B, H) -> weights (B, T, S).
        `nudge` = (t, vector) adds the vector to the context of step t."""
        keys = self.score.prepare_keys(memory)
        s, states, rows = s0, [], []
        for t in range(y.shape[1]):
            if self.feed_context:                                # query: the previous state
                c, a = mg.nn.attend(self.score.score(s, keys), memory)
                if nudge is not None and nudge[0] == t:
                    c = c + nudge[1]
                s = self.cell(cat([y[:, t], c], dim=-1), s)
                rows.append(a)
            else:
                s = self.cell(y[:, t], s)                        # no attention inside the loop
                states.append(s)
        if self.feed_context:
            return stack(rows, dim=1)
        queries = stack(states, dim=1)                           # (B, T, H): all states first,
        c, weights = mg.nn.attend(self.score.score(queries, keys), memory)   # then one batched op
        if nudge is not None:
            c = c + nudge[1]                                     # feeds only the output layer
        return weights


T_dec, S_src, emb_d, hid = 6, 5, 8, 16
mg.manual_seed(5)
y_emb, memory_h, s_init = mg.randn(1, T_dec, emb_d), mg.randn(1, S_src, hid), mg.randn(1, hid)
dependence = {}
with mg.no_grad():
    for name, feed in (("lecture (s_(t-1) asks, c_t fed back)", True),
                       ("Luong (s_t asks, c_t to the output)", False)):
        dec = AttentionDecoder(emb_d, hid, feed)
        base = dec(y_emb, memory_h, s_init).numpy()[0]
        D_dep = np.zeros((T_dec, T_dec))
        for t_nudged in range(T_dec):
            moved = dec(y_emb, memory_h, s_init, nudge=(t_nudged, mg.ones(1, hid))).numpy()[0]
            D_dep[:, t_nudged] = np.abs(moved - base).max(-1)
        dependence[name] = D_dep
lecture_dep, luong_dep = dependence.values()
assert np.all(np.triu(lecture_dep) == 0) and np.all(lecture_dep[np.tril_indices(T_dec, -1)] > 0)
assert np.all(luong_dep == 0)
print("rows of attention that move when c_1 is nudged, lecture's model:",
      np.nonzero(lecture_dep[:, 0])[0].tolist(), "; Luong's:", np.nonzero(luong_dep[:, 0])[0].tolist())

fig, axes = plt.subplots(1, 2, figsize=(10, 4), layout="constrained")
for ax, (name, D_dep) in zip(axes, dependence.items()):
    im = ax.imshow(D_dep > 0, cmap="Reds", vmin=0, vmax=1)
    ax.set_title(name, fontsize=10)
    ax.set_xlabel("step t' whose context is nudged")
    ax.set_ylabel("row t of attention weights")
fig.suptitle("Does attention row t depend on the context of step t'? (red: yes)")
savefig(fig, "06_rnn_attention_dependence")

# %% [markdown]
# In the lecture's model every row depends on every earlier step, so with teacher forcing the
# decoder still makes $T$ attention computations one after another. In Luong's wiring nothing
# in the attention weights depends on an earlier context: one recurrent pass, then all rows at
# once. The recurrence remains, though (both the encoder and the decoder GRU go step by step),
# and removing it is exactly what the Transformer does: the rest of this tutorial.

# %% [markdown]
# ## The running example
#
# Five words, each embedded in $\mathbb{R}^3$. We stack the embeddings as the *rows* of a
# $(T, D) = (5, 3)$ matrix $X$. (The lecture stacks them as columns of $H$; rows are the
# convention of minigrad and PyTorch, and the two are transposes of each other.)

# %%
words = ["I", "enjoyed", "the", "movie", "transformers"]
X = np.array([[1, 0, 0],
              [0, 1, 0],
              [1, 1, 0],
              [1, 0, 1],
              [1, 1, 1]], dtype=np.float64)
T, D = X.shape
assert (T, D) == (5, 3)

# %% [markdown]
# ## Queries, keys and values
#
# Attention needs a pair of vectors: one that asks and one that is asked. In RNN attention the
# asker was the decoder state and the asked were the encoder states. Here one embedding has to
# play three roles, so three learned matrices turn it into three vectors:
#
# $$\mathbf{q}_j = W_Q \mathbf{h}_j \ \text{(query: what word $j$ looks for)},\quad
#   \mathbf{k}_j = W_K \mathbf{h}_j \ \text{(key: what word $j$ offers to be matched on)},\quad
#   \mathbf{v}_j = W_V \mathbf{h}_j \ \text{(value: what word $j$ hands over)}.$$
#
# As in the lecture, queries, keys and values are two-dimensional, so each $W$ is $(2, 3)$. The
# lecture leaves the entries to training; the small integers below are our own choice, picked
# so that the arithmetic is easy to follow.

# %%
W_Q = np.array([[1, 0, 1], [0, 1, 0]], dtype=np.float64)
W_K = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.float64)
W_V = np.array([[1, 1, 0], [0, 1, 1]], dtype=np.float64)

q = [W_Q @ h for h in X]  # one query per word
k = [W_K @ h for h in X]
v = [W_V @ h for h in X]
for word, qj, kj, vj in zip(words, q, k, v):
    print(f"{word:>13}: q = {qj}, k = {kj}, v = {vj}")

# %% [markdown]
# For "I" ($\mathbf{h}_1 = [1, 0, 0]$) this gives $\mathbf{q}_1 = [1, 0]$, $\mathbf{k}_1 = [0, 1]$
# and $\mathbf{v}_1 = [1, 0]$: each is just the first column of its matrix.

# %%
assert q[0].tolist() == [1, 0] and k[0].tolist() == [0, 1] and v[0].tolist() == [1, 0]

# %% [markdown]
# ## One output by hand: $\mathbf{z}_1$, the new vector for "I"
#
# Hold the query of "I" fixed and score it against every key with a dot product. Divide by
# $\sqrt{d_k}$ (here $d_k = 2$; the reason comes later), turn the scores into weights with a
# softmax, and mix the values with those weights:
#
# $$e_{1j} = \frac{\mathbf{q}_1 \cdot \mathbf{k}_j}{\sqrt{d_k}}, \qquad
#   \alpha_{1j} = \frac{\exp(e_{1j})}{\sum_{j'} \exp(e_{1j'})}, \qquad
#   \mathbf{z}_1 = \sum_j \alpha_{1j} \mathbf{v}_j .$$

# %%
d_k = 2
raw = [float(q[0] @ k[j]) for j in range(T)]
scores = [s / math.sqrt(d_k) for s in raw]
exps = [math.exp(s) for s in scores]
alpha = [e / sum(exps) for e in exps]
z1 = sum(a * vj for a, vj in zip(alpha, v))
for word, r, a in zip(words, raw, alpha):
    print(f"q_1 . k({word:>12}) = {r:.0f}   weight = {a:.4f}")
print("z_1 =", z1)

# %% [markdown]
# The raw scores are $[0, 1, 1, 1, 2]$: "I" matches "transformers" best. After the softmax,
# "transformers" gets weight $\approx 0.367$ and "I" itself $\approx 0.089$, and
# $\mathbf{z}_1 \approx [1.55, 1.28]$. The weights sum to 1, so $\mathbf{z}_1$ is a weighted
# average of the five value vectors.

# %%
assert raw == [0, 1, 1, 1, 2]
assert round(alpha[4], 3) == 0.367 and round(alpha[0], 3) == 0.089
assert math.isclose(sum(alpha), 1.0)
assert np.round(z1, 2).tolist() == [1.55, 1.28]

# %% [markdown]
# ## All outputs at once
#
# Doing word 1, then word 2, then word 3 would bring the RNN's sequential loop back. But every
# step above is linear algebra, so it stacks. With the embeddings as rows of $X$:
#
# $$Q = X W_Q^\top,\quad K = X W_K^\top,\quad V = X W_V^\top \qquad \text{each } (T, d_k),$$
#
# $$Z = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}}\Big)\, V .$$
#
# $QK^\top$ is $(T, T)$: entry $(i, j)$ is $\mathbf{q}_i \cdot \mathbf{k}_j$. The softmax runs
# along each row, and $Z$ is $(T, d_k)$ with row $i$ holding $\mathbf{z}_i$. This is the
# lecture's $\operatorname{softmax}(Q^\top K/\sqrt{d_k})V^\top$ written for row-stacked
# matrices.

# %%
def softmax_rows(s):
    e = np.exp(s - s.max(axis=-1, keepdims=True))  # subtracting the row max avoids overflow
    return e / e.sum(axis=-1, keepdims=True)


Q, K, V = X @ W_Q.T, X @ W_K.T, X @ W_V.T
A = softmax_rows(Q @ K.T / math.sqrt(d_k))  # (T, T) attention weights
Z = A @ V                                   # (T, d_k) outputs
print("A =\n", A)
print("Z =\n", Z)
assert A.shape == (T, T) and Z.shape == (T, d_k)
assert np.allclose(A[0], alpha) and np.allclose(Z[0], z1)  # row 1 is what we did by hand
assert np.allclose(A.sum(axis=1), 1.0)

# %% [markdown]
# Why is row $i$ of $Z$ the right thing? Row $i$ of a matrix product is a combination of the
# rows of the right-hand factor, weighted by row $i$ of the left-hand factor. Here that reads
# $\mathbf{z}_i = \sum_j \alpha_{ij}\mathbf{v}_j$, exactly the one-word formula. Check it for
# "enjoyed", word 2:

# %%
z2_by_rows = sum(A[1, j] * V[j] for j in range(T))
assert np.allclose(Z[1], z2_by_rows)

# %% [markdown]
# The whole block is four steps, MatMul, Scale, Softmax, MatMul, and with the three projections
# in front it is called one **head** of attention. Here are its weights: row $i$ is the
# distribution of word $i$'s attention over the sentence.

# %%
fig, ax = plt.subplots(figsize=(5.5, 4.5))
im = ax.imshow(A, cmap="viridis", vmin=0, vmax=A.max())
ax.set_xticks(range(T), words, rotation=30)
ax.set_yticks(range(T), words)
for i in range(T):
    for j in range(T):
        ax.text(j, i, f"{A[i, j]:.2f}", ha="center", va="center", color="w", fontsize=8)
ax.set_title("Self-attention weights, running example")
ax.set_xlabel("key (attended-to word)")
ax.set_ylabel("query (word being updated)")
fig.colorbar(im, ax=ax, label="weight")
savefig(fig, "06_attention_weights")

# %% [markdown]
# ## The same thing with minigrad
#
# `scaled_dot_product_attention(query, key, value)` takes tensors shaped $(\dots, T, d_k)$ and
# returns $(\dots, T, d_v)$. Leading dimensions are batch dimensions, so a batch of sentences
# of shape $(B, T, d_k)$ is handled in one call.

# %%
Qt, Kt, Vt = (mg.tensor(M, dtype=mg.float64) for M in (Q, K, V))
Z_mg = F.scaled_dot_product_attention(Qt, Kt, Vt)
assert np.allclose(Z_mg.numpy(), Z, atol=1e-12)

batch = mg.tensor(np.stack([Q, Q]), dtype=mg.float64)  # (B, T, d_k) = (2, 5, 2)
Z_batch = F.scaled_dot_product_attention(batch, mg.tensor(np.stack([K, K])),
                                         mg.tensor(np.stack([V, V])))
assert Z_batch.shape == (2, T, d_k) and np.allclose(Z_batch.numpy()[1], Z, atol=1e-6)
print("scaled_dot_product_attention agrees with the formula")

# %% [markdown]
# Self-attention is also differentiable end to end, so $W_Q$, $W_K$ and $W_V$ can be learned:
# autograd (tutorial 2) gives their gradients through the whole formula.

# %%
Wq_t = mg.tensor(W_Q, dtype=mg.float64, requires_grad=True)
Xt = mg.tensor(X, dtype=mg.float64)
out = F.scaled_dot_product_attention(Xt @ Wq_t.T, Kt, Vt)
out.sum().backward()
assert Wq_t.grad.shape == (2, 3)
assert mg.autograd.gradcheck(lambda w: F.scaled_dot_product_attention(Xt @ w.T, Kt, Vt),
                             [mg.tensor(W_Q, dtype=mg.float64, requires_grad=True)])

# %% [markdown]
# ## The head as a computation graph
#
# Written with minigrad tensors, the head you just built by hand is a short chain of recorded
# operations: two matrix products of the projections, the product $QK^\top$, the scale, the
# softmax, and the product with $V$. `minigrad.viz.draw_graph` draws what autograd recorded
# (blue: the inputs that ask for gradients; grey: operations, with the shape they produce).

# %%
X_leaf = mg.tensor(X, dtype=mg.float64)
Wq_leaf, Wk_leaf, Wv_leaf = (mg.tensor(M, dtype=mg.float64, requires_grad=True)
                             for M in (W_Q, W_K, W_V))
Q_g, K_g, V_g = X_leaf @ Wq_leaf.T, X_leaf @ Wk_leaf.T, X_leaf @ Wv_leaf.T
Z_g = ((Q_g @ K_g.T) * (1 / math.sqrt(d_k))).softmax(-1) @ V_g      # MatMul, scale, softmax, MatMul
assert np.allclose(Z_g.numpy(), Z)
head_graph = draw_graph(Z_g, params={"W_Q": Wq_leaf, "W_K": Wk_leaf, "W_V": Wv_leaf})
for op in ("MatMul", "Mul", "Softmax"):
    assert op in head_graph.source, op
dot_path = out_path("06_head_graph.dot")
with open(dot_path, "w") as f:
    f.write(head_graph.source)
if shutil.which("dot"):
    show_image(render_graph(head_graph, out_path("06_head_graph.png"), format="png"))
else:
    print("Graphviz `dot` not found: only", dot_path, "was written")

# %% [markdown]
# ## Why divide by $\sqrt{d_k}$?
#
# The first lecture only names the scale; the second lecture (and the original paper) gives the
# reason. A dot product in $d_k$ dimensions is a sum of $d_k$ terms. If the entries of
# $\mathbf{q}$ and $\mathbf{k}$ are independent with mean 0 and variance 1, each term has
# variance 1, so the sum has variance $d_k$ and a spread (standard deviation) of $\sqrt{d_k}$.
# Scores that spread widely push the softmax towards a vector of one 1 and zeros, a degenerate
# distribution where its gradient almost vanishes. Dividing by $\sqrt{d_k}$ brings the variance
# back to 1 whatever the dimension, and the weights stay a proper spread-out distribution. A quick simulation with $d_k = 64$:

# %%
rng = np.random.default_rng(0)
n_samples = 4_000 if SMALL else 40_000
qs, ks = rng.standard_normal((2, n_samples, 64))
dots = (qs * ks).sum(axis=1)
print(f"variance of q.k: {dots.var():.1f};  after dividing by 8: {(dots / 8).var():.3f}")
assert 0.85 * 64 < dots.var() < 1.15 * 64
assert 0.85 < (dots / 8).var() < 1.15

# %% [markdown]
# The effect on the weights: with ten keys, the largest softmax weight of a row (averaged over
# many random rows) as $d_k$ grows. Without the scale a single key soon takes nearly all the
# weight; with it the rows stay spread out.

# %%
dims = [2, 8, 32, 128, 512]
n_rows = 200 if SMALL else 2_000


def mean_max_weight(d, scaled):
    qv = rng.standard_normal((n_rows, 1, d))
    kv = rng.standard_normal((n_rows, 10, d))
    s = (qv * kv).sum(-1) / (math.sqrt(d) if scaled else 1.0)
    return softmax_rows(s).max(axis=1).mean()


unscaled = [mean_max_weight(d, False) for d in dims]
scaled = [mean_max_weight(d, True) for d in dims]
fig, ax = plt.subplots(figsize=(6, 4))
ax.semilogx(dims, unscaled, "o-", label="softmax(q.k)")
ax.semilogx(dims, scaled, "s-", label="softmax(q.k / sqrt(d_k))")
ax.set_xticks(dims, [str(d) for d in dims])
ax.set_title("Softmax saturation with and without the 1/sqrt(d_k) scale")
ax.set_xlabel("key dimension d_k")
ax.set_ylabel("mean of the largest weight (10 keys)")
ax.set_ylim(0, 1.05)
ax.legend()
savefig(fig, "06_scale_saturation")
print("unscaled:", np.round(unscaled, 3), " scaled:", np.round(scaled, 3))

# %% [markdown]
# At $d_k = 512$ the unscaled rows put more than 0.9 of their weight on one key on average,
# while the scaled rows stay below 0.5.

# %%
assert unscaled[-1] > 0.9 and scaled[-1] < 0.5

# %% [markdown]
# ## Exercise: one head of attention
#
# Write `attention(Q, K, V)` for NumPy arrays $Q$ $(T, d_k)$, $K$ $(S, d_k)$, $V$ $(S, d_v)$:
# $\operatorname{softmax}(QK^\top/\sqrt{d_k})\,V$, with the softmax along each row.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_attention


def attention(Q, K, V):
    """softmax(Q K^T / sqrt(d_k)) V for Q (T, d_k), K (S, d_k), V (S, d_v) -> (T, d_v)."""
    raise NotImplementedError


check(check_attention, attention);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def attention(Q, K, V):
    """softmax(Q K^T / sqrt(d_k)) V for Q (T, d_k), K (S, d_k), V (S, d_v) -> (T, d_v)."""
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
    weights /= weights.sum(axis=-1, keepdims=True)
    return weights @ V


assert check(check_attention, attention)

# %% [markdown]
# ## Test yourself
#
# **1. (The lecture's Q2.)** Two words have $\mathbf{q}_1 = [1, 0]$, $\mathbf{k}_1 = [1, 0]$,
# $\mathbf{k}_2 = [0, 1]$, $\mathbf{v}_1 = [2, 0]$, $\mathbf{v}_2 = [0, 2]$ and $d_k = 2$.
# Compute $\mathbf{z}_1$.
#
# <details><summary>Answer</summary>
#
# The question gives the vectors directly. One way to produce them from the running
# example is to take its first two words, "I" $= [1, 0, 0]$ and "enjoyed" $= [0, 1, 0]$, with
# $W_Q = W_K = \begin{bmatrix}1&0&0\\0&1&0\end{bmatrix}$ and $W_V = 2W_Q$.
# The scores are $1$ and $0$, divided by $\sqrt 2$ they are $0.707$ and $0$; the softmax gives
# $\alpha_{11} = e^{0.707}/(e^{0.707} + 1) = 2.028/3.028 = 0.670$ and $\alpha_{12} = 0.330$;
# so $\mathbf{z}_1 = 0.670\,[2, 0] + 0.330\,[0, 2] = [1.34, 0.66]$.
#
# </details>

# %%
H2 = X[:2]                                       # "I", "enjoyed"
W_Q2 = np.array([[1, 0, 0], [0, 1, 0]], dtype=np.float64)
W_K2, W_V2 = W_Q2, 2 * W_Q2
Q2, K2, V2 = H2 @ W_Q2.T, H2 @ W_K2.T, H2 @ W_V2.T
assert Q2[0].tolist() == [1, 0] and K2.tolist() == [[1, 0], [0, 1]]
assert V2.tolist() == [[2, 0], [0, 2]]
e11 = (Q2[0] @ K2[0]) / math.sqrt(2)
assert round(e11, 3) == 0.707 and Q2[0] @ K2[1] == 0
assert round(math.exp(e11), 3) == 2.028 and round(math.exp(e11) + 1, 3) == 3.028
a11 = math.exp(e11) / (math.exp(e11) + 1)
assert round(a11, 3) == 0.670 and round(1 - a11, 3) == 0.330
z1_q2 = F.scaled_dot_product_attention(*(mg.tensor(M, dtype=mg.float64) for M in (Q2, K2, V2)))
print("z_1 =", z1_q2.numpy()[0])
assert np.round(z1_q2.numpy()[0], 2).tolist() == [1.34, 0.66]

# %% [markdown]
# **2.** A sentence of $T = 7$ words goes through one head with $d_k = d_v = 64$. What are the
# shapes of $QK^\top$, of the weights and of $Z$? Does anything depend on $T$ besides these
# shapes?
#
# <details><summary>Answer</summary>
#
# $QK^\top$ and the weights are $(7, 7)$, $Z$ is $(7, 64)$. The weight matrices
# $W_Q, W_K, W_V$ are $(64, D)$ whatever $T$ is, so the same head serves sentences of any length.
#
# </details>

# %%
Q7, K7, V7 = (mg.randn(7, 64) for _ in range(3))
scores7 = Q7 @ K7.T
assert scores7.shape == (7, 7)
assert F.scaled_dot_product_attention(Q7, K7, V7).shape == (7, 64)

# %% [markdown]
# **3.** If every key is the same vector, what does self-attention return for each word?
#
# <details><summary>Answer</summary>
#
# Every score in a row is equal, so every weight is $1/T$ and every output is the plain
# average of the values, identical for all words: the queries no longer matter.
#
# </details>

# %%
K_same = np.tile(K[2], (T, 1))
Z_same = F.scaled_dot_product_attention(Qt, mg.tensor(K_same, dtype=mg.float64), Vt).numpy()
assert np.allclose(Z_same, V.mean(axis=0))
print("all exercises check out")
