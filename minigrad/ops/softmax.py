"""Softmax, log-softmax and dropout (alone, after a ReLU, before a residual add, after
attention's mask and softmax): the ops whose forward and backward are fused kernels.

The kernels work on the last axis; another `dim` is moved to the end and back.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.function import Function
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


class Softmax(Function):
    """exp(x_i - max) / sum_j exp(x_j - max); -inf entries get 0, an all -inf row gives 0s."""

    @staticmethod
    def forward(ctx, a, dim=-1):
        ctx.dim, x = _to_last(a, dim, "softmax")
        y = kernels.softmax(x)
        ctx.save_for_backward(y)
        return _from_last(y, ctx.dim, a.ndim)

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]
        _, g = _to_last(g, ctx.dim, "softmax")
        return _from_last(kernels.softmax_backward(y, g), ctx.dim, y.ndim)


class LogSoftmax(Function):
    """x_i - logsumexp(x); the gradient is g - softmax(x) * sum(g)."""

    @staticmethod
    def forward(ctx, a, dim=-1):
        ctx.dim, x = _to_last(a, dim, "log_softmax")
        y = kernels.log_softmax(x)
        ctx.save_for_backward(y)
        return _from_last(y, ctx.dim, a.ndim)

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]
        _, g = _to_last(g, ctx.dim, "log_softmax")
        return _from_last(kernels.log_softmax_backward(y, g), ctx.dim, y.ndim)


class Dropout(Function):
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted dropout).

    The mask comes from a counter-based hash of (seed, element index), so backward regenerates
    it from the seed instead of storing it.
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0):
        ctx.p, ctx.seed = p, seed
        return kernels.dropout(np.ascontiguousarray(a), p, seed)

    @staticmethod
    def backward(ctx, g):
        return kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)


class MaskedSoftmaxDropout(Function):
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
        ctx.mask = (allowed, p, seed)
        return out

    @staticmethod
    def backward(ctx, g):
        allowed, p, seed = ctx.mask
        return kernels.masked_softmax_dropout_backward(ctx.saved[0], g, allowed, p, seed)


class DropoutAdd(Function):
    """x + dropout(s, p, seed) as one op, x and s of one shape: a pre-norm residual connection.

    The same numbers as Dropout then Add. x's gradient is g; s's is dropout(g) (the mask
    regenerated from the seed).
    """

    @staticmethod
    def forward(ctx, x, s, p=0.5, seed=0):
        ctx.p, ctx.seed = p, seed
        return kernels.dropout_add(x, s, p, seed)

    @staticmethod
    def backward(ctx, g):
        ds = kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)
        return g, (ds if ctx.needs_input_grad[1] else None)


class ReluDropout(Function):
    """dropout(relu(x), p, seed) as one op: the same numbers and the same mask as the two ops.

    Backward needs neither the mask nor x: the output is > 0 exactly where ReLU passed an
    element and dropout kept it, and the gradient there is g / (1 - p), 0 elsewhere.
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0):
        out = kernels.relu_dropout(a, p, seed)
        ctx.p = p
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return kernels.relu_dropout_backward(ctx.saved[0], g, ctx.p)
