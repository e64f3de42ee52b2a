# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10. Layer norm versus batch norm
#
# Stack six encoder layers and six decoder layers and count the attention layers and the two
# linear layers of every feed-forward network: the Transformer is 42 layers deep. Two tools keep
# such a deep network trainable. Residual connections give the gradient a short path back to
# the input (tutorial 11), and a normalisation layer keeps the activations on a stable scale.
#
# There are two well-known normalisation layers, and they use the *same* formula. What differs
# is the set of numbers that the mean and the variance are taken over. This tutorial makes that
# difference concrete on a tiny tensor, then shows the two practical consequences that made the
# Transformer choose layer norm:
#
# 1. batch norm needs more than one example, layer norm does not;
# 2. batch norm behaves differently in training and in evaluation, layer norm does not.

# %%
from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn

# %% [markdown]
# ## One formula, two choices of axis
#
# Given a group of numbers $x_1, \dots, x_m$, both layers compute
#
# $$\mu = \frac{1}{m}\sum_{k=1}^{m} x_k, \qquad
#   \sigma^2 = \frac{1}{m}\sum_{k=1}^{m} (x_k - \mu)^2, \qquad
#   y_k = \gamma\,\frac{x_k - \mu}{\sqrt{\sigma^2 + \epsilon}} + \beta .$$
#
# The small $\epsilon$ (here $10^{-5}$) protects against dividing by zero, and $\gamma$, $\beta$ are
# learned per feature (they start at 1 and 0, so at first they change nothing).
#
# * **Batch norm** looks at one feature (one neuron) at a time and forms the group from all
#   the examples of the mini-batch. In a sequence model every token of every sentence counts as
#   an example, so for a tensor of shape (B, T, D) each of the D features is averaged over
#   the B·T tokens.
# * **Layer norm** looks at one token at a time and forms the group from its own D features.
#   Each of the B·T tokens gets its own mean and variance.
#
# Here is a batch of B = 2 sentences, T = 3 tokens each, D = 4 features per token. The
# integers are chosen so that the arithmetic stays readable.

# %%
x_np = np.array([[[1, 2, 3, 4],
                  [2, 4, 6, 8],
                  [0, 0, 1, 3]],
                 [[4, 3, 2, 1],
                  [1, 1, 1, 5],
                  [10, 0, 5, 5]]], dtype=np.float32)
B, T, D = x_np.shape
x = mg.tensor(x_np)
print("x has shape (B, T, D) =", x.shape)

# %% [markdown]
# ## Layer norm by hand
#
# Average over the last axis (the features). Each token's row becomes a row with mean 0 and
# variance 1. The first token, $[1, 2, 3, 4]$, has mean 2.5 and variance 1.25.

# %%
eps = 1e-5
mu_ln = x_np.mean(axis=-1, keepdims=True)                 # (B, T, 1): one mean per token
var_ln = x_np.var(axis=-1, keepdims=True)                 # biased variance, as in the formula
ln_by_hand = (x_np - mu_ln) / np.sqrt(var_ln + eps)
print("means per token:\n", mu_ln[..., 0])
print("first token normalised:", ln_by_hand[0, 0].round(4))
assert mu_ln.shape == (B, T, 1)
assert mu_ln[0, 0, 0] == 2.5 and np.isclose(var_ln[0, 0, 0], 1.25)

# %% [markdown]
# The library's `nn.LayerNorm(D)` normalises over the last D features and gives the same
# numbers.

# %%
layer_norm = nn.LayerNorm(D)
ln_out = layer_norm(x).numpy()
assert np.allclose(ln_out, ln_by_hand, atol=1e-5)
# every token (every row) now has mean 0 and variance 1
assert np.allclose(ln_out.mean(-1), 0, atol=1e-5) and np.allclose(ln_out.var(-1), 1, atol=1e-3)
print(ln_out.round(3))

# %% [markdown]
# Notice the second token, $[2, 4, 6, 8]$: it is twice the first one, yet its normalised row is
# identical. Layer norm removes each token's own offset and scale.

# %%
assert np.allclose(ln_out[0, 0], ln_out[0, 1], atol=1e-5)

# %% [markdown]
# ## Batch norm by hand
#
# Now average over the batch and time axes together, once per feature. There are only D = 4
# means, each taken over the B·T = 6 tokens. Feature 0 holds $1, 2, 0, 4, 1, 10$, whose mean
# is 3.

# %%
mu_bn = x_np.mean(axis=(0, 1), keepdims=True)              # (1, 1, D): one mean per feature
var_bn = x_np.var(axis=(0, 1), keepdims=True)
bn_by_hand = (x_np - mu_bn) / np.sqrt(var_bn + eps)
print("means per feature:", mu_bn.ravel().round(4))
assert mu_bn.shape == (1, 1, D) and mu_bn.ravel()[0] == 3.0

# %% [markdown]
# `nn.BatchNorm1d(C)` follows PyTorch and wants its features (channels) on axis 1: an input of
# shape (N, C) or (N, C, L). A (B, T, D) tensor is therefore permuted to (B, D, T) first, and
# back afterwards. The layer then averages over axes 0 and 2, which are our B and T.

# %%
batch_norm = nn.BatchNorm1d(D)
bn_out = batch_norm(x.permute(0, 2, 1)).permute(0, 2, 1).numpy()
assert np.allclose(bn_out, bn_by_hand, atol=1e-5)
# every feature (every column over all tokens) now has mean 0 and variance 1
flat = bn_out.reshape(B * T, D)
assert np.allclose(flat.mean(0), 0, atol=1e-5) and np.allclose(flat.var(0), 1, atol=1e-3)
print(bn_out.round(3))

# %% [markdown]
# The picture below shows the two results side by side, with the B·T tokens as rows and the D
# features as columns. In the left map every **row** averages to zero; in the right map every
# **column** does.

# %%
labels = [f"sentence {b}, token {t}" for b in range(B) for t in range(T)]
fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), sharey=True, constrained_layout=True)
for ax, data, name in zip(axes, [x_np, ln_out, bn_out],
                          ["input x", "layer norm: each row has mean 0",
                           "batch norm: each column has mean 0"]):
    im = ax.imshow(data.reshape(B * T, D), cmap="coolwarm")
    ax.set_title(name)
    ax.set_xlabel("feature d")
    ax.set_xticks(range(D))
    fig.colorbar(im, ax=ax, shrink=0.8)
axes[0].set_yticks(range(B * T), labels)
axes[0].set_ylabel("token (sentence, position)")
fig.suptitle("One (B, T, D) tensor normalised over each token's features (layer norm) "
             "or over all tokens (batch norm)")
savefig(fig, "10_layer_vs_batch_norm")

# %% [markdown]
# ## Consequence 1: a batch of one
#
# Batch norm estimates each feature's mean and variance from the $m$ examples in the batch. The
# estimate gets worse as $m$ shrinks, and at $m = 1$ it degenerates: the mean is the value
# itself and the variance is 0, so every output would be $\beta$ whatever the input. The library
# refuses that case during training, with PyTorch's message.

# %%
one_vector = mg.tensor(np.array([[1.0, 2.0, 3.0, 4.0]], dtype=np.float32))   # (N=1, C=4)
try:
    batch_norm(one_vector)
    raise AssertionError("batch norm accepted a single value per feature")
except ValueError as err:
    message = str(err)
print(message)
assert "Expected more than 1 value per channel when training" in message

# %% [markdown]
# Layer norm has no such problem: its statistics come from inside the one example.

# %%
assert np.allclose(layer_norm(one_vector).numpy(), ln_by_hand[0, 0], atol=1e-5)

# %% [markdown]
# A more subtle point. With a (B, T, D) tensor, batch norm pools over B·T tokens, so one
# sentence of several tokens would still run. But then the output for a sentence depends on
# which *other* sentences happen to share its batch. Layer norm gives each token a result of its
# own. Normalise sentence 0 alone and inside the batch, and compare:

# %%
alone = batch_norm(x[:1].permute(0, 2, 1)).permute(0, 2, 1).numpy()[0]
in_batch = bn_out[0]
print("batch norm, sentence 0 alone vs in the batch, largest difference:",
      float(np.abs(alone - in_batch).max()))
assert not np.allclose(alone, in_batch, atol=1e-2)

ln_alone = layer_norm(x[:1]).numpy()[0]
assert np.allclose(ln_alone, ln_out[0], atol=1e-6)

# %% [markdown]
# This matters for translation: sentences differ in length, batches are padded, and at
# inference time we often translate a single sentence. The lecture adds an empirical fact: plain
# batch norm was found to hurt on language tasks, and the study that showed it proposed a
# modified version called PowerNorm.

# %% [markdown]
# ## Consequence 2: training mode and evaluation mode
#
# At test time there may be no batch to average over, so batch norm keeps **running
# statistics**: during training, after every batch, it moves its stored mean and variance a
# step of size `momentum` (0.1) towards the batch's values,
#
# $$\hat\mu \leftarrow (1 - 0.1)\,\hat\mu + 0.1\,\mu_{\text{batch}}, \qquad
#   \hat\sigma^2 \leftarrow (1 - 0.1)\,\hat\sigma^2 + 0.1\,\sigma^2_{\text{batch, unbiased}} .$$
#
# The stored variance uses the unbiased estimate (dividing by $m - 1$), as PyTorch does, while
# the normalisation inside the batch uses the biased one. In `eval()` mode the layer uses the
# stored values instead of the batch's. To check one update exactly, start from a fresh layer
# (running mean 0, running variance 1) and give it our batch once.

# %%
fresh = nn.BatchNorm1d(D)
fresh(x.permute(0, 2, 1))                                  # one training step
m = B * T
expected_mean = 0.9 * 0.0 + 0.1 * mu_bn.ravel()
expected_var = 0.9 * 1.0 + 0.1 * var_bn.ravel() * m / (m - 1)
print("running mean:", fresh.running_mean.numpy().round(4))
print("running var: ", fresh.running_var.numpy().round(4))
assert np.allclose(fresh.running_mean.numpy(), expected_mean, atol=1e-6)
assert np.allclose(fresh.running_var.numpy(), expected_var, atol=1e-5)

# %% [markdown]
# In evaluation mode the batch of one works, because nothing is estimated from it. The answer,
# however, is different from the training-mode output for the same numbers: the statistics
# come from elsewhere.

# %%
fresh.eval()
eval_out = fresh(x.permute(0, 2, 1)).permute(0, 2, 1).numpy()
single = fresh(one_vector).numpy()
fresh.train()
print("eval output of the single vector:", single.round(4))
assert single.shape == (1, D)
assert not np.allclose(eval_out, bn_out, atol=1e-2)

# %% [markdown]
# How good are the running estimates? Feed batches drawn from a distribution whose mean is 3 and
# standard deviation 2, and watch the stored mean of one feature approach 3. It is an
# exponential moving average, so it needs a few dozen steps and then keeps jittering with the
# batches.

# %%
rng = np.random.default_rng(0)
steps = 60 if SMALL else 200
tracker = nn.BatchNorm1d(D)
history = []
for _ in range(steps):
    batch = rng.normal(3.0, 2.0, size=(16, D)).astype(np.float32)
    tracker(mg.tensor(batch))
    history.append(tracker.running_mean.numpy()[0])
print(f"running mean after {steps} batches: {history[-1]:.3f}")
assert abs(history[-1] - 3.0) < 0.5 and abs(history[0] - 0.3) < 0.2

fig, ax = plt.subplots(figsize=(7, 3.5))
ax.plot(range(1, steps + 1), history, label="running mean of feature 0")
ax.axhline(3.0, color="k", ls="--", lw=1, label="true mean 3")
ax.set_xlabel("training batches seen")
ax.set_ylabel("stored mean")
ax.set_title("Batch norm's running mean (momentum 0.1) approaches the data's mean")
ax.legend()
savefig(fig, "10_running_mean")

# %% [markdown]
# Layer norm stores no statistics at all (it has no buffers), so training and evaluation give
# the same output. One less thing that can differ between the model you trained and the model
# you ship.

# %%
assert list(layer_norm.named_buffers()) == []
layer_norm.eval()
assert np.allclose(layer_norm(x).numpy(), ln_out)
layer_norm.train()
print("batch norm buffers:", [name for name, _ in batch_norm.named_buffers()])

# %% [markdown]
# ## Summary
#
# | | batch norm | layer norm |
# |---|---|---|
# | statistics per | feature, over the batch (and time) | token, over its features |
# | for (B, T, D) | D means | B·T means |
# | batch of one | degenerate (refused in training) | fine |
# | train vs eval | different (running statistics) | identical |
#
# The Transformer applies layer norm after every sublayer. Tutorial 11 puts it, together with the
# residual connection, into the "Add & Norm" block.

# %% [markdown]
# ## Exercise: layer norm
#
# Write `layer_norm(x, eps)` for a NumPy array of shape $(B, T, D)$: subtract each token's
# mean over its $D$ features and divide by $\sqrt{\sigma^2 + \epsilon}$ (biased variance), with
# no $\gamma$ or $\beta$.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_layer_norm


def layer_norm(x, eps=1e-5):
    """Normalise every token (the last axis) of x (B, T, D) to mean 0, variance 1."""
    raise NotImplementedError


check(check_layer_norm, layer_norm);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def layer_norm(x, eps=1e-5):
    """Normalise every token (the last axis) of x (B, T, D) to mean 0, variance 1."""
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps)


assert check(check_layer_norm, layer_norm)

# %% [markdown]
# ## Test yourself
#
# **1.** A batch of 8 sentences of 20 tokens with $d_{model} = 512$ goes through a normalisation
# layer. How many separate means does layer norm compute, and how many does batch norm (pooling
# batch and time)?
#
# <details><summary>Answer</summary>
#
# Layer norm: one per token, $8 \times 20 = 160$. Batch norm: one per feature, 512.
#
# </details>

# %%
big = mg.randn(8, 20, 512)
assert big.mean(-1).numel() == 8 * 20 == 160
assert big.mean((0, 1)).numel() == 512

# %% [markdown]
# **2.** What does layer norm (no $\epsilon$, $\gamma = 1$, $\beta = 0$) make of the vector
# $[1, 2, 3, 4]$? And of $[10, 20, 30, 40]$?
#
# <details><summary>Answer</summary>
#
# Mean 2.5, variance $(2.25 + 0.25 + 0.25 + 2.25)/4 = 1.25$, so the result is
# $[-1.5, -0.5, 0.5, 1.5]/\sqrt{1.25} \approx [-1.342, -0.447, 0.447, 1.342]$. The second vector
# is the first scaled by 10; layer norm divides the scale out again, so the answer is the same.
#
# </details>

# %%
ln0 = nn.LayerNorm(4, eps=0.0)
for v in ([1, 2, 3, 4], [10, 20, 30, 40]):
    out = ln0(mg.tensor(np.array(v, dtype=np.float32))).numpy()
    assert np.allclose(out, [-1.342, -0.447, 0.447, 1.342], atol=1e-3)

# %% [markdown]
# **3.** A fresh batch norm layer with one feature (running mean 0, momentum 0.1) sees two
# training batches: the first has mean 2, the second mean 4. What is the running mean afterwards?
#
# <details><summary>Answer</summary>
#
# After the first batch $0.9 \cdot 0 + 0.1 \cdot 2 = 0.2$; after the second
# $0.9 \cdot 0.2 + 0.1 \cdot 4 = 0.58$.
#
# </details>

# %%
q3 = nn.BatchNorm1d(1)
q3(mg.tensor(np.array([[1.0], [3.0]], dtype=np.float32)))      # mean 2
q3(mg.tensor(np.array([[3.0], [5.0]], dtype=np.float32)))      # mean 4
assert np.isclose(q3.running_mean.numpy()[0], 0.58, atol=1e-6)

# %% [markdown]
# **4.** Why is a Transformer translating one sentence at a time at inference unaffected by its
# normalisation layers' batch size?
#
# <details><summary>Answer</summary>
#
# Its layer norms compute every statistic from one token's own features; nothing is
# shared across the batch, so a token's output is the same whether it is translated alone or in a
# batch of a hundred (checked above with `ln_alone`, and again here on random data).
#
# </details>

# %%
tokens = mg.randn(5, 7, 16)
ln16 = nn.LayerNorm(16)
assert np.allclose(ln16(tokens).numpy()[2:3], ln16(tokens[2:3]).numpy(), atol=1e-6)
print("all checks passed")
