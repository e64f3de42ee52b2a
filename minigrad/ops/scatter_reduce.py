"""`scatter_reduce`: reduce the values of `src` into `a` at `index` along a dim, with "sum",
"prod", "mean", "amax" or "amin" (PyTorch's `Tensor.scatter_reduce`, as graph code uses it for
a per-node max or mean over incoming edges)."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from .assign import _scatter_positions

_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _identity(reduce, dtype):
    """The value a position starts from when `include_self=False` drops the tensor's own."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _reduce(a, values, pos, reduce, include_self):
    """(the reduced array, the count of values at each position for "mean", else None)."""
    out = a.copy()
    if not include_self:
        out[pos] = _identity(reduce, a.dtype)
    _UFUNCS[reduce].at(out, pos, values)
    if reduce != "mean":
        return out, None
    count = np.ones(a.shape, a.dtype) if include_self else np.zeros(a.shape, a.dtype)
    np.add.at(count, pos, 1)
    count[count == 0] = 1
    if a.dtype.kind == "f":
        return out / count, count
    return np.floor_divide(out, count), count  # PyTorch floors an integer mean


class ScatterReduce(Op):
    """out = a, then out[index[i][j]][j] = reduce(out[index[i][j]][j], src[i][j]) for dim 0.

    `include_self=False` leaves a's own value out wherever index writes. The gradients are
    PyTorch's: "mean" divides by the count; "amax"/"amin" share the gradient evenly among all
    the values equal to the result; "prod" divides the product by each factor, with the
    products of the others where a factor is zero.
    """

    takes_indices = True

    @staticmethod
    def forward(ctx, a, src, dim=0, index=None, reduce="sum", include_self=True):
        if reduce not in _UFUNCS:
            raise ValueError(f"scatter_reduce: reduce must be one of {sorted(_UFUNCS)}, got "
                             f"{reduce!r}")
        if reduce == "mean" and a.dtype.kind == "b":
            raise TypeError("scatter_reduce: reduce='mean' is not implemented for bool tensors")
        pos, region = _scatter_positions("scatter_reduce", a, dim, index, src)
        out, count = _reduce(a, src[region], pos, reduce, include_self)
        if reduce in ("prod", "amax", "amin"):  # an in-place change to these raises in backward
            ctx.save_for_backward(a, src, out)
        ctx.count, ctx.pos, ctx.region, ctx.src_shape = count, pos, region, np.shape(src)
        ctx.reduce, ctx.include_self, ctx.dim, ctx.index = reduce, include_self, dim, index
        return out

    @staticmethod
    def backward(ctx, g):
        pos, reduce = ctx.pos, ctx.reduce
        if reduce in ("prod", "amax", "amin"):
            a, src, out = ctx.saved
            s = src[ctx.region]
        if reduce == "sum":
            ga, gs = g.copy(), g[pos]
        elif reduce == "mean":
            ga = g / ctx.count
            gs = ga[pos]
        elif reduce in ("amax", "amin"):
            self_is = (a == out).astype(g.dtype)
            src_is = (s == out[pos]).astype(g.dtype)
            shares = self_is.copy()
            np.add.at(shares, pos, src_is)
            spread = g / shares
            ga, gs = self_is * spread, src_is * spread[pos]
        else:
            ga, gs = _prod_grads(a, s, out, pos, ctx.include_self, g)
        if not ctx.include_self:
            ga[pos] = 0
        grad_src = np.zeros(ctx.src_shape, g.dtype)
        grad_src[ctx.region] = gs
        return ga, grad_src


def _prod_grads(a, s, out, pos, include_self, g):
    """The product over the others: out / factor, computed afresh where a factor is 0 (a
    position with two zero factors has a zero gradient for every factor)."""
    masked_a = np.where(a == 0, 1, a)
    ga = g * _reduce(masked_a, s, pos, "prod", include_self)[0] / masked_a
    src_zero = s == 0
    zeros_at = np.zeros(a.shape, np.int64)
    np.add.at(zeros_at, pos, src_zero.astype(np.int64))
    single_zero = src_zero & (zeros_at[pos] == 1)
    others = _reduce(a, np.where(single_zero, 1, s), pos, "prod", include_self)[0]
    gs = np.where(single_zero, (g * others)[pos], (g * out)[pos] / np.where(src_zero, 1, s))
    return ga, gs
