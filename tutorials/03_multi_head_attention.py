# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 3. Multi-head attention
#
# One head of self-attention (tutorial 2) gives every word one way of gathering context. A word
# often needs several at once. In "The animal didn't cross the street because it was too
# tired", the word "it" should link to "animal" (what it refers to) and also to "was" (the verb
# it is the subject of). One softmax row cannot put most of its weight in two places.
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
savefig(fig, "03_head_weights")

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
# ## Test yourself
#
# **1. (The lecture's Q4.)** Does the count of 1,048,576 depend on the sentence length $T$?
# Run the big layer on sentences of two different lengths to see.
#
# *Answer.* No. Every matrix is $64 \times 512$ or $512 \times 512$; $T$ appears in no shape.
# The same weights take $(B, T, 512)$ to $(B, T, 512)$ for any $T$.

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
# *Answer.* $3 \times 8 \times 512^2 = 6{,}291{,}456$ for the projections plus
# $512 \times 4096 = 2{,}097{,}152$ for $W_O$: $8{,}388{,}608$, eight times as many.

# %%
wide = 3 * 8 * 512 * 512 + 512 * 4096
assert 3 * 8 * 512 * 512 == 6_291_456 and 512 * 4096 == 2_097_152
assert wide == 8_388_608 == 8 * total

# %% [markdown]
# **3.** In `MultiheadAttention(512, 8)`, which rows of `in_proj_weight` hold $W_K$ of the
# fourth head (head index 3, counting from 0)? Check that they compute that head's keys.
#
# *Answer.* The key block starts at row 512 and head 3 owns rows $3 \times 64$ to
# $4 \times 64$ inside it, so rows 704 to 767 (the slice `704:768`).

# %%
start = 512 + 3 * 64
assert (start, start + 64) == (704, 768)
xs = mg.randn(1, 6, 512)
all_keys = F.linear(xs, big.in_proj_weight[512:1024])           # (1, 6, 512), every head
head3_keys = F.linear(xs, big.in_proj_weight[start:start + 64])  # (1, 6, 64)
assert np.allclose(head3_keys.numpy(), all_keys.numpy()[..., 3 * 64:4 * 64], atol=1e-5)
print("all exercises check out")
