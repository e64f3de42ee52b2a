# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 8. Masking
#
# Self-attention lets every position look at every other position. Two situations call for
# hiding some of them:
#
# - **The future, in the decoder.** During training the whole target sentence is fed to the
#   decoder at once (teacher forcing), but the output at position $t$ must be predicted from
#   positions $1, \dots, t$ only. If position $t$ could read position $t+1$, it would simply
#   copy the answer, and at inference time, when the future has not been generated yet, the
#   model would be lost.
# - **Padding.** Sentences in a batch have different lengths, so the short ones are filled up
#   with padding tokens. Those tokens carry no meaning and must not influence the real ones.
#
# Both are handled the same way: before the softmax, the scores of forbidden (query, key) pairs
# are set to $-\infty$. Since $e^{-\infty} = 0$ they get a weight of exactly zero, and the
# softmax spreads the remaining weight over the allowed keys.

# %%
import math

from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.nn import Transformer
from minigrad.nn import functional as F

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## The causal mask
#
# For $T$ positions the mask $M$ is a $(T, T)$ matrix with $0$ on and below the diagonal and
# $-\infty$ above it. It is added to the scaled scores:
#
# $$Z = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}} + M\Big)V .$$
#
# Row $t$ keeps keys $1, \dots, t$. `Transformer.generate_square_subsequent_mask(T)` builds it
# (the name is PyTorch's).

# %%
M = Transformer.generate_square_subsequent_mask(4)
print(M)
assert np.array_equal(np.isneginf(M.numpy()), np.triu(np.ones((4, 4), bool), k=1))
assert np.all(M.numpy()[np.tril_indices(4)] == 0)

# %% [markdown]
# A trick to *see* attention weights through `scaled_dot_product_attention`, which returns only
# the output: use the identity matrix as the values. Then $Z = A\,I = A$, the weights themselves.

# %%
def weights_via_identity(q, k, **kwargs):
    """The (.., T, S) attention weights, read off by attending over identity values."""
    S = k.shape[-2]
    eye = mg.tensor(np.eye(S, dtype=q.numpy().dtype))
    return F.scaled_dot_product_attention(q, k, eye, **kwargs).numpy()


T, d = 6, 8
mg.manual_seed(1)
q, k = mg.randn(T, d), mg.randn(T, d)
A_free = weights_via_identity(q, k)
A_causal = weights_via_identity(q, k, attn_mask=Transformer.generate_square_subsequent_mask(T))
assert np.all(A_causal[np.triu_indices(T, k=1)] == 0)  # nothing above the diagonal
assert np.allclose(A_causal.sum(axis=1), 1.0)          # every row still sums to 1
assert A_causal[0, 0] == 1.0                            # the first position sees only itself

# %%
fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained")
blocked = np.isneginf(Transformer.generate_square_subsequent_mask(T).numpy())
panels = [(blocked.astype(float), "causal mask (1 = blocked)", "Greys"),
          (A_free, "weights without the mask", "viridis"),
          (A_causal, "weights with the mask", "viridis")]
for ax, (m, title, cmap) in zip(axes, panels):
    im = ax.imshow(m, cmap=cmap, vmin=0, vmax=1)
    ax.set_title(title)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_xticks(range(T))
    ax.set_yticks(range(T))
fig.colorbar(im, ax=axes, label="attention weight", shrink=0.9)
fig.suptitle("Causal masking: each position attends only to itself and earlier positions")
savefig(fig, "08_causal_mask")

# %% [markdown]
# ## Bool masks, and two opposite conventions
#
# A mask can also be boolean, and here one has to read the documentation carefully, because
# minigrad follows PyTorch, which uses *both* meanings:
#
# | where | `True` means |
# |---|---|
# | `nn.functional.scaled_dot_product_attention(attn_mask=...)` | this pair **may** attend |
# | `nn.MultiheadAttention(attn_mask=..., key_padding_mask=...)` | this pair may **not** attend |
#
# A float mask is simply added to the scores in both places. `is_causal=True` builds the causal
# mask for you in both. All of these give the same weights:

# %%
future = np.triu(np.ones((T, T), dtype=bool), k=1)  # True above the diagonal
A_bool_allowed = weights_via_identity(q, k, attn_mask=mg.tensor(~future))
A_is_causal = weights_via_identity(q, k, is_causal=True)
assert np.allclose(A_bool_allowed, A_causal) and np.allclose(A_is_causal, A_causal)

mha = nn.MultiheadAttention(d, 2, batch_first=True)
x = mg.randn(1, T, d)
_, w_float = mha(x, x, x, attn_mask=Transformer.generate_square_subsequent_mask(T))
_, w_bool = mha(x, x, x, attn_mask=mg.tensor(future))  # True = blocked, here
_, w_causal = mha(x, x, x, is_causal=True)
assert np.allclose(w_float.numpy(), w_bool.numpy()) and np.allclose(w_causal.numpy(), w_bool.numpy())
print("float mask, bool mask and is_causal agree")

# %% [markdown]
# Passing the `scaled_dot_product_attention` convention to `MultiheadAttention` would silently
# do the opposite of what was meant: every position would see only its *future*, and the last
# position, with no future at all, would get nothing but zero weights.

# %%
_, w_wrong = mha(x, x, x, attn_mask=mg.tensor(~future))
assert np.all(np.tril(w_wrong.numpy()[0]) == 0)

# %% [markdown]
# ## The leak test
#
# A mask is only worth something if it really stops information from the future. The test:
# run the layer, change a *later* token, run it again. Outputs at earlier positions must not
# move at all; outputs from that position on may.

# %%
def run(layer, inp, **kwargs):
    return layer(inp, inp, inp, need_weights=False, **kwargs)[0].numpy()


changed_at = 3
x2 = x.numpy().copy()
x2[0, changed_at] += 5.0  # a different token at position 3
x2 = mg.tensor(x2)

y1, y2 = run(mha, x, is_causal=True), run(mha, x2, is_causal=True)
moved = np.abs(y1 - y2).max(axis=-1)[0]  # per position
print("change per position, masked:  ", moved)
assert np.all(moved[:changed_at] == 0.0)
assert np.all(moved[changed_at:] > 0)

u1, u2 = run(mha, x), run(mha, x2)
moved_free = np.abs(u1 - u2).max(axis=-1)[0]
print("change per position, unmasked:", moved_free)
assert np.all(moved_free > 0)  # without the mask, the change leaks to every position

# %% [markdown]
# Autograd gives a second, stricter form of the test: the gradient of an output at position
# $t$ with respect to every later input must be exactly zero.

# %%
xg = mg.tensor(x.numpy(), requires_grad=True)
yg, _ = mha(xg, xg, xg, is_causal=True, need_weights=False)
yg[:, 2].sum().backward()
grad_per_position = np.abs(xg.grad.numpy()).sum(axis=-1)[0]
print("|d y_2 / d x_j| per j:", grad_per_position)
assert np.all(grad_per_position[3:] == 0) and np.all(grad_per_position[:3] > 0)

# %% [markdown]
# The same test on a whole (small) encoder-decoder Transformer, with the mask passed as
# `tgt_mask`: changing target token 3 leaves the decoder's outputs at positions 0 to 2
# untouched.

# %%
mg.manual_seed(2)
D_model = 16
model = Transformer(d_model=D_model, nhead=2, num_encoder_layers=1, num_decoder_layers=1,
                    dim_feedforward=32, dropout=0.0, batch_first=True)
T_tgt = 5 if SMALL else 8
src = mg.randn(2, 7, D_model)                     # (B, S, D): the source sentences
tgt = mg.randn(2, T_tgt, D_model)                 # (B, T, D): the shifted target
tgt_changed = tgt.numpy().copy()
tgt_changed[:, changed_at] = np.random.default_rng(0).standard_normal((2, D_model))
mask = Transformer.generate_square_subsequent_mask(T_tgt)
out_a = model(src, tgt, tgt_mask=mask).numpy()
out_b = model(src, mg.tensor(tgt_changed), tgt_mask=mask).numpy()
assert np.array_equal(out_a[:, :changed_at], out_b[:, :changed_at])
assert np.all(np.abs(out_a - out_b)[:, changed_at:].max(axis=-1) > 0)
print("the decoder passes the leak test")

# %% [markdown]
# ## Padding masks
#
# A batch of two sentences, one of 5 tokens and one of 3, becomes a $(B, T) = (2, 5)$ block; the
# short one gets two padding tokens at the end. `key_padding_mask`, of shape $(B, S)$, marks
# them with `True` ("may not attend", the `MultiheadAttention` convention). Every query then
# gives the padding keys a weight of zero.

# %%
lengths = [5, 3]
S = max(lengths)
pad = np.array([[j >= n for j in range(S)] for n in lengths])  # True at padding positions
print(pad)
xb = mg.randn(2, S, d)
yb, wb = mha(xb, xb, xb, key_padding_mask=mg.tensor(pad))
assert np.all(wb.numpy()[1][:, 3:] == 0)                # no weight on sentence 2's padding
assert np.allclose(wb.numpy().sum(axis=-1), 1.0)

# %% [markdown]
# Whatever the padding vectors contain, the real tokens' outputs stay the same. (The outputs *at*
# the padding positions are computed too, but they are junk that the loss ignores.)

# %%
xb_junk = xb.numpy().copy()
xb_junk[1, 3:] = 100.0  # fill the padding with something wild
yb_junk, _ = mha(mg.tensor(xb_junk), mg.tensor(xb_junk), mg.tensor(xb_junk),
                 key_padding_mask=mg.tensor(pad))
assert np.allclose(yb_junk.numpy()[1, :3], yb.numpy()[1, :3], atol=1e-6)
assert np.array_equal(yb_junk.numpy()[0], yb.numpy()[0])  # the other sentence is untouched

# %% [markdown]
# In the decoder both masks apply at once: a key is usable only if it is in the past *and* not
# padding. The layer combines them for you.

# %%
_, w_both = mha(xb, xb, xb, attn_mask=mg.tensor(future[:S, :S]), key_padding_mask=mg.tensor(pad))
w2 = w_both.numpy()[1]
assert np.all(w2[np.triu_indices(S, k=1)] == 0) and np.all(w2[:, 3:] == 0)

fig, axes = plt.subplots(1, 2, figsize=(9, 4), layout="constrained")
for ax, m, title in zip(axes, [wb.numpy()[1], w2], ["padding mask", "padding + causal mask"]):
    im = ax.imshow(m, cmap="viridis", vmin=0, vmax=1)
    ax.set_title(title)
    ax.set_xlabel("key position (3 and 4 are padding)")
    ax.set_ylabel("query position")
fig.colorbar(im, ax=axes, label="attention weight", shrink=0.9)
fig.suptitle("Attention weights of a 3-token sentence padded to 5")
savefig(fig, "08_padding_mask")

# %% [markdown]
# ## Exercise: the causal mask
#
# Write `causal_mask(T)` returning the $(T, T)$ float array that is 0 on and below the
# diagonal and $-\infty$ above it, without calling `generate_square_subsequent_mask`.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_causal_mask


def causal_mask(T):
    """(T, T): 0 where key j <= query i, -inf where j > i."""
    raise NotImplementedError


check(check_causal_mask, causal_mask);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def causal_mask(T):
    """(T, T): 0 where key j <= query i, -inf where j > i."""
    return np.triu(np.full((T, T), -np.inf), k=1)


assert check(check_causal_mask, causal_mask)

# %% [markdown]
# ## Test yourself
#
# **1. (The lecture's Q5.)** In masked self-attention with $T = 3$, row 2 of the scaled scores is
# $[1, 1, 5]$. What are $\alpha_{21}, \alpha_{22}, \alpha_{23}$? What would they be without the
# mask?
#
# <details><summary>Answer</summary>
#
# The mask adds $[0, 0, -\infty]$ to row 2, so the softmax sees $[1, 1, -\infty]$ and
# returns $[0.5, 0.5, 0]$. Without the mask, $e^5 \approx 148.4$ swamps $e^1 \approx 2.72$ and
# the row is about $[0.018, 0.018, 0.965]$: position 2 would mostly read word 3, the future word
# that teacher forcing puts in front of it.
#
# To reproduce it, take $d_k = 1$ (so the scale $1/\sqrt{d_k}$ is 1), every query equal to $1$
# and keys $1, 1, 5$: every row of the scaled scores is then $[1, 1, 5]$.
#
# </details>

# %%
q3 = mg.tensor([[1.0], [1.0], [1.0]], dtype=mg.float64)
k3 = mg.tensor([[1.0], [1.0], [5.0]], dtype=mg.float64)
scaled_scores = (q3 @ k3.T).numpy() / math.sqrt(1)
assert scaled_scores[1].tolist() == [1, 1, 5]
mask3 = Transformer.generate_square_subsequent_mask(3, dtype=np.float64)
assert mask3.numpy()[1].tolist() == [0, 0, -math.inf]
masked = weights_via_identity(q3, k3, attn_mask=mask3)
unmasked = weights_via_identity(q3, k3)
print("row 2 masked:", masked[1], " unmasked:", unmasked[1])
assert masked[1].tolist() == [0.5, 0.5, 0.0]
assert round(math.exp(5), 1) == 148.4 and round(math.e, 2) == 2.72
assert np.round(unmasked[1], 3).tolist() == [0.018, 0.018, 0.965]

# %% [markdown]
# **2.** With a causal mask over $T$ positions, how many (query, key) pairs are allowed? For
# $T = 3$?
#
# <details><summary>Answer</summary>
#
# Row $t$ allows $t$ keys, so $1 + 2 + \dots + T = T(T+1)/2$ pairs; for $T = 3$ that
# is 6 of the 9.
#
# </details>

# %%
for n in (3, 10):
    allowed = int((~np.isneginf(Transformer.generate_square_subsequent_mask(n).numpy())).sum())
    assert allowed == n * (n + 1) // 2
assert 3 * 4 // 2 == 6

# %% [markdown]
# **3.** A plain softmax of a row that is $-\infty$ everywhere is $0/0$, NaN. When can that
# happen, and what does minigrad return?
#
# <details><summary>Answer</summary>
#
# When every key of a query is masked. With padding on the left and a causal mask, the first
# (padding) positions may only look back at earlier positions, which are all padding too; with
# padding on the right that cannot happen, since every query sees the real first token. A
# sentence that is all padding does it under any scheme. minigrad returns weights and an output of
# zeros for such a query instead of NaN, so one empty row cannot poison a whole batch.
#
# </details>

# %%
with np.errstate(invalid="ignore"):
    naive = np.exp(np.full(3, -np.inf)) / np.exp(np.full(3, -np.inf)).sum()
assert np.all(np.isnan(naive))
nothing = np.zeros((1, 3), dtype=bool)  # scaled_dot_product_attention: True = allowed
z_empty = F.scaled_dot_product_attention(q3[:1], k3, mg.tensor(np.eye(3)), attn_mask=mg.tensor(nothing))
assert np.array_equal(z_empty.numpy(), np.zeros((1, 3)))
# a 3-token sentence padded to 5 on each side, under the causal mask: which queries see no key?
for side, pad_row in (("left", [True, True, False, False, False]),
                      ("right", [False, False, False, True, True])):
    _, w_side = mha(xb, xb, xb, attn_mask=mg.tensor(future[:S, :S]),
                    key_padding_mask=mg.tensor(np.array([pad_row, pad_row])))
    empty = np.nonzero(w_side.numpy()[0].sum(-1) == 0)[0].tolist()
    print(f"padding on the {side}: queries with no key left: {empty}")
    assert empty == ([0, 1] if side == "left" else [])
print("all exercises check out")
