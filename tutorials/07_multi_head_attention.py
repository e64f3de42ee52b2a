# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 7. Multi-head attention
#
# One head of self-attention (tutorial 6) gives every word one way of gathering context. A word
# often needs several at once. In "The animal didn't cross the street because it was too
# tired", the word "it" should link to "animal" (what it refers to) and also to "was" (the verb
# it is the subject of). One softmax row can split its weight between two words, but then it
# returns a blend of their two value vectors, one averaged vector in which neither link can be
# read separately, and a second link costs weight taken from the first.
#
# The fix mirrors a CNN layer with many filters: run several heads side by side, each with its
# own $W_Q, W_K, W_V$, and combine their outputs. Nobody tells a head what to look for; having
# separate parameters only gives it the freedom to specialise if that lowers the loss.
#
# This tutorial builds multi-head attention by hand, checks it against
# `minigrad.nn.MultiheadAttention`, draws each head's weights, and counts the parameters of the
# lecture's sublayer.

# %%

from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F

# %% [markdown]
# ## Keeping the sizes in check
#
# In the paper (and the lecture) the model dimension is $d_{model} = 512$ and there are
# $h = 8$ heads. If each head returned 512 numbers per word, the concatenation would have
# $8 \times 512 = 4096$, and the next layer would need a matrix eight times wider. Instead each
# head projects *down*: $W_Q^i, W_K^i, W_V^i$ are $(64, 512)$, each head returns 64 numbers per
# word, and the eight heads concatenate back to exactly 512.

# %%
d_model, n_heads = 512, 8
d_k = d_model // n_heads
assert d_k == 64 and n_heads * d_k == d_model and n_heads * d_model == 4096

# %% [markdown]
# The full recipe, for row-stacked inputs $X$ of shape $(T, d_{model})$:
#
# $$\text{head}_i = \operatorname{softmax}\!\Big(\frac{(X W_Q^{i\top})(X W_K^{i\top})^\top}{\sqrt{d_k}}\Big)\,X W_V^{i\top}
#   \qquad (T, d_k)$$
#
# $$\operatorname{MultiHead}(X) = \big[\text{head}_1, \dots, \text{head}_h\big]\, W_O^\top
#   \qquad (T, h\,d_k) \to (T, d_{model})$$
#
# The brackets are a concatenation *per word*: row $t$ of the result joins row $t$ of every
# head. $T$ vectors go in and $T$ vectors come out.

# %% [markdown]
# ## A small layer to look inside
#
# Five words with random 8-dimensional embeddings (stand-ins for learned ones), and 2 heads of
# 4 dimensions each. `batch_first=True` makes the layout
# $(B, T, D)$, which is what we use throughout; without it the layer expects $(T, B, D)$, as in
# PyTorch. We feed the same tensor as query, key and value, which is what makes it
# *self*-attention.

# %%
words = ["I", "enjoyed", "the", "movie", "transformers"]
E, H = 8, 2
hd = E // H
mg.manual_seed(0)
mha = nn.MultiheadAttention(E, H, batch_first=True)
x = mg.randn(1, len(words), E) * 2.0  # (B, T, E); the scale makes the heads' choices visible
out, w_heads = mha(x, x, x, average_attn_weights=False)
print("output", out.shape, " per-head weights", w_heads.shape)
assert out.shape == (1, 5, E) and w_heads.shape == (1, H, 5, 5)

# %% [markdown]
# ## Where the heads' matrices live
#
# The layer keeps $W_Q$, $W_K$ and $W_V$ for all heads in one $(3E, E)$ matrix,
# `in_proj_weight`. Rows $[0, E)$ are the queries' projection, $[E, 2E)$ the keys' and
# $[2E, 3E)$ the values'. Inside each block, head $i$ owns rows $[i\,d_k, (i+1)\,d_k)$. The
# biases in `in_proj_bias` are split the same way, and `out_proj` is $W_O$.

# %%
Win = mha.in_proj_weight.numpy()
bin_ = mha.in_proj_bias.numpy()
print("in_proj_weight", Win.shape, " out_proj.weight", mha.out_proj.weight.shape)
assert Win.shape == (3 * E, E)


def head_matrices(i):
    """(W_Q^i, b_Q^i), (W_K^i, b_K^i), (W_V^i, b_V^i) of head i, sliced out of in_proj."""
    rows = [slice(block * E + i * hd, block * E + (i + 1) * hd) for block in range(3)]
    return [(Win[r], bin_[r]) for r in rows]


# %% [markdown]
# Now compute every head ourselves with `scaled_dot_product_attention`, concatenate, and apply
# $W_O$.

# %%
X = x.numpy()[0]  # (T, E)
head_outputs, head_weights = [], []
for i in range(H):
    (Wq, bq), (Wk, bk), (Wv, bv) = head_matrices(i)
    Qi, Ki, Vi = X @ Wq.T + bq, X @ Wk.T + bk, X @ Wv.T + bv  # each (T, d_k)
    scores = Qi @ Ki.T / np.sqrt(hd)
    Ai = np.exp(scores - scores.max(1, keepdims=True))
    Ai /= Ai.sum(1, keepdims=True)
    head_weights.append(Ai)
    head_outputs.append(F.scaled_dot_product_attention(mg.tensor(Qi), mg.tensor(Ki),
                                                       mg.tensor(Vi)).numpy())
concat = np.concatenate(head_outputs, axis=1)  # (T, H * d_k): per word, head 1 then head 2
Wo, bo = mha.out_proj.weight.numpy(), mha.out_proj.bias.numpy()
by_hand = concat @ Wo.T + bo
print("concatenation", concat.shape, " output", by_hand.shape)
assert concat.shape == (5, E)
assert np.allclose(by_hand, out.numpy()[0], atol=1e-5)
for i in range(H):
    assert np.allclose(head_weights[i], w_heads.numpy()[0, i], atol=1e-5)
print("hand-built multi-head attention matches nn.MultiheadAttention")

# %% [markdown]
# The layer does not loop over heads. It reshapes the projected $(B, T, E)$ tensor to
# $(B, T, H, d_k)$ and moves the head axis forward to get $(B, H, T, d_k)$. The heads then
# become one more batch dimension, and a single call computes them all in parallel.

# %%
Xt = mg.tensor(X[None])                                                  # (1, T, E)
Q_all = F.linear(Xt, mg.tensor(Win[:E]), mg.tensor(bin_[:E]))            # (1, T, E)
K_all = F.linear(Xt, mg.tensor(Win[E:2 * E]), mg.tensor(bin_[E:2 * E]))
V_all = F.linear(Xt, mg.tensor(Win[2 * E:]), mg.tensor(bin_[2 * E:]))


def split_heads(t):
    B, T, _ = t.shape
    return t.reshape(B, T, H, hd).permute(0, 2, 1, 3)  # (B, H, T, d_k)


Z_all = F.scaled_dot_product_attention(split_heads(Q_all), split_heads(K_all), split_heads(V_all))
assert Z_all.shape == (1, H, 5, hd)
for i in range(H):
    assert np.allclose(Z_all.numpy()[0, i], head_outputs[i], atol=1e-5)

# %% [markdown]
# The merge is the split run backwards: move the head axis back behind the positions,
# $(B, H, T, d_k) \to (B, T, H, d_k)$, and flatten the last two axes to $(B, T, E)$. Row $t$
# then holds head 1's output for word $t$, then head 2's: the concatenation above. Below, the
# shapes of the whole trip, with each cell labelled by the feature of $Q$ it came from
# (colour: the head that owns it).

# %%
def merge_heads(t):
    B, _, T, _ = t.shape
    return t.permute(0, 2, 1, 3).reshape(B, T, H * hd)   # (B, T, E)


assert np.allclose(merge_heads(Z_all).numpy()[0], concat, atol=1e-5)
assert np.array_equal(merge_heads(split_heads(Q_all)).numpy(), Q_all.numpy())   # a round trip

feature = np.broadcast_to(np.arange(E), (len(words), E))          # which feature each cell is
split_feature = feature.reshape(len(words), H, hd).transpose(1, 0, 2)   # (H, T, d_k)
head_colors = ["#f4c7a1", "#a9cce3"]


def draw_block(ax, x0, labels, head_of, title):
    """A (T, n) grid of cells at x0, each showing a label, coloured by its head."""
    for t in range(labels.shape[0]):
        for f in range(labels.shape[1]):
            ax.add_patch(plt.Rectangle((x0 + f, -t), 0.95, 0.95, fc=head_colors[head_of[t, f]],
                                       ec="0.4"))
            ax.text(x0 + f + 0.47, -t + 0.47, labels[t, f], ha="center", va="center", fontsize=7)
    ax.text(x0 + labels.shape[1] / 2, 1.4, title, ha="center", fontsize=9)


fig, ax = plt.subplots(figsize=(15, 3.6))
x0 = 0
draw_block(ax, x0, feature.astype(str), feature // hd, f"Q: (T, E) = ({len(words)}, {E})")
x0 += E + 2.5
ax.annotate("", (x0 - 0.5, -2), (x0 - 2, -2), arrowprops=dict(arrowstyle="->"))
ax.text(x0 - 1.25, -2.9, "reshape\n(T, H, d_k)\npermute", ha="center", fontsize=7)
for h in range(H):
    draw_block(ax, x0, split_feature[h].astype(str), np.full((len(words), hd), h),
               f"head {h + 1}: (T, d_k)")
    x0 += hd + 0.8
ax.text(x0 - 1.5 * (hd + 0.8) + 0.4, 2.1, f"(H, T, d_k) = ({H}, {len(words)}, {hd})",
        ha="center", fontsize=9)
x0 += 1.7
ax.annotate("", (x0 - 0.5, -2), (x0 - 2, -2), arrowprops=dict(arrowstyle="->"))
ax.text(x0 - 1.25, -2.9, "attention\nper head", ha="center", fontsize=7)
for h in range(H):
    draw_block(ax, x0, np.full((len(words), hd), f"z{h + 1}"), np.full((len(words), hd), h),
               f"Z_{h + 1}: (T, d_k)")
    x0 += hd + 0.8
x0 += 1.7
ax.annotate("", (x0 - 0.5, -2), (x0 - 2, -2), arrowprops=dict(arrowstyle="->"))
ax.text(x0 - 1.25, -2.9, "permute\nreshape", ha="center", fontsize=7)
merged_head = np.broadcast_to(np.arange(E) // hd, (len(words), E))
draw_block(ax, x0, np.array([[f"z{h + 1}" for h in row] for row in merged_head]), merged_head,
           f"concat: (T, E); then W_O")
for t, w in enumerate(words):
    ax.text(-0.3, -t + 0.47, w, ha="right", va="center", fontsize=8)
ax.set_xlim(-3, x0 + E + 0.5)
ax.set_ylim(-len(words) - 0.3, 2.5)
ax.axis("off")
fig.suptitle("Splitting into heads and merging them back only moves numbers; "
             "the heads compute in between", y=1.02)
savefig(fig, "07_head_split_merge")
assert split_feature.shape == (H, len(words), hd) and (split_feature[1] >= hd).all()

# %% [markdown]
# ## Each head's weights
#
# With `average_attn_weights=False` the layer returns one $(T, T)$ map per head, shape
# $(B, H, T, T)$; by default it returns their average, $(B, T, T)$. These heads are untrained,
# so their patterns mean nothing yet, but they already differ, because each head has its own
# matrices.

# %%
w_avg = mha(x, x, x)[1]
assert w_avg.shape == (1, 5, 5)
assert np.allclose(w_avg.numpy()[0], w_heads.numpy()[0].mean(axis=0), atol=1e-6)
assert np.abs(w_heads.numpy()[0, 0] - w_heads.numpy()[0, 1]).max() > 0.05

maps = [w_heads.numpy()[0, i] for i in range(H)] + [w_avg.numpy()[0]]
titles = [f"head {i + 1}" for i in range(H)] + ["average of the heads"]
fig, axes = plt.subplots(1, len(maps), figsize=(4.2 * len(maps), 4), layout="constrained")
for ax, m, title in zip(axes, maps, titles):
    im = ax.imshow(m, cmap="viridis", vmin=0, vmax=1)
    ax.set_xticks(range(5), words, rotation=35, fontsize=8)
    ax.set_yticks(range(5), words, fontsize=8)
    ax.set_title(title)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
fig.colorbar(im, ax=axes, label="attention weight", shrink=0.9)
fig.suptitle("Per-head attention weights of an untrained 2-head layer")
savefig(fig, "07_head_weights")

# %% [markdown]
# ## Counting the lecture's parameters
#
# For the lecture's sublayer ($d_{model} = 512$, 8 heads of 64, projection biases not counted):
#
# | part | shape | count |
# |---|---|---|
# | $W_Q^i$, one head | $64 \times 512$ | 32,768 |
# | $W_Q$, all 8 heads | $8 \times 64 \times 512$ | 262,144 |
# | $W_K$, all 8 heads | $8 \times 64 \times 512$ | 262,144 |
# | $W_V$, all 8 heads | $8 \times 64 \times 512$ | 262,144 |
# | $W_O$ | $512 \times 512$ | 262,144 |
# | total | | 1,048,576 |
#
# (One slide prints 32,178 for a single head's $W_Q$; $64 \times 512$ is 32,768.) The total is
# $4 \times 512^2 = 2^{20}$.

# %%
one_head = d_k * d_model
per_role = n_heads * one_head
W_O = d_model * d_model
total = 3 * per_role + W_O
print(f"one head {one_head:,}  per role {per_role:,}  W_O {W_O:,}  total {total:,}")
assert one_head == 32_768 and per_role == 262_144 and W_O == 262_144
assert total == 1_048_576 == 4 * 512 ** 2 == 2 ** 20

# %% [markdown]
# `MultiheadAttention(512, 8, bias=False)` stores the same numbers: a $(1536, 512)$
# `in_proj_weight`, which is the three $(512, 512)$ blocks of the table, and a $(512, 512)$
# `out_proj.weight`.

# %%
big = nn.MultiheadAttention(512, 8, bias=False)
big.summary()
shapes = {name: tuple(p.shape) for name, p in big.named_parameters()}
assert shapes == {"in_proj_weight": (1536, 512), "out_proj.weight": (512, 512)}
assert big.num_parameters() == total == 1_048_576

# %% [markdown]
# With `bias=True` (the default) the layer adds a bias of 512 for each of $W_Q$, $W_K$, $W_V$
# and $W_O$, 2,048 numbers more.

# %%
assert nn.MultiheadAttention(512, 8).num_parameters() == 1_048_576 + 4 * 512 == 1_050_624

# %% [markdown]
# ## Three ways to combine heads, and a shared key/value transform
#
# The second lecture lists three ways to merge the $h$ head outputs of a word into one vector:
#
# 1. **average** them: the result has one head's width, and the heads become interchangeable
#    (swapping two heads changes nothing, so the next layer cannot tell which head said what);
# 2. **concatenate** them: nothing is lost, but the width is $h$ times one head's;
# 3. **concatenate, then project** with a learned $W_O$ to any width we like: the Transformer's
#    choice, with $h \cdot d_k = d_{model}$ so that the width comes back to $d_{model}$.
#
# It also mentions a saving: let the keys and the values share one transform, $W_K = W_V$, which
# removes one of the three projection matrices. The comparison below uses the lecture's sizes
# ($d_{model} = 512$, 8 heads of 64) for the counts, and our small layer for the behaviour.

# %%
def combine(head_outs, how, W_O=None):
    """head_outs: list of h arrays (T, d_k) -> (T, d_k) averaged, or (T, h d_k) concatenated [and projected]."""
    if how == "average":
        return np.mean(head_outs, axis=0)
    cat = np.concatenate(head_outs, axis=1)
    return cat if how == "concatenate" else cat @ W_O.T


widths = {how: combine(head_outputs, how, Wo).shape[1]
          for how in ("average", "concatenate", "concatenate + W_O")}
print("output width per word:", widths)
assert widths == {"average": hd, "concatenate": H * hd, "concatenate + W_O": E}
swapped = head_outputs[::-1]
assert np.allclose(combine(swapped, "average"), combine(head_outputs, "average"))
assert not np.allclose(combine(swapped, "concatenate"), combine(head_outputs, "concatenate"))

# parameter counts at the lecture's size (no biases)
per_matrix = n_heads * d_k * d_model                        # one role, all heads: 262,144
options = {"average": 3 * per_matrix,
           "concatenate": 3 * per_matrix,
           "concatenate + W_O": 3 * per_matrix + d_model * d_model,
           "shared W_K = W_V, + W_O": 2 * per_matrix + d_model * d_model}
for name, n in options.items():
    print(f"{name:<26} {n:>10,}")
assert options["concatenate + W_O"] == 1_048_576 and options["shared W_K = W_V, + W_O"] == 786_432

fig, ax = plt.subplots(figsize=(7, 3))
ax.barh(list(options), list(options.values()), color=["C0", "C0", "C1", "C2"])
ax.invert_yaxis()
ax.set_xlabel("parameters of the attention sublayer (d_model 512, 8 heads, no biases)")
ax.set_title("Combining heads: what each option costs")
savefig(fig, "07_combining_heads")

# %% [markdown]
# With a shared transform each head's key and value are the same vector: a head then adds up
# exactly the vectors it matched on. Averaging the heads of our small layer (with its own
# $W_K$ as the shared matrix) shows the difference is real:

# %%
(Wq0, bq0), (Wk0, bk0), _ = head_matrices(0)
K_shared = X @ Wk0.T + bk0
Z_shared = F.scaled_dot_product_attention(mg.tensor(X @ Wq0.T + bq0), mg.tensor(K_shared),
                                          mg.tensor(K_shared)).numpy()
assert Z_shared.shape == head_outputs[0].shape and not np.allclose(Z_shared, head_outputs[0])

# %% [markdown]
# ## Keeping the heads apart: the diversity regulariser
#
# Nothing in the loss forces the heads to differ; several may end up looking at the same words.
# The second lecture quotes a penalty that discourages it (Lin et al., 2017). For one query
# word, stack the $h$ heads' weight rows into an $(h, S)$ matrix $A$ and add to the loss
#
# $$P = \lVert A A^\top - I \rVert_F^2 = \sum_{j} \big(\lVert \boldsymbol\alpha_j \rVert^2 - 1\big)^2
#   + \sum_{j \ne k} \big(\boldsymbol\alpha_j \cdot \boldsymbol\alpha_k\big)^2 .$$
#
# The off-diagonal terms push different heads towards disjoint keys (non-negative rows with a
# zero dot product share no key); the diagonal terms push each head's squared norm to 1, which
# for a row of weights summing to 1 means all the weight on one key.
#
# By hand for two heads over four keys: $\boldsymbol\alpha_1 = [0.5, 0.5, 0, 0]$ and
# $\boldsymbol\alpha_2 = [0, 0.5, 0.5, 0]$. Each squared norm is $0.5$ and the dot product
# $0.25$, so $P = 2(0.5 - 1)^2 + 2 \cdot 0.25^2 = 0.5 + 0.125 = 0.625$. Two heads on the same
# single key give $P = 2$; two heads on different single keys give $P = 0$.

# %%
A_two = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.5, 0.5, 0.0]])
gram = A_two @ A_two.T
print("A A^T =\n", gram)
P_by_hand = ((gram - np.eye(2)) ** 2).sum()
assert np.allclose(gram, [[0.5, 0.25], [0.25, 0.5]]) and np.isclose(P_by_hand, 0.625)
assert np.isclose(nn.diversity_penalty(mg.tensor(A_two)).item(), 0.625)
assert np.isclose(nn.diversity_penalty(mg.tensor([[0.0, 1, 0, 0], [0, 1, 0, 0]])).item(), 2.0)
assert nn.diversity_penalty(mg.tensor([[1.0, 0, 0, 0], [0, 0, 1, 0]])).item() == 0.0

# %% [markdown]
# Now train a 2-head layer with and without the penalty. The task needs two places per word:
# the output at position $t$ must be the sum of the contents at $t-1$ and $t+1$ (wrapping
# around). Each input is a random content vector with a one-hot position appended, so the heads
# can find neighbours. `MultiheadAttention(..., diversity=True)` stores the penalty of its last
# call, averaged over the queries, in `diversity_penalty`; we add $0.1\,P$ to the squared error.

# %%
def train_two_heads(lam, steps, seed=0, T_=8, dc=8, batch=32):
    mg.manual_seed(seed)
    rng_ = np.random.default_rng(seed)
    positions = np.broadcast_to(np.eye(T_, dtype=np.float32), (batch, T_, T_))
    attn = nn.MultiheadAttention(dc + T_, 2, batch_first=True, diversity=True)
    readout = nn.Linear(dc + T_, dc)
    opt = mg.optim.Adam(list(attn.parameters()) + list(readout.parameters()), lr=0.02)
    for _ in range(steps):
        content = rng_.standard_normal((batch, T_, dc)).astype(np.float32)
        xin = mg.tensor(np.concatenate([content, positions], -1))
        target = mg.tensor(np.roll(content, 1, axis=1) + np.roll(content, -1, axis=1))
        out_, w_ = attn(xin, xin, xin, average_attn_weights=False)
        mse = ((readout(out_) - target) ** 2).mean()
        loss = mse + lam * attn.diversity_penalty
        opt.zero_grad()
        loss.backward()
        opt.step()
    return dict(mse=mse.item(), penalty=attn.diversity_penalty.item(), weights=w_.numpy()[0])


div_steps = 150 if SMALL else 300
runs = {"without the penalty": train_two_heads(0.0, div_steps),
        "with 0.1 x penalty": train_two_heads(0.1, div_steps)}
for name, r in runs.items():
    print(f"{name:<20} squared error {r['mse']:.4f}, penalty {r['penalty']:.3f}")
assert runs["with 0.1 x penalty"]["penalty"] < 0.1 < runs["without the penalty"]["penalty"]

fig, axes = plt.subplots(2, 2, figsize=(8, 7.5), layout="constrained")
for row, (name, r) in zip(axes, runs.items()):
    for h, ax in enumerate(row):
        im = ax.imshow(r["weights"][h], cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"{name}\nhead {h + 1}", fontsize=9)
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
fig.colorbar(im, ax=axes, label="weight", shrink=0.8)
fig.suptitle("Two trained heads, task: output_t = x_(t-1) + x_(t+1)")
savefig(fig, "07_diversity_heads")

# %% [markdown]
# Without the penalty both heads learn much the same thing: each spreads a row's weight over
# the two neighbours, neither neighbour getting more than about 0.7, so every row is a blend
# and the penalty stays near 1. With it, at every query position the two heads split the job:
# one puts (almost) all its weight on one neighbour, the other on the other neighbour, and the
# penalty is near 0. Both solve the task; the penalty decides
# *how*. (A regulariser expresses a preference, which matters most when the data alone does not
# settle what each head should do.)

# %%
w_with = runs["with 0.1 x penalty"]["weights"]                # (heads, T, T)
T_task = w_with.shape[-1]
for t_ in range(T_task):
    picked = {int(w_with[0, t_].argmax()), int(w_with[1, t_].argmax())}
    assert picked == {(t_ - 1) % T_task, (t_ + 1) % T_task}, (t_, picked)
w_without = runs["without the penalty"]["weights"]
neighbours = [(np.arange(T_task) - 1) % T_task, (np.arange(T_task) + 1) % T_task]
on_neighbours = sum(w_without[:, np.arange(T_task), nb] for nb in neighbours)  # (heads, T)
assert on_neighbours.min() > 0.8 and w_without.max() < 0.8 < w_with.max()
print("largest weight of any head, without / with the penalty:",
      round(float(w_without.max()), 2), round(float(w_with.max()), 2))

# %% [markdown]
# ## Exercise: splitting the heads
#
# Write `split_heads(x, n_heads)` turning a projected tensor $(B, T, E)$ into
# $(B, H, T, E/H)$, where head $h$ gets features $h\,d_k$ to $(h+1)\,d_k - 1$ of every position
# (use the tensor methods `reshape` and `permute`).
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_split_heads


def split_heads(x, n_heads):
    """(B, T, E) -> (B, H, T, E / H)."""
    raise NotImplementedError


check(check_split_heads, split_heads);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def split_heads(x, n_heads):
    """(B, T, E) -> (B, H, T, E / H)."""
    B, T, E = x.shape
    return x.reshape(B, T, n_heads, E // n_heads).permute(0, 2, 1, 3)


assert check(check_split_heads, split_heads)

# %% [markdown]
# ## Test yourself
#
# **1. (The lecture's Q4.)** Does the count of 1,048,576 depend on the sentence length $T$?
# Run the big layer on sentences of two different lengths to see.
#
# <details><summary>Answer</summary>
#
# No. Every matrix is $64 \times 512$ or $512 \times 512$; $T$ appears in no shape.
# The same weights take $(B, T, 512)$ to $(B, T, 512)$ for any $T$.
#
# </details>

# %%
big.batch_first = True  # so the inputs below are (B, T, D)
for T_len in ((3, 5) if SMALL else (4, 40)):
    xs = mg.randn(1, T_len, 512)
    ys, _ = big(xs, xs, xs, need_weights=False)
    assert ys.shape == (1, T_len, 512)
assert big.num_parameters() == 1_048_576

# %% [markdown]
# **2.** Suppose each of the 8 heads kept the full width, with $(512, 512)$ matrices, so that the
# concatenation had 4096 numbers per word and $W_O$ were $(512, 4096)$. How many parameters
# would the sublayer have?
#
# <details><summary>Answer</summary>
#
# $3 \times 8 \times 512^2 = 6{,}291{,}456$ for the projections plus
# $512 \times 4096 = 2{,}097{,}152$ for $W_O$: $8{,}388{,}608$, eight times as many.
#
# </details>

# %%
wide = 3 * 8 * 512 * 512 + 512 * 4096
assert 3 * 8 * 512 * 512 == 6_291_456 and 512 * 4096 == 2_097_152
assert wide == 8_388_608 == 8 * total

# %% [markdown]
# **3.** In `MultiheadAttention(512, 8)`, which rows of `in_proj_weight` hold $W_K$ of the
# fourth head (head index 3, counting from 0)? Check that they compute that head's keys.
#
# <details><summary>Answer</summary>
#
# The key block starts at row 512 and head 3 owns rows $3 \times 64$ to
# $4 \times 64$ inside it, so rows 704 to 767 (the slice `704:768`).
#
# </details>

# %%
start = 512 + 3 * 64
assert (start, start + 64) == (704, 768)
xs = mg.randn(1, 6, 512)
all_keys = F.linear(xs, big.in_proj_weight[512:1024])           # (1, 6, 512), every head
head3_keys = F.linear(xs, big.in_proj_weight[start:start + 64])  # (1, 6, 64)
assert np.allclose(head3_keys.numpy(), all_keys.numpy()[..., 3 * 64:4 * 64], atol=1e-5)
print("all exercises check out")
