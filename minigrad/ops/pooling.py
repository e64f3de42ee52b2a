"""Pooling over the spatial dims of (N, C, *S): the max or the mean of each window, and the
adaptive mean over bins that cover the input. One or two spatial dims, one node each way.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from .windows import pad, scatter_windows, unpad, windows


def _extra_hi(shape, kernel, stride, dilation, padding, out):
    """padding with the right end grown so that the last window (ceil_mode) is whole."""
    pads = []
    for size, k, s, d, (lo, hi), o in zip(shape[2:], kernel, stride, dilation, padding, out):
        need = (o - 1) * s + d * (k - 1) + 1 if o else 0
        pads.append((lo, max(hi, need - size - lo)))
    return pads


def _padded_shape(shape, pads):
    return shape[:2] + tuple(n + lo + hi for n, (lo, hi) in zip(shape[2:], pads))


def window_max(x, kernel, stride, padding, dilation, out):
    """(max of each window (N, C, *out), its flat offset in the window, the padding used)."""
    pads = _extra_hi(x.shape, kernel, stride, dilation, padding, out)
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    win = windows(pad(x, pads, value=low), kernel, stride, dilation, out)
    flat = win.reshape(win.shape[:2 + len(out)] + (math.prod(kernel),))  # a copy: (N, C, *out, K)
    arg = flat.argmax(-1) if flat.shape[-1] else np.zeros(flat.shape[:-1], np.int64)
    return np.take_along_axis(flat, arg[..., None], -1)[..., 0], arg, pads


class MaxPool(Function):
    """y = the largest element of each window (the first of equal ones, NaN if any is NaN, as
    PyTorch): x (N, C, *S) -> y (N, C, *out). The gradient goes to that one element."""

    @staticmethod
    def forward(ctx, x, kernel=(1,), stride=(1,), padding=((0, 0),), dilation=(1,), out=(1,)):
        y, arg, pads = window_max(x, kernel, stride, padding, dilation, out)
        ctx.arg, ctx.conf = arg, (x.shape, kernel, stride, dilation, pads, tuple(out))
        return y

    @staticmethod
    def backward(ctx, g):
        shape, kernel, stride, dilation, pads, out = ctx.conf
        arg = ctx.arg
        gxp = scatter_windows(lambda i, offset: np.where(arg == i, g, 0), _padded_shape(shape, pads),
                              kernel, stride, dilation, out, g.dtype)
        return unpad(gxp, shape, pads)


def max_indices(arg, shape, kernel, stride, dilation, padding):
    """PyTorch's `return_indices`: per output, the flat index of its maximum in the input's
    spatial dims, from the window offsets `arg` (N, C, *out) that MaxPool found."""
    offsets = np.unravel_index(arg, kernel)
    flat = np.zeros(arg.shape, np.int64)
    for axis, (size, off, s, d, (lo, _)) in enumerate(zip(shape[2:], offsets, stride, dilation,
                                                          padding)):
        starts = np.arange(arg.shape[2 + axis]) * s - lo
        starts = starts.reshape((-1,) + (1,) * (len(kernel) - axis - 1))
        flat = flat * size + starts + off * d
    return flat


class AvgPool(Function):
    """y = the sum of each window / its divisor (PyTorch's: the window's size within the padded
    input, or within the input itself without count_include_pad, or `divisor_override`):
    x (N, C, *S) -> y (N, C, *out)."""

    @staticmethod
    def forward(ctx, x, kernel=(1,), stride=(1,), padding=((0, 0),), out=(1,),
                count_include_pad=True, divisor_override=None):
        ones = (1,) * len(kernel)
        pads = _extra_hi(x.shape, kernel, stride, ones, padding, out)
        win = windows(pad(x, pads), kernel, stride, ones, out)
        axes = tuple(range(-len(kernel), 0))
        div = _divisor(x.shape[2:], kernel, stride, padding, out, count_include_pad,
                       divisor_override)
        ctx.conf = (x.shape, kernel, stride, pads, tuple(out), div)
        return (win.sum(axis=axes) / div).astype(x.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        shape, kernel, stride, pads, out, div = ctx.conf
        part = (g / div).astype(g.dtype, copy=False)
        gxp = scatter_windows(lambda i, offset: part, _padded_shape(shape, pads), kernel, stride,
                              (1,) * len(kernel), out, g.dtype)
        return unpad(gxp, shape, pads)


def _divisor(sizes, kernel, stride, padding, out, count_include_pad, divisor_override):
    """The divisor of every output position, (*out) (broadcasting against (N, C, *out))."""
    if divisor_override:
        return divisor_override
    div = np.ones((), np.int64)
    for size, k, s, (lo, _), o in zip(sizes, kernel, stride, padding, out):
        start = np.arange(o) * s - lo
        end = np.minimum(start + k, size + lo)  # a window never counts past the padding
        if count_include_pad:
            count = end - start
        else:
            count = np.minimum(end, size) - np.maximum(start, 0)
        div = div[..., None] * count
    return div


def _bins(size, n, dtype):
    """(n, size): row i averages PyTorch's adaptive bin i, [floor(i*size/n), ceil((i+1)*size/n))."""
    m = np.zeros((n, size), dtype)
    for i in range(n):
        start, end = (i * size) // n, -(-((i + 1) * size) // n)
        m[i, start:end] = 1.0 / (end - start)
    return m


class AdaptiveAvgPool(Function):
    """y = the mean of each of out[i] bins along spatial dim i (bins may overlap by one when
    the size is not a multiple): x (N, C, *S) -> y (N, C, *out). The means are products with
    one averaging matrix per dim, as they are linear and separable."""

    @staticmethod
    def forward(ctx, x, out=(1,)):
        mats = [_bins(size, o, x.dtype) for size, o in zip(x.shape[2:], out)]
        ctx.mats = mats
        return _apply(x, mats)

    @staticmethod
    def backward(ctx, g):
        return _apply(g, [m.T for m in ctx.mats])


def _apply(x, mats):
    """x (N, C, *S) with matrix mats[i] (out_i, S_i) applied along spatial dim i."""
    for i, m in enumerate(mats):
        x = np.moveaxis(np.tensordot(x, m, axes=([2 + i], [1])), -1, 2 + i)
    return np.ascontiguousarray(x)
