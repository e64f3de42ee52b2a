"""Softmax and log-softmax along a dim, and attention's weights (softmax of the masked scores,
then dropout) as one op: each forward and backward is one fused kernel.

The kernels work on the last axis; another `dim` is moved to the end and back.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.op import Op
from ._util import normalize_dim


def _to_last(a, dim, op):
    d = normalize_dim(dim, a.ndim, op)
    if a.ndim and a.shape[d] == 0:
        # no entries to normalise over (attention with zero keys, say): NumPy's own message
        # ("zero-size array to reduction operation maximum") would not say which op failed
        raise ValueError(f"{op}: dim {dim} of the input of shape {a.shape} has size 0, so "
                         f"there is nothing to normalise over")
    return d, (a if d == a.ndim - 1 or a.ndim == 0 else np.moveaxis(a, d, -1))


def _from_last(a, d, ndim):
    return a if d == ndim - 1 or ndim == 0 else np.moveaxis(a, -1, d)


class _AlongDim(Op):
    """An op whose kernels work on the last axis, applied along `dim`; `kernel` names the
    forward kernel in `minigrad.kernels` (and the op in errors), `kernel + "_backward"` its
    gradient, which needs only the output."""

    kernel = None

    @staticmethod
    def forward(ctx, a, dim=-1):
        n = a.ndim
        if dim.__class__ is int and (dim == -1 or dim == n - 1) and n and a.shape[-1]:
            # the usual call (attention's weights, a sampling loop's next-token probabilities),
            # taken without the calls that move another dim to the end and back: on the
            # small rows of a sampling loop they cost a sixth of the op
            ctx.dim = n - 1
            y = getattr(kernels, ctx.kernel)(a)
            ctx.save_for_backward(y)
            return y
        ctx.dim, x = _to_last(a, dim, ctx.kernel)
        y = getattr(kernels, ctx.kernel)(x)
        ctx.save_for_backward(y)
        return _from_last(y, ctx.dim, n)

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]
        _, g = _to_last(g, ctx.dim, ctx.kernel)
        return _from_last(getattr(kernels, ctx.kernel + "_backward")(y, g), ctx.dim, y.ndim)


class Softmax(_AlongDim):
    """exp(x_i - max) / sum_j exp(x_j - max); -inf entries get 0, an all -inf row gives 0s."""

    kernel = "softmax"


class LogSoftmax(_AlongDim):
    """x_i - logsumexp(x); the gradient is g - softmax(x) * sum(g)."""

    kernel = "log_softmax"


class MaskedSoftmaxDropout(Op):
    """Attention's weights, dropout(softmax(x masked to -inf where not `allowed`), p, seed)
    along the last dim, as one op: the numbers of MaskedFill, Softmax and Dropout in turn.

    `allowed` is a bool array broadcastable to x (None: every key allowed); p = 0 skips the
    dropout. Backward keeps the softmax output y and regenerates the dropout mask from the
    seed: dx = y * (g' - sum(g' * y)) with g' = dropout(g), and 0 where not allowed.
    """

    @staticmethod
    def forward(ctx, a, allowed=None, p=0.0, seed=0):
        _to_last(a, -1, "softmax")   # an empty last dim: the error softmax gives
        y, out = kernels.masked_softmax_dropout(a, allowed, p, seed)
        ctx.save_for_backward(y)
        ctx.allowed, ctx.p, ctx.seed = allowed, p, seed
        return out

    @staticmethod
    def backward(ctx, g):
        return kernels.masked_softmax_dropout_backward(ctx.saved[0], g, ctx.allowed, ctx.p,
                                                       ctx.seed)
