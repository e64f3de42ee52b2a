"""Pooling over the spatial dims of (N, C, *S): the max or the mean of each window, and the
adaptive mean over bins that cover the input (a separable linear map, which interpolation
uses too). One or two spatial dims, one node each way.

Each backward is linear in the gradient, and its adjoint is a map the op already has: max
pooling's gradient scatters into the chosen elements and the adjoint of that scatter gathers
them; the means are linear maps whose adjoints spread the gradient back. Each map is a node
with the other as its backward, so gradients taken with create_graph=True can be
differentiated again, and forward mode applies the same maps to tangents.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..autograd.op import Op
from ..graph_rules import rule
from ..jvp_rules import jvp_rule
from .windows import kernel_positions, pad, scatter_windows, unpad, windows


@dataclass(frozen=True)
class PoolConf:
    """A pooling's windows: per spatial dim the kernel, stride, dilation, (lo, hi) padding
    (hi grown for ceil_mode's last window) and output size; the input's shape."""
    kernel: tuple
    stride: tuple
    dilation: tuple
    padding: tuple
    out: tuple
    shape: tuple


def pool_conf(shape, kernel, stride, dilation, padding, out):
    """The PoolConf of an input of `shape`, the right padding grown so that the last window
    (ceil_mode) lies inside the padded input."""
    pads = []
    for size, k, s, d, (lo, hi), o in zip(shape[2:], kernel, stride, dilation, padding, out):
        need = (o - 1) * s + d * (k - 1) + 1 if o else 0
        pads.append((lo, max(hi, need - size - lo)))
    return PoolConf(tuple(kernel), tuple(stride), tuple(dilation), tuple(pads), tuple(out),
                    tuple(shape))


def _flat_windows(x, conf, fill):
    """The windows of x padded with `fill`, as (N, C, *out, K): one copy."""
    win = windows(pad(x, conf.padding, value=fill), conf.kernel, conf.stride, conf.dilation,
                  conf.out)
    return win.reshape(win.shape[:2 + len(conf.out)] + (math.prod(conf.kernel),))


def _scatter(part, conf, dtype):
    """Window parts added back into an array of the input's shape (padding's share dropped)."""
    padded = conf.shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(conf.shape[2:],
                                                                      conf.padding))
    g = scatter_windows(part, padded, conf.kernel, conf.stride, conf.dilation, conf.out, dtype)
    return unpad(g, conf.shape, conf.padding)


def window_max(x, conf):
    """(the max of each window (N, C, *out), its flat offset in the window): the first of
    equal values, the last NaN (PyTorch's rule: a later element wins if greater or NaN)."""
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    xp = pad(x, conf.padding, value=low)
    best = arg = None
    for i, (_, where) in enumerate(kernel_positions(conf.kernel, conf.stride, conf.dilation,
                                                    conf.out)):
        v = xp[(slice(None), slice(None)) + where]
        if best is None:
            best, arg = v.copy(), np.zeros(v.shape, np.int64)
            continue
        take = v > best
        if x.dtype.kind == "f":
            take |= np.isnan(v)
        np.copyto(best, v, where=take)
        arg[take] = i
    return best, arg


def _gather(t, arg, conf):
    """The elements of input-shaped t at the window offsets arg: (N, C, *out)."""
    return np.take_along_axis(_flat_windows(t, conf, 0), arg[..., None], -1)[..., 0]


def _spread(g, arg, conf):
    """The adjoint of `_gather`: g (N, C, *out) added at those elements of the input."""
    return _scatter(lambda i, offset: np.where(arg == i, g, 0), conf, g.dtype)


class MaxPool(Op):
    """y = the largest element of each window (the first of equal ones, NaN if any is NaN, as
    PyTorch): x (N, C, *S) -> y (N, C, *out). The gradient goes to that one element."""

    @staticmethod
    def forward(ctx, x, conf=None):
        y, ctx.arg = window_max(x, conf)
        ctx.conf = conf
        return y

    @staticmethod
    def backward(ctx, g):
        return _spread(g, ctx.arg, ctx.conf)


class MaxPoolSpread(Op):
    """Max pooling's gradient as an op: g (N, C, *out) -> (N, C, *S), g at the maxima."""

    @staticmethod
    def forward(ctx, g, arg=None, conf=None):
        ctx.arg, ctx.conf = arg, conf
        return _spread(g, arg, conf)

    @staticmethod
    def backward(ctx, gx):
        return _gather(gx, ctx.arg, ctx.conf)


class MaxPoolGather(Op):
    """The adjoint of MaxPoolSpread: t (N, C, *S) -> its elements at the maxima (N, C, *out)."""

    @staticmethod
    def forward(ctx, t, arg=None, conf=None):
        ctx.arg, ctx.conf = arg, conf
        return _gather(t, arg, conf)

    @staticmethod
    def backward(ctx, g):
        return _spread(g, ctx.arg, ctx.conf)


def max_indices(arg, conf):
    """PyTorch's `return_indices`: per output, the flat index of its maximum in the input's
    spatial dims, from the window offsets `arg` (N, C, *out) that window_max found."""
    offsets = np.unravel_index(arg, conf.kernel)
    flat = np.zeros(arg.shape, np.int64)
    nd = len(conf.kernel)
    for axis, (size, off, s, d, (lo, _)) in enumerate(zip(conf.shape[2:], offsets, conf.stride,
                                                          conf.dilation, conf.padding)):
        starts = (np.arange(arg.shape[2 + axis]) * s - lo).reshape((-1,) + (1,) * (nd - axis - 1))
        flat = flat * size + starts + off * d
    return flat


def divisor(shape, kernel, stride, padding, out, count_include_pad, divisor_override):
    """Average pooling's divisor of every output position, (*out): PyTorch's, the window's
    size within the padded input, or within the input itself without count_include_pad."""
    if divisor_override:
        return np.asarray(divisor_override)
    div = np.ones((), np.int64)
    for size, k, s, (lo, _), o in zip(shape[2:], kernel, stride, padding, out):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, size + lo)  # a window never counts past the padding
        if count_include_pad:
            count = end - start
        else:
            count = np.minimum(end, size) - np.maximum(start, 0)
        div = div[..., None] * count
    return div


def _mean(x, conf, div):
    xp = pad(x, conf.padding)
    sums = np.zeros(x.shape[:2] + conf.out, x.dtype if x.dtype.kind == "f" else np.int64)
    for _, where in kernel_positions(conf.kernel, conf.stride, conf.dilation, conf.out):
        sums += xp[(slice(None), slice(None)) + where]
    return (sums / div).astype(x.dtype, copy=False)


def _mean_adjoint(g, conf, div):
    part = (g / div).astype(g.dtype, copy=False)
    return _scatter(lambda i, offset: part, conf, g.dtype)


class AvgPool(Op):
    """y = the sum of each window / its divisor (see `divisor`): x (N, C, *S) -> (N, C, *out)."""

    @staticmethod
    def forward(ctx, x, conf=None, div=None):
        ctx.conf, ctx.div = conf, div
        return _mean(x, conf, div)

    @staticmethod
    def backward(ctx, g):
        return _mean_adjoint(g, ctx.conf, ctx.div)


class AvgPoolAdjoint(Op):
    """Average pooling's gradient as an op: g (N, C, *out) -> (N, C, *S)."""

    @staticmethod
    def forward(ctx, g, conf=None, div=None):
        ctx.conf, ctx.div = conf, div
        return _mean_adjoint(g, conf, div)

    @staticmethod
    def backward(ctx, gx):
        return _mean(gx, ctx.conf, ctx.div)


def bins(size, n, dtype):
    """(n, size): row i averages PyTorch's adaptive bin i, [floor(i*size/n), ceil((i+1)*size/n))."""
    m = np.zeros((n, size), dtype)
    for i in range(n):
        start, end = (i * size) // n, -(-((i + 1) * size) // n)
        m[i, start:end] = 1.0 / (end - start)
    return m


def _along(x, mats):
    """x (N, C, *S) with matrix mats[i] (out_i, S_i) applied along spatial dim i."""
    for i, m in enumerate(mats):
        x = np.moveaxis(np.tensordot(x, m, axes=([2 + i], [1])), -1, 2 + i)
    return np.ascontiguousarray(x)


class SpatialLinear(Op):
    """x (N, C, *S) -> (N, C, *out) by one matrix (out_i, S_i) per spatial dim i: a linear
    map that is separable, as adaptive average pooling (each row a bin's mean, see `bins`)
    and interpolation (each row the weights of the input points an output point reads) are.
    Its gradient is the same map with the matrices transposed."""

    @staticmethod
    def forward(ctx, x, mats=()):
        ctx.mats = mats
        return _along(x, mats)

    @staticmethod
    def backward(ctx, g):
        return _along(g, [m.T for m in ctx.mats])


# --- the gradients as tensor ops (create_graph=True), and forward mode ----------------------

@rule(MaxPool, MaxPoolGather)
def _spread_rule(ctx, g):
    return MaxPoolSpread.apply(g, arg=ctx.arg, conf=ctx.conf)


@rule(MaxPoolSpread)
def _gather_rule(ctx, gx):
    return MaxPoolGather.apply(gx, arg=ctx.arg, conf=ctx.conf)


@rule(AvgPool)
def _avg_rule(ctx, g):
    return AvgPoolAdjoint.apply(g, conf=ctx.conf, div=ctx.div)


@rule(AvgPoolAdjoint)
def _avg_adjoint_rule(ctx, gx):
    return AvgPool.apply(gx, conf=ctx.conf, div=ctx.div)


@rule(SpatialLinear)
def _spatial_linear_rule(ctx, g):
    return SpatialLinear.apply(g, mats=[m.T for m in ctx.mats])


# each map is linear in its input given what it kept (max pooling's choice of elements is
# fixed near the point): the tangent is the map applied to the input's tangent
_MAPS = {MaxPool: lambda ctx, t: _gather(t, ctx.arg, ctx.conf),
         MaxPoolGather: lambda ctx, t: _gather(t, ctx.arg, ctx.conf),
         MaxPoolSpread: lambda ctx, t: _spread(t, ctx.arg, ctx.conf),
         AvgPool: lambda ctx, t: _mean(t, ctx.conf, ctx.div),
         AvgPoolAdjoint: lambda ctx, t: _mean_adjoint(t, ctx.conf, ctx.div),
         SpatialLinear: lambda ctx, t: _along(t, ctx.mats)}


@jvp_rule(*_MAPS)
def _linear_jvp(ctx, out, tangents):
    return _MAPS[type(ctx)](ctx, tangents[0])
