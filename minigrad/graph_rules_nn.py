"""Tensor-level rules of the products and the fused neural-network ops: matmul, linear,
softmax, log-softmax, dropout, layer norm, cross entropy, einsum and norms.

The fused ops keep only what their first-order backward needs (layer norm keeps the
normalised input and 1 / std, not the input); their rules rebuild the rest from it with
differentiable ops, so the second derivative is exact without keeping more on the first-order
path.
"""
from __future__ import annotations

import numpy as np

from . import kernels, ops
from .autograd.op import Op
from .graph_rules import constant, rule, saved_input, saved_output
from .ops.einsum import gradient_plans


@rule(ops.MatMul)
def _matmul(ctx, g):
    a2, b2 = ctx.saved
    na, nb = ctx.ndims
    need = ctx.needs_input_grad
    # the forward made 1-D operands matrices; the stand-ins have the operands' own shapes
    a = saved_input(ctx, 0, a2[0] if na == 1 else a2).reshape(a2.shape)
    b = saved_input(ctx, 1, b2[:, 0] if nb == 1 else b2).reshape(b2.shape)
    if nb == 1:
        g = g.unsqueeze(-1)
    if na == 1:
        g = g.unsqueeze(-2)
    ga = gb = None
    if need[0]:
        ga = g @ b.transpose(-1, -2)
        ga = ga.select(-2, 0) if na == 1 else ga
    if need[1]:
        gb = a.transpose(-1, -2) @ g
        gb = gb.select(-1, 0) if nb == 1 else gb
    return ga, gb


@rule(ops.Linear)
def _linear(ctx, g):
    x, weight = ctx.saved
    need = ctx.needs_input_grad
    w = saved_input(ctx, 1, weight)
    g2 = g.reshape(-1, weight.shape[0])
    gx = g @ w if need[0] else None
    gw = g2.t() @ saved_input(ctx, 0, x).reshape(-1, x.shape[-1]) if need[1] else None
    gb = g2.sum(0) if len(need) > 2 and need[2] else None
    return gx, gw, gb


class SoftmaxValue(Op):
    """A softmax output y (along the last dim) that a fused node kept, as an op of that
    node's input: forward returns y, backward is softmax's. The input is a stand-in whose
    values are not read; the gradient reaches the input's node."""

    @staticmethod
    def forward(ctx, stand_in, y=None):
        ctx.dim = y.ndim - 1
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        return kernels.softmax_backward(ctx.saved[0], np.ascontiguousarray(g))


def _output(ctx):
    """Softmax's and log-softmax's output, from the saved array (moved to the last axis)."""
    y = ctx.saved[0]
    d, ndim = ctx.dim, len(ctx.out_shape)
    return saved_output(ctx, y if d == ndim - 1 or ndim == 0 else np.moveaxis(y, -1, d)), d


@rule(ops.Softmax, SoftmaxValue)
def _softmax(ctx, g):
    y, d = _output(ctx)
    return y * (g - (g * y).sum(d, keepdim=True))


@rule(ops.LogSoftmax)
def _log_softmax(ctx, g):
    y, d = _output(ctx)
    return g - y.exp() * g.sum(d, keepdim=True)


@rule(ops.Dropout)
def _dropout(ctx, g):
    return ops.Dropout.apply(g, p=ctx.p, seed=ctx.seed, mask=ctx.mask)  # the same mask


@rule(ops.DropoutAdd)
def _dropout_add(ctx, g):
    need = ctx.needs_input_grad
    return g, (ops.Dropout.apply(g, p=ctx.p, seed=ctx.seed, mask=ctx.mask) if need[1]
               else None)


@rule(ops.ReluDropout)
def _relu_dropout(ctx, g):
    out = ctx.saved[0]
    return g * constant(((out > 0) / (1 - ctx.p)).astype(g.dtype))


def _layer_norm_grads(ctx, g, x, weight_index):
    """Layer norm's gradients from `x`, a stand-in for its input (N, D) built by the caller:
    any input minus a per-row constant, which layer norm ignores, so normalising it again
    gives the saved x_hat, and the derivative is exact. Returns (dx (N, D), dweight, dbias)."""
    xhat, rstd, weight = ctx.saved
    need = ctx.needs_input_grad
    centered = x - x.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)
    # var + eps, eps recovered from the saved 1 / std: the value is exact, the slope var's
    r = (var + constant(1 / (rstd * rstd) - var._array)) ** -0.5
    xh = centered * r
    g2 = g.reshape(xhat.shape)
    h = g2 if weight is None else g2 * saved_input(ctx, weight_index, weight).reshape(-1)
    dx = (h - h.mean(-1, keepdim=True) - xh * (h * xh).mean(-1, keepdim=True)) * r
    w_shape = None if weight is None else weight.shape
    wants = [len(need) > i and need[i] for i in (weight_index, weight_index + 1)]
    gw = (g2 * xh).sum(0).reshape(w_shape) if wants[0] else None
    gb = g2.sum(0).reshape(w_shape) if wants[1] else None
    return dx, gw, gb


@rule(ops.LayerNorm)
def _layer_norm(ctx, g):
    xhat, rstd, _ = ctx.saved
    x_shape, _ = ctx.shapes
    # x minus its row means stands in for x, which the node did not keep
    x = saved_input(ctx, 0, (xhat / rstd).reshape(x_shape)).reshape(xhat.shape)
    dx, gw, gb = _layer_norm_grads(ctx, g, x, 1)
    return dx.reshape(x_shape), gw, gb


@rule(ops.DropoutAddLayerNorm)
def _dropout_add_layer_norm(ctx, g):
    """LayerNorm(x + dropout(s)): the stand-in for the sum is x's stand-in plus dropout of a
    zero stand-in for s, so its gradient reaches x as it is and s through the mask."""
    xhat, rstd, _ = ctx.saved
    shape = g.shape
    x = saved_input(ctx, 0, (xhat / rstd).reshape(shape))
    s = ops.Dropout.apply(saved_input(ctx, 1, np.zeros(shape, xhat.dtype)), p=ctx.p,
                          seed=ctx.seed, mask=ctx.mask)
    dh, gw, gb = _layer_norm_grads(ctx, g, (x + s).reshape(xhat.shape), 2)
    dh = dh.reshape(shape)
    need = ctx.needs_input_grad
    ds = ops.Dropout.apply(dh, p=ctx.p, seed=ctx.seed, mask=ctx.mask) if need[1] else None
    return dh, ds, gw, gb


@rule(ops.MaskedSoftmaxDropout)
def _masked_softmax_dropout(ctx, g):
    """dropout(softmax(x masked)): dx = y * (g' - sum(g' * y)), g' = dropout(g)."""
    allowed, p, seed = ctx.allowed, ctx.p, ctx.seed
    y_saved = ctx.saved[0]
    y = SoftmaxValue.apply(saved_input(ctx, 0, y_saved), y=y_saved)
    g = ops.Dropout.apply(g, p=p, seed=seed) if p > 0 else g
    return y * (g - (g * y).sum(-1, keepdim=True))


@rule(ops.CrossEntropy)
def _cross_entropy(ctx, g):
    logits = ctx.saved[0]
    safe, keep, eps, reduction, count = ctx.vals
    n, c = logits.shape
    target = np.full((n, c), eps / c, dtype=logits.dtype)
    target[np.arange(n), safe] += 1 - eps
    if reduction == "none":
        w = g.reshape(n, 1) * constant(keep[:, None].astype(logits.dtype))
    else:
        share = keep / max(count, 1) if reduction == "mean" else keep
        w = g * constant(share[:, None].astype(logits.dtype))
    return (saved_input(ctx, 0, logits).softmax(-1) - constant(target)) * w


@rule(ops.BinaryCrossEntropy)
def _binary_cross_entropy(ctx, g):
    p, t, _, _ = ctx.saved
    need = ctx.needs_input_grad
    prob, target = saved_input(ctx, 0, p), saved_input(ctx, 1, t)
    eps = float(np.float32(1e-12))  # the first-order backward's floor of p (1 - p)
    gp = g * (prob - target) / ((1 - prob) * prob).clamp(min=eps) if need[0] else None
    gt = g * ((1 - prob).log() - prob.log()) if need[1] else None
    return gp, gt


@rule(ops.Einsum)
def _einsum(ctx, g):
    """Operand i's gradient: the einsum of g with every other operand, written to i's
    subscripts (as the first-order backward, with differentiable einsums)."""
    operands = [saved_input(ctx, j, a) for j, a in enumerate(ctx.saved)]
    grads = [None] * len(ctx.ins)
    for i, equation, others, summed in gradient_plans(ctx):
        gi = ops.Einsum.apply(g, *[operands[j] for j in others], equation=equation)
        for pos in summed:
            gi = gi.unsqueeze(pos)
        shape = ctx.shapes[i]
        broadcast = tuple(ax for ax, n in enumerate(shape) if n == 1 and gi.shape[ax] != 1)
        if broadcast:  # size-1 dims that `...` broadcast
            gi = gi.sum(dim=broadcast, keepdim=True)
        grads[i] = gi.expand(shape) if gi.shape != tuple(shape) else gi
    return tuple(grads)


@rule(ops.Norm)
def _norm(ctx, g):
    """d ||a||_p / da = sign(a) |a|^(p-1) / ||a||^(p-1); 0 where the norm is 0."""
    a, out = ctx.saved
    g = g.reshape(out.shape)  # the reduced dims put back as size 1
    p = ctx.p
    sign = constant(np.sign(a))
    if p == np.inf:
        hit = np.abs(a) == out
        return g * constant((np.sign(a) * hit / hit.sum(axis=ctx.dims, keepdims=True))
                            .astype(a.dtype))
    if p == 1.0:
        return g * sign
    norm = saved_output(ctx, out).reshape(out.shape)
    safe = ops.Where.apply(out == 0, constant(np.ones((), a.dtype)), norm)
    x = saved_input(ctx, 0, a)
    local = x / safe if p == 2.0 else sign * x.abs() ** (p - 1) / safe ** (p - 1)
    return g * local


__all__ = ["SoftmaxValue"]
