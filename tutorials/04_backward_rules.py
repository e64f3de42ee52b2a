# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 4. Backward rules, written by you
#
# Tutorial 3 showed that the engine only schedules: every derivative comes from an op's
# `backward(ctx, grad)`. Here you write the backward rules of the four operations a Transformer
# spends its gradients on: the matrix product, softmax, layer norm and the label-smoothed
# cross-entropy. Then you put them together into the backward pass of one attention head,
# $\partial L/\partial Q$, $\partial L/\partial K$ and $\partial L/\partial V$, and compare it
# with what minigrad's autograd computes.
#
# A backward rule never builds a Jacobian. It receives $G = \partial L/\partial Y$, shaped like
# the output, and returns $\partial L/\partial X = \sum_{Y} G \cdot \partial Y/\partial X$,
# shaped like the input: a *vector-Jacobian product*. Each section derives that product, then
# asks you for the code. Each checker wraps your rule in an `Op`, runs `gradcheck` on random
# float64 inputs from the smallest shapes up, and when the check fails it names the usual mistake
# it recognises. Each exercise stands alone: it only uses your function and the library.

# %%
import math

from _common import SMALL, savefig

import matplotlib.pyplot as plt

import numpy as np

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn import functional as F

from _exercises import (check, check_attention_backward, check_cross_entropy_backward,
                        check_layer_norm_backward, check_matmul_backward, check_softmax_backward)

rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. The matrix product: where the transposes come from
#
# $C = AB$ with $A$ of shape $(n, k)$ and $B$ of shape $(k, m)$: $C_{ij} = \sum_p A_{ip} B_{pj}$.
# The element $A_{ip}$ appears in every $C_{ij}$ of row $i$, with coefficient $B_{pj}$, so
#
# $$\frac{\partial L}{\partial A_{ip}} = \sum_j G_{ij} B_{pj} = (G B^\top)_{ip}, \qquad
#   \frac{\partial L}{\partial B_{pj}} = \sum_i A_{ip} G_{ij} = (A^\top G)_{pj}.$$
#
# A quick way to remember it: $\partial L/\partial A$ must have $A$'s shape $(n, k)$, and the
# only product of $G$ $(n, m)$ and $B$ $(k, m)$ with that shape is $G B^\top$.

# %%
def matmul_backward(A, B, G):
    """(dL/dA, dL/dB) for C = A @ B, given G = dL/dC."""
    raise NotImplementedError


check(check_matmul_backward, matmul_backward);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def matmul_backward(A, B, G):
    """(dL/dA, dL/dB) for C = A @ B, given G = dL/dC."""
    return G @ B.T, A.T @ G


assert check(check_matmul_backward, matmul_backward)

# %% [markdown]
# minigrad's own `MatMul` node computes the same two products. We feed it the same $G$ through
# `backward(gradient=...)`:

# %%
A, B = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
G = rng.standard_normal((3, 2))
At, Bt = mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)
(At @ Bt).backward(mg.tensor(G))
dA, dB = matmul_backward(A, B, G)
assert np.allclose(At.grad.numpy(), dA) and np.allclose(Bt.grad.numpy(), dB)

# %% [markdown]
# ## 2. Softmax: a Jacobian you never build
#
# For one row, $y = \mathrm{softmax}(x)$ has $\partial y_i / \partial x_j = y_i([i = j] - y_j)$:
# the Jacobian is $\mathrm{diag}(y) - y y^\top$, a full $C \times C$ matrix (for a vocabulary of
# 37,000 words, 1.4 billion numbers per row). The vector-Jacobian product collapses it:
#
# $$\frac{\partial L}{\partial x_j} = \sum_i g_i\, y_i([i = j] - y_j)
#   = y_j \Big(g_j - \sum_i g_i y_i\Big),$$
#
# two passes over the row. Here is the full Jacobian for a row of four, and the product that
# replaces it:

# %%
x_row = np.array([1.0, 2.0, 0.5, -1.0])
y_row = np.exp(x_row) / np.exp(x_row).sum()
J = np.diag(y_row) - np.outer(y_row, y_row)
g_row = np.array([0.3, -1.0, 2.0, 0.1])
print("Jacobian of softmax:\n", J.round(3))
print("g^T J =", (g_row @ J).round(4))
assert np.allclose(J.sum(0), 0)  # adding a constant to x changes nothing
assert np.allclose(g_row @ J, y_row * (g_row - (g_row * y_row).sum()))

fig, axes = plt.subplots(1, 2, figsize=(7, 3), gridspec_kw={"width_ratios": [4, 1.3]})
axes[0].imshow(J, cmap="RdBu", vmin=-0.25, vmax=0.25)
axes[0].set_title("Jacobian diag(y) - y y^T")
axes[1].imshow((g_row @ J)[:, None], cmap="RdBu", vmin=-0.5, vmax=0.5)
axes[1].set_title("g^T J")
for ax in axes:
    ax.set_xticks([])
    ax.set_yticks(range(4))
for (i, j), v in np.ndenumerate(J):
    axes[0].text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
for i, v in enumerate(g_row @ J):
    axes[1].text(0, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
savefig(fig, "04_softmax_jacobian")

# %% [markdown]
# Write the rule for a batch: `y` and `g` have shape `(..., C)`, and every row is its own
# softmax.

# %%
def softmax_backward(y, g):
    """dL/dx for y = softmax(x) over the last axis, given y and g = dL/dy."""
    raise NotImplementedError


check(check_softmax_backward, softmax_backward);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def softmax_backward(y, g):
    """dL/dx for y = softmax(x) over the last axis, given y and g = dL/dy."""
    return y * (g - (g * y).sum(-1, keepdims=True))


assert check(check_softmax_backward, softmax_backward)

# %% [markdown]
# ## 3. Layer norm: the statistics depend on the input too
#
# Without its scale and shift, layer norm maps a row $x$ of $D$ numbers to
# $\hat x = (x - \mu)/\sigma$ with $\mu = \frac1D\sum_i x_i$ and
# $\sigma = \sqrt{\frac1D\sum_i (x_i - \mu)^2 + \epsilon}$. Both $\mu$ and $\sigma$ move when any
# $x_j$ moves, which gives two extra terms beside the obvious $g/\sigma$:
#
# $$\frac{\partial L}{\partial x} = \frac{1}{\sigma}\Big(g - \overline{g}
#   - \hat x\,\overline{g \hat x}\Big),$$
#
# where a bar is the mean over the row. The first subtraction is the path through $\mu$, the
# second the path through $\sigma$. The result sums to zero over the row and, when
# $\epsilon = 0$, is orthogonal to $\hat x$: shifting a row, or (without $\epsilon$) scaling
# it, does not change what layer norm outputs, so no gradient points that way.

# %%
def layer_norm_backward(x, g, eps):
    """dL/dx for y = (x - mean) / sqrt(var + eps) over the last axis, given g = dL/dy."""
    raise NotImplementedError


check(check_layer_norm_backward, layer_norm_backward);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def layer_norm_backward(x, g, eps):
    """dL/dx for y = (x - mean) / sqrt(var + eps) over the last axis, given g = dL/dy."""
    sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
    xhat = (x - x.mean(-1, keepdims=True)) / sigma
    return (g - g.mean(-1, keepdims=True) - xhat * (g * xhat).mean(-1, keepdims=True)) / sigma


assert check(check_layer_norm_backward, layer_norm_backward)

# %% [markdown]
# The two properties, checked on minigrad's own layer norm (with $\epsilon = 0$):

# %%
xs = mg.tensor(rng.standard_normal((2, 5)), requires_grad=True)
F.layer_norm(xs, (5,), eps=0.0).backward(mg.tensor(rng.standard_normal((2, 5))))
xhat = F.layer_norm(xs.detach(), (5,), eps=0.0).numpy()
assert np.allclose(xs.grad.numpy().sum(-1), 0, atol=1e-10)
assert np.allclose((xs.grad.numpy() * xhat).sum(-1), 0, atol=1e-8)

# %% [markdown]
# ## 4. Cross-entropy with label smoothing
#
# For $N$ rows of logits $z$ and PyTorch's smoothed target
# $q = (1 - \epsilon)\,\mathrm{onehot}(y) + \epsilon / C$, the loss is
# $L = -\frac1N \sum_n \sum_c q_{nc} \log \mathrm{softmax}(z_n)_c$. The log-softmax and the
# softmax's Jacobian cancel almost everything, since $\sum_c q_{nc} = 1$:
#
# $$\frac{\partial L}{\partial z_n} = \frac{1}{N}\big(\mathrm{softmax}(z_n) - q_n\big).$$
#
# This is why a fused cross-entropy never stores the probabilities twice: the gradient is the
# prediction minus the target.

# %%
def cross_entropy_backward(logits, target, eps):
    """dL/dlogits for F.cross_entropy(logits (N, C), target (N,), label_smoothing=eps)."""
    raise NotImplementedError


check(check_cross_entropy_backward, cross_entropy_backward);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def cross_entropy_backward(logits, target, eps):
    """dL/dlogits for F.cross_entropy(logits (N, C), target (N,), label_smoothing=eps)."""
    N, C = logits.shape
    e = np.exp(logits - logits.max(-1, keepdims=True))
    q = np.full((N, C), eps / C)
    q[np.arange(N), target] += 1 - eps
    return (e / e.sum(-1, keepdims=True) - q) / N


assert check(check_cross_entropy_backward, cross_entropy_backward)

# %% [markdown]
# And against the library's loss, with $\epsilon = 0.1$ as in the paper:

# %%
z = rng.standard_normal((6, 10))
target = rng.integers(0, 10, 6)
zt = mg.tensor(z, requires_grad=True)
F.cross_entropy(zt, mg.tensor(target), label_smoothing=0.1).backward()
assert np.allclose(zt.grad.numpy(), cross_entropy_backward(z, target, 0.1))

# %% [markdown]
# ## 5. One attention head, backward by hand
#
# The head of tutorial 6 computes, for queries $Q$ $(T, d)$, keys $K$ $(S, d)$ and values $V$
# $(S, d_v)$:
#
# $$S = QK^\top / \sqrt d, \qquad P = \mathrm{softmax}(S), \qquad O = PV.$$
#
# Backward goes through the same three steps in reverse, each one a rule from above. Given
# $G = \partial L/\partial O$:
#
# 1. $O = PV$ is a matrix product: $\partial L/\partial V = P^\top G$ and
#    $\partial L/\partial P = G V^\top$;
# 2. softmax by rows: $\partial L/\partial S = P \odot (\partial L/\partial P -
#    \mathrm{rowsum}(\partial L/\partial P \odot P))$;
# 3. $S = QK^\top/\sqrt d$ is a matrix product with a scale:
#    $\partial L/\partial Q = \frac{1}{\sqrt d}\,\frac{\partial L}{\partial S} K$ and
#    $\partial L/\partial K = \frac{1}{\sqrt d}\,\big(\frac{\partial L}{\partial S}\big)^\top Q$.
#
# Write it with NumPy; the checker compares it with `gradcheck` on heads of several shapes.

# %%
def attention_backward(Q, K, V, G):
    """(dQ, dK, dV) for O = softmax(Q K^T / sqrt(d)) V, given G = dL/dO."""
    raise NotImplementedError


check(check_attention_backward, attention_backward);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def attention_backward(Q, K, V, G):
    """(dQ, dK, dV) for O = softmax(Q K^T / sqrt(d)) V, given G = dL/dO."""
    scale = 1 / math.sqrt(Q.shape[-1])
    S = Q @ K.T * scale
    P = np.exp(S - S.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    dV = P.T @ G
    dP = G @ V.T
    dS = P * (dP - (dP * P).sum(-1, keepdims=True))
    return dS @ K * scale, dS.T @ Q * scale, dV


assert check(check_attention_backward, attention_backward)

# %% [markdown]
# Now the same head through minigrad's autograd, with four queries, six keys and $d = 8$ (three,
# four and 4 in small mode): three gradients by hand, three by the engine.

# %%
T_q, S_k, d = (3, 4, 4) if SMALL else (4, 6, 8)
Qn, Kn, Vn = (rng.standard_normal(s) for s in ((T_q, d), (S_k, d), (S_k, d)))
Gn = rng.standard_normal((T_q, d))
Qt, Kt, Vt = (mg.tensor(a, requires_grad=True) for a in (Qn, Kn, Vn))
out = F.softmax(Qt @ Kt.transpose(0, 1) / math.sqrt(d), dim=-1) @ Vt
out.backward(mg.tensor(Gn))
mine = attention_backward(Qn, Kn, Vn, Gn)
print(f"{T_q} queries, {S_k} keys, d = {d}")
for name, by_hand, t in zip("QKV", mine, (Qt, Kt, Vt)):
    err = np.abs(by_hand - t.grad.numpy()).max()
    print(f"d{name}: largest difference from autograd {err:.2e}")
    assert err < 1e-12
assert gradcheck(lambda q, k, v: F.softmax(q @ k.transpose(0, 1) / math.sqrt(d), dim=-1) @ v,
                 [mg.tensor(a, requires_grad=True) for a in (Qn, Kn, Vn)])

# %% [markdown]
# ## Test yourself
#
# **1.** For $C = AB$ with $A$ of shape $(64, 512)$ and $B$ of shape $(512, 2048)$, how many
# multiply-adds does the backward pass cost compared with the forward pass?
#
# <details><summary>Answer</summary>
#
# Forward is one product of $64 \cdot 512 \cdot 2048$ multiply-adds. Backward is two products of
# the same size ($GB^\top$ and $A^\top G$), so twice the forward: this is why a training step
# costs about three forward passes.
#
# </details>

# %%
n, k, m = 64, 512, 2048
forward_cost = n * k * m
backward_cost = n * m * k + k * n * m  # G (n, m) @ B^T (m, k), and A^T (k, n) @ G (n, m)
assert backward_cost == 2 * forward_cost

# %% [markdown]
# **2.** Softmax's gradient for the input row sums to zero whatever $g$ is. Why?
#
# <details><summary>Answer</summary>
#
# $\sum_j y_j(g_j - \sum_i g_i y_i) = \sum_j y_j g_j - \sum_i g_i y_i \sum_j y_j = 0$ because
# $\sum_j y_j = 1$. Adding the same number to every logit leaves the softmax unchanged, so no
# gradient can point in that direction.
#
# </details>

# %%
y = np.exp(x_row) / np.exp(x_row).sum()
for _ in range(3):
    g = rng.standard_normal(4)
    assert abs(softmax_backward(y[None], g[None]).sum()) < 1e-12

# %% [markdown]
# **3.** With label smoothing $\epsilon = 0.1$ and $C = 4$, what is the gradient of the loss of
# one example (N = 1) for logits that are already the smoothed target's log-probabilities?
#
# <details><summary>Answer</summary>
#
# Zero: $\mathrm{softmax}(z) = q$ exactly, so $\partial L/\partial z = q - q = 0$. The smoothed
# loss is minimal there, at the entropy of $q$, not at 0.
#
# </details>

# %%
q = np.full(4, 0.1 / 4)
q[2] += 0.9
assert np.allclose(cross_entropy_backward(np.log(q)[None], np.array([2]), 0.1), 0)
print("all checks of tutorial 4 pass")
