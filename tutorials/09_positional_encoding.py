# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 9. Positional encoding
#
# An RNN knows the order of the words because it reads them in order. Self-attention does
# not read in any order: each output is a weighted sum over *all* positions, and a sum does not
# care how its terms are listed. This tutorial first shows that blindness, then adds the
# transformer's fix, a sinusoidal *positional encoding* $\mathbf{p}_j$ added to the embedding
# of the word at position $j$ before the first layer:
#
# $$\mathbf{h}_j = \mathbf{h}'_j + \mathbf{p}_j .$$

# %%
import math

from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn

np.set_printoptions(precision=3, suppress=True)

# %% [markdown]
# ## Self-attention cannot see word order
#
# Take one multi-head self-attention layer and a sentence of $T$ embeddings, shape $(B, T, D)$.
# Shuffle the words with a permutation $\pi$ and run the layer again. Every word gets exactly the
# same output vector as before, just at its new place in the list:
#
# $$\operatorname{SelfAttn}(X_\pi) = \operatorname{SelfAttn}(X)_\pi .$$
#
# The lecture calls this *permutation invariance* (each word's vector does not change);
# mathematicians would say the layer is permutation-*equivariant* (the outputs move with the
# inputs). Either way, the layer has no idea which word came first.

# %%
D, T = 16, 7 if SMALL else 12
mg.manual_seed(0)
attn = nn.MultiheadAttention(D, 2, batch_first=True)


def self_attend(x):
    return attn(x, x, x, need_weights=False)[0].numpy()


x = mg.randn(1, T, D)
perm = np.random.default_rng(0).permutation(T)
assert not np.array_equal(perm, np.arange(T))
out = self_attend(x)
out_shuffled = self_attend(mg.tensor(x.numpy()[:, perm]))
assert np.allclose(out_shuffled, out[:, perm], atol=1e-5)
print("permuting the inputs permuted the outputs, nothing else changed")

# %% [markdown]
# A concrete case: "the dog bit the man" and "the man bit the dog" mean different things, yet
# with word embeddings alone the layer gives "dog" the same vector in both sentences.

# %%
vocab = {w: i for i, w in enumerate(["the", "dog", "bit", "man"])}
emb = nn.Embedding(len(vocab), D)
s1 = "the dog bit the man".split()
s2 = "the man bit the dog".split()


def embed(sentence):
    return emb(mg.tensor([[vocab[w] for w in sentence]]))  # (1, 5, D)


o1, o2 = self_attend(embed(s1)), self_attend(embed(s2))
dog1, dog2 = o1[0, s1.index("dog")], o2[0, s2.index("dog")]
assert np.allclose(dog1, dog2, atol=1e-5)

# %% [markdown]
# ## How to encode a position?
#
# The lecture considers three simple options and rejects them, mainly because sentence lengths
# vary:
#
# - a vector whose entries all equal $j$: the values grow without bound and drown the word
#   embedding in long sentences;
# - a one-hot vector for $j$: its size must be fixed in advance, and (as we will see) it says
#   nothing about which positions are close;
# - a learned vector for each position: nothing is learned for lengths never seen in training.
#
# The transformer instead builds each $\mathbf{p}_j$ from sines and cosines of $j$ at
# different frequencies (the paper's formula; one slide writes the cosine's exponent
# differently, and we follow the paper):
#
# $$PE_{(j,\,2i)} = \sin\!\big(\omega_i\, j\big), \qquad PE_{(j,\,2i+1)} = \cos\!\big(\omega_i\, j\big),
#   \qquad \omega_i = \frac{1}{10000^{2i/d_{model}}} .$$
#
# Dimension pair $(2i, 2i+1)$ is a clock hand turning at speed $\omega_i$. The first pair turns
# once every $2\pi$ positions; the last ones barely move. `nn.sinusoidal_table(max_len, d_model)`
# returns the $(max\_len, d_{model})$ table.

# %%
d_model = 512
omega = 1.0 / 10000 ** (np.arange(0, d_model, 2) / d_model)
table512 = nn.sinusoidal_table(50, d_model, dtype=np.float64)
j = 7
assert np.allclose(table512[j, 0::2], np.sin(omega * j)) and np.allclose(table512[j, 1::2], np.cos(omega * j))
print(f"omega_0 = {omega[0]:.0f}, omega_255 = {omega[-1]:.2e}")
assert omega[0] == 1.0 and round(omega[-1], 6) == 0.000104

# %% [markdown]
# The frequencies fall from $\omega_0 = 1$ to $\omega_{255} \approx 1.04 \times 10^{-4}$.
#
# At position 0 every sine is 0 and every cosine is 1, so
# $\mathbf{p}_0 = [0, 1, 0, 1, \dots, 0, 1]$: the first word of every sentence gets this
# alternating vector added to it.

# %%
p0 = table512[0]
assert np.array_equal(p0, np.tile([0.0, 1.0], d_model // 2))
print("p_0 starts", p0[:8])

# %% [markdown]
# ## The heat map
#
# As in the lecture, positions $0$ to $8$ and 64 dimensions (a model with $d_{model} = 64$, so
# that the frequencies run over their whole range). Even columns are sines, odd columns
# cosines; moving right, the frequency drops and the columns change more and more slowly down
# the positions.

# %%
pe64 = nn.sinusoidal_table(9, 64, dtype=np.float64)  # (positions, dimensions)
assert pe64.shape == (9, 64)
fig, ax = plt.subplots(figsize=(10, 3.2))
im = ax.imshow(pe64, cmap="RdBu", vmin=-1, vmax=1, aspect="auto")
ax.set_title("Sinusoidal positional encoding, positions 0-8, d_model = 64")
ax.set_xlabel("dimension (even: sine, odd: cosine)")
ax.set_ylabel("position j")
ax.set_yticks(range(9))
fig.colorbar(im, ax=ax, label="PE value")
savefig(fig, "09_positional_heatmap")

# %% [markdown]
# Row 0 is the alternating $0, 1$ pattern, and the last columns are almost constant over these
# nine positions (their values move by less than 0.01).

# %%
assert np.array_equal(pe64[0], np.tile([0.0, 1.0], 32))
assert np.ptp(pe64[:, -2:], axis=0).max() < 0.01

# %% [markdown]
# ## `nn.PositionalEncoding`
#
# The module adds the table's first $T$ rows to an input of shape $(B, T, D)$ (then applies
# dropout, here 0). It is a fixed function of the position, so it holds no parameters.

# %%
pos_enc = nn.PositionalEncoding(D, max_len=100)
xe = pos_enc(x)
assert np.allclose(xe.numpy(), x.numpy() + nn.sinusoidal_table(T, D))
assert pos_enc.num_parameters() == 0

# %% [markdown]
# ## Does the encoding respect distance?
#
# Positions have a natural distance, $|j - k|$. A good encoding should have
# $\lVert \mathbf{p}_j - \mathbf{p}_k \rVert$ grow with it. Each dimension pair contributes
# $(\sin a - \sin b)^2 + (\cos a - \cos b)^2 = 2 - 2\cos(a - b)$, so
#
# $$\lVert \mathbf{p}_j - \mathbf{p}_k \rVert^2 = \sum_{i} \big(2 - 2\cos(\omega_i (j - k))\big),$$
#
# which depends only on the offset $j - k$, and symmetrically. One-hot position vectors, by
# contrast, differ in exactly two entries for any $j \ne k$: their distance is always
# $\sqrt 2$.

# %%
def distances(P):
    return np.linalg.norm(P[:, None, :] - P[None, :, :], axis=-1)


n_pos = 9
D_sin = distances(pe64)
offsets = np.abs(np.subtract.outer(np.arange(n_pos), np.arange(n_pos)))
omega64 = 1.0 / 10000 ** (np.arange(0, 64, 2) / 64)
closed_form = np.sqrt((2 - 2 * np.cos(np.multiply.outer(offsets, omega64))).sum(-1))
assert np.allclose(D_sin, closed_form)
assert np.allclose(D_sin, D_sin.T)
for off in range(n_pos):  # the same distance all along each diagonal
    assert np.allclose(np.diagonal(D_sin, off), np.diagonal(D_sin, off)[0])

D_onehot = distances(np.eye(n_pos))
assert np.allclose(D_onehot[offsets > 0], math.sqrt(2))
print("distance from position 0, d_model = 64:", D_sin[0])

# %% [markdown]
# How far does "grows with the offset" go? For $d_{model} = 64$ the distance from position 0
# rises at every step up to an offset of 5 and then levels off and wobbles; for $d_{model} = 512$
# it rises at every step up to an offset of 43. Near neighbours stay the closest: every offset
# up to 4 (for 64) or 42 (for 512) is closer than every larger one, out to 2,000 positions,
# which is what the lecture's argument needs.

# %%
def last_increasing_offset(d, n=200):
    P = nn.sinusoidal_table(n, d, dtype=np.float64)
    dist = np.linalg.norm(P - P[0], axis=1)
    return int(np.argmin(np.diff(dist) > 0))  # steps 0 -> 1, ..., k-1 -> k all increase


def nearest_closer(d, n=2000):
    """The largest k such that each offset 1, ..., k is closer than every larger offset."""
    P = nn.sinusoidal_table(n, d, dtype=np.float64)
    dist = np.linalg.norm(P - P[0], axis=1)
    farther_min = np.minimum.accumulate(dist[::-1])[::-1]  # min over offsets >= k
    return int(np.argmin(dist[1:-1] < farther_min[2:]))


assert last_increasing_offset(64) == 5 and nearest_closer(64) == 4
assert last_increasing_offset(512) == 43 and nearest_closer(512) == 42

# %%
max_off = 30 if SMALL else 60
off_axis = np.arange(max_off + 1)
fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
im = axes[0].imshow(D_sin, cmap="magma")
axes[0].set_title("||p_j - p_k||, d_model = 64")
axes[0].set_xlabel("position k")
axes[0].set_ylabel("position j")
fig.colorbar(im, ax=axes[0], label="Euclidean distance")
for d in (64, 512):
    P = nn.sinusoidal_table(max_off + 1, d, dtype=np.float64)
    axes[1].plot(off_axis, np.linalg.norm(P - P[0], axis=1), label=f"sinusoidal, d_model = {d}")
axes[1].plot(off_axis[1:], np.full(max_off, math.sqrt(2)), "k--", label="one-hot (always sqrt 2)")
axes[1].set_title("Distance between the encodings of two positions")
axes[1].set_xlabel("offset |j - k|")
axes[1].set_ylabel("||p_j - p_k||")
axes[1].legend()
savefig(fig, "09_positional_distance")

# %% [markdown]
# ## Positions break the symmetry
#
# Back to the first experiment, now with the encoding added to the embeddings. Shuffling the
# words no longer just shuffles the outputs, because each word now carries its position.

# %%
shuffled = mg.tensor(x.numpy()[:, perm])
with_pos = self_attend(pos_enc(x))
with_pos_shuffled = self_attend(pos_enc(shuffled))
gap = np.abs(with_pos_shuffled - with_pos[:, perm]).max()
print(f"largest difference after shuffling, with positions: {gap:.3f}")
assert gap > 0.05

# %% [markdown]
# And "dog" now gets different vectors in "the dog bit the man" and "the man bit the dog".

# %%
o1p, o2p = self_attend(pos_enc(embed(s1))), self_attend(pos_enc(embed(s2)))
assert not np.allclose(o1p[0, s1.index("dog")], o2p[0, s2.index("dog")], atol=1e-3)

# %% [markdown]
# ## Relative positions instead of absolute ones
#
# Adding a fixed sinusoid to each word works, but it is an odd choice: position information is
# mixed into the word vectors themselves, and what a sentence looks like depends on *where* it
# starts. The second lecture describes the later fix (Shaw, Uszkoreit and Vaswani, 2018): give
# attention itself a sense of distance. When query $i$ looks at key $j$, add learned vectors
# that depend only on the offset $j - i$, clipped to a window $\pm k$:
#
# $$e_{ij} = \frac{\mathbf q_i \cdot (\mathbf k_j + \mathbf a^K_{ij})}{\sqrt{d_k}}, \qquad
#   \mathbf z_i = \sum_j \alpha_{ij}\,(\mathbf v_j + \mathbf a^V_{ij}), \qquad
#   \mathbf a_{ij} = \mathbf w_{\operatorname{clip}(j - i,\,-k,\,k)} .$$
#
# Only $2k + 1$ vectors are learned for keys and $2k + 1$ for values, whatever the sentence
# length: every pair farther apart than $k$ shares the vector of distance $\pm k$. First the
# table of clipped offsets for 7 positions and $k = 2$, shifted by $k$ so that it indexes rows
# $0, \dots, 2k$ of the learned tables:

# %%
def clipped_offsets(positions, k):
    """(T, T) table of clip(j - i, -k, k) + k for the given absolute positions."""
    p = np.asarray(positions)
    return np.clip(p[None, :] - p[:, None], -k, k) + k


k_clip = 2
index_table = clipped_offsets(range(7), k_clip)
print(index_table)
assert index_table[0].tolist() == [2, 3, 4, 4, 4, 4, 4]
assert index_table[6].tolist() == [0, 0, 0, 0, 0, 1, 2]
assert len(np.unique(index_table)) == 2 * k_clip + 1 == 5
assert np.all(np.diag(index_table) == k_clip)            # distance 0: the middle vector

# %% [markdown]
# Now one head with these tables, written out by hand, and checked against
# `MultiheadAttention(..., relative_positions=k)` (which keeps them as `rel_k` and `rel_v`, shape
# $(2k + 1, d_k)$). The function takes the absolute positions as an argument only to show that
# it never uses them except through $j - i$.

# %%
def relative_self_attention(x, layer, positions):
    """One-head self-attention with clipped relative positions, by hand; x (T, D) -> (T, D)."""
    Win, b = layer.in_proj_weight.numpy(), layer.in_proj_bias.numpy()
    D_ = x.shape[1]
    q_, k_, v_ = (x @ Win[r * D_:(r + 1) * D_].T + b[r * D_:(r + 1) * D_] for r in range(3))
    idx = clipped_offsets(positions, layer.relative_positions)
    aK, aV = layer.rel_k.numpy()[idx], layer.rel_v.numpy()[idx]        # (T, T, d_k) each
    scores = (q_[:, None, :] * (k_[None, :, :] + aK)).sum(-1) / math.sqrt(D_)
    alpha = np.exp(scores - scores.max(1, keepdims=True))
    alpha /= alpha.sum(1, keepdims=True)
    z = alpha @ v_ + (alpha[:, :, None] * aV).sum(1)
    return z @ layer.out_proj.weight.numpy().T + layer.out_proj.bias.numpy()


mg.manual_seed(4)
rel_layer = nn.MultiheadAttention(D, 1, batch_first=True, relative_positions=k_clip)
x_rel = x.numpy()[0].astype(np.float64)
by_hand_rel = relative_self_attention(x_rel, rel_layer, range(T))
library_rel = rel_layer(x, x, x, need_weights=False)[0].numpy()[0]
assert np.allclose(by_hand_rel, library_rel, atol=1e-4)
print("rel_k", rel_layer.rel_k.shape, "- the by-hand head matches the library's")

# %% [markdown]
# ### Unchanged by a shift of all positions
#
# Suppose the same words sit at positions $10, 11, \dots$ instead of $0, 1, \dots$ (say, the
# second clause of a longer text). Every offset $j - i$ is unchanged, so the relative model
# gives exactly the same outputs. With sinusoidal encodings the added vectors are different
# ones, $\mathbf p_{10}, \mathbf p_{11}, \dots$, and the outputs move. What both models still
# see is the *order*: shuffling the words changes the relative model's outputs too (it is not
# blind to order, as plain attention was at the start of this tutorial).

# %%
shift = 10
rel_moved = np.abs(relative_self_attention(x_rel, rel_layer, range(shift, shift + T))
                   - by_hand_rel).max()
sin_moved = np.abs(self_attend(pos_enc(x, offset=shift)) - self_attend(pos_enc(x))).max()
print(f"largest change when every position moves by {shift}: relative {rel_moved:.1e}, "
      f"sinusoidal {sin_moved:.3f}")
assert rel_moved < 1e-12 and sin_moved > 0.05
rel_shuffled = relative_self_attention(x_rel[perm], rel_layer, range(T))
assert not np.allclose(rel_shuffled, by_hand_rel[perm], atol=1e-3)   # order matters again

fig, axes = plt.subplots(1, 2, figsize=(11, 4), layout="constrained")
im = axes[0].imshow(index_table - k_clip, cmap="RdBu", vmin=-k_clip, vmax=k_clip)
for i in range(7):
    for j in range(7):
        axes[0].text(j, i, str(index_table[i, j] - k_clip), ha="center", va="center", fontsize=8)
axes[0].set_title(f"clip(j - i, -{k_clip}, {k_clip}): which learned vector a pair uses")
axes[0].set_xlabel("key position j")
axes[0].set_ylabel("query position i")
fig.colorbar(im, ax=axes[0], shrink=0.8)
shifts = np.arange(0, 16)
rel_changes = [np.abs(relative_self_attention(x_rel, rel_layer, range(s, s + T)) - by_hand_rel).max()
               for s in shifts]
sin_changes = [np.abs(self_attend(pos_enc(x, offset=int(s))) - self_attend(pos_enc(x))).max()
               for s in shifts]
axes[1].plot(shifts, sin_changes, "o-", label="sinusoidal (absolute) positions")
axes[1].plot(shifts, rel_changes, "s-", label=f"relative positions, k = {k_clip}")
axes[1].set_xlabel("shift of every position")
axes[1].set_ylabel("largest change of the outputs")
axes[1].set_title("Moving the whole sentence along")
axes[1].legend()
savefig(fig, "09_relative_positions")

# %% [markdown]
# Sinusoidal or relative? Both let the model compare positions. The sinusoid is fixed and
# needs no parameters; the relative tables cost $2 \times (2k + 1) \times d_k$ numbers per layer
# and see offsets only up to $k$ (beyond that, "far" is all they know), but they describe
# exactly what the lecture asked of an encoding, nearness, and nothing else. The translator of
# tutorial 13 uses sinusoids, as the original paper does.

# %%
assert rel_layer.rel_k.numel() + rel_layer.rel_v.numel() == 2 * (2 * k_clip + 1) * D

# %% [markdown]
# ## Exercise: the sinusoid table
#
# Write `sinusoid_table(max_len, d_model)` returning the $(max\_len, d_{model})$ table
# $PE_{(j, 2i)} = \sin(\omega_i j)$, $PE_{(j, 2i+1)} = \cos(\omega_i j)$ with
# $\omega_i = 10000^{-2i/d_{model}}$, without calling `nn.sinusoidal_table`.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_sinusoid_table


def sinusoid_table(max_len, d_model):
    """(max_len, d_model) sinusoidal positional encodings."""
    raise NotImplementedError


check(check_sinusoid_table, sinusoid_table);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def sinusoid_table(max_len, d_model):
    """(max_len, d_model) sinusoidal positional encodings."""
    j = np.arange(max_len)[:, None]
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    table = np.zeros((max_len, d_model))
    table[:, 0::2] = np.sin(omega * j)
    table[:, 1::2] = np.cos(omega * j)
    return table


assert check(check_sinusoid_table, sinusoid_table)

# %% [markdown]
# ## Test yourself
#
# **1.** What are the first two entries of $\mathbf{p}_1$, and the last two, for
# $d_{model} = 512$?
#
# <details><summary>Answer</summary>
#
# The first pair turns at $\omega_0 = 1$: $[\sin 1, \cos 1] \approx [0.841, 0.540]$.
# The last pair turns at $\omega_{255} \approx 1.04 \times 10^{-4}$: about $[0.0001, 1.0000]$,
# barely different from position 0.
#
# </details>

# %%
p1 = table512[1]
assert np.round(p1[:2], 3).tolist() == [0.841, 0.540]
assert np.round(p1[-2:], 4).tolist() == [0.0001, 1.0]

# %% [markdown]
# **2.** Why is a one-hot position vector a poor choice? (The lecture's Q3, second half.)
#
# <details><summary>Answer</summary>
#
# Any two different one-hot vectors are $\sqrt 2$ apart, so positions 1 and 2 look
# exactly as far apart as positions 1 and 9; the encoding carries no notion of nearness. It
# also needs one dimension per possible position, fixed in advance. Sinusoids use a fixed
# width for any length, and their distance grows with the offset.
#
# </details>

# %%
onehot = np.eye(10)
assert math.isclose(np.linalg.norm(onehot[1] - onehot[2]), np.linalg.norm(onehot[1] - onehot[9]))
assert D_sin[1, 2] < D_sin[1, 5] < D_sin[1, 7]

# %% [markdown]
# **3.** Show that shifting by a fixed offset $k$ is a *linear* map: there is a matrix $R_k$,
# the same for every position, with $\mathbf{p}_{j+k} = R_k\,\mathbf{p}_j$. (The paper gives
# this as a reason to hope the model can learn to attend by relative position.)
#
# <details><summary>Answer</summary>
#
# For each pair, $\sin(\omega(j+k)) = \sin(\omega j)\cos(\omega k) + \cos(\omega j)\sin(\omega k)$
# and $\cos(\omega(j+k)) = \cos(\omega j)\cos(\omega k) - \sin(\omega j)\sin(\omega k)$: a
# $2 \times 2$ rotation by $\omega_i k$. $R_k$ is block-diagonal with one such block per pair,
# and it does not involve $j$.
#
# </details>

# %%
def shift_matrix(k, d):
    w = 1.0 / 10000 ** (np.arange(0, d, 2) / d)
    R = np.zeros((d, d))
    for i, wi in enumerate(w):
        c, s = math.cos(wi * k), math.sin(wi * k)
        R[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return R


R3 = shift_matrix(3, 64)
P = nn.sinusoidal_table(20, 64, dtype=np.float64)
for jj in range(17):
    assert np.allclose(R3 @ P[jj], P[jj + 3])
print("all exercises check out")
