"""Convolution (PyTorch's conv1d and conv2d: strictly a cross-correlation) as one node, by
im2col: the windows of the input, a strided view, are copied once into columns, and one
matrix product per group with the weight computes every output position of the batch at once.

The backward pass reuses the same two pieces: the weight's gradient is the output gradient
times the columns (recomputed from the saved input rather than kept, since they are kernel-size
times larger than it), and the input's gradient is the weight times the output gradient, its
columns added back into the windows they came from (`scatter_windows`, col2im).
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.function import Function
from .matmul import mm
from .windows import pad, scatter_windows, unpad, windows


def _columns(xp, kernel, stride, dilation, out, groups):
    """Padded input (N, C, *S) -> columns (G, C/G * prod(kernel), N * prod(out)): one copy,
    laid out so that each group's whole batch is one matrix product."""
    n, c, nd = xp.shape[0], xp.shape[1], len(kernel)
    win = windows(xp, kernel, stride, dilation, out)          # (N, C, *out, *kernel), a view
    order = (1,) + tuple(range(2 + nd, 2 + 2 * nd)) + (0,) + tuple(range(2, 2 + nd))
    return win.transpose(order).reshape(groups, c // groups * math.prod(kernel),
                                        n * math.prod(out))


def _grouped(weight, groups):
    """weight (C_out, C_in / G, *kernel) as (G, C_out / G, C_in / G * prod(kernel))."""
    return weight.reshape(groups, weight.shape[0] // groups, math.prod(weight.shape[1:]))


class Convolution(Function):
    """y[n, o] = sum over c in o's group and kernel positions of x_padded[n, c, window] * w[o, c]
    + b[o]: x (N, C_in, *S), weight (C_out, C_in / groups, *kernel), bias (C_out,) or None,
    y (N, C_out, *out) for one or two spatial dims S.

    `padding` is a (lo, hi) pair per spatial dim ("same" pads unevenly for an even span);
    `padding_mode` is how the padded border is filled (a Conv module's padding_mode). Per
    group the product is (C_out/G, C_in/G * K) @ (C_in/G * K, N * P), P output positions: the
    batch rides in the columns, so a batch is one product, not N small ones.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None, stride=(1,), padding=((0, 0),), dilation=(1,),
                groups=1, padding_mode="zeros", out=(1,)):
        n, c_out = x.shape[0], weight.shape[0]
        cols = _columns(pad(x, padding, padding_mode), weight.shape[2:], stride, dilation, out,
                        groups)
        y = mm(_grouped(weight, groups), cols)           # (G, C_out/G, N * P)
        y = y.reshape((c_out, n) + tuple(out)).swapaxes(0, 1)
        y = np.ascontiguousarray(y) if bias is None else y + bias.reshape(
            (c_out,) + (1,) * len(out))                  # the add writes a fresh C-order array
        ctx.save_for_backward(x, weight)
        ctx.conf = (stride, padding, dilation, groups, padding_mode, tuple(out))
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved
        stride, padding, dilation, groups, mode, out = ctx.conf
        need = ctx.needs_input_grad
        n, c_in, c_out, kernel = x.shape[0], x.shape[1], weight.shape[0], weight.shape[2:]
        # g (N, C_out, *out) as (G, C_out/G, N * P), the layout of the forward's product
        g3 = g.swapaxes(0, 1).reshape(groups, c_out // groups, n * math.prod(out))
        gx = gw = gb = None
        if need[0]:
            xp_shape = x.shape[:2] + tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], padding))
            cols = mm(_grouped(weight, groups).swapaxes(1, 2), g3)  # (G, C_in/G * K, N * P)
            cols = cols.reshape((c_in,) + tuple(kernel) + (n,) + out)  # no copy
            gxp = scatter_windows(lambda i, offset: cols[(slice(None),) + offset].swapaxes(0, 1),
                                  xp_shape, kernel, stride, dilation, out, g.dtype)
            gx = unpad(gxp, x.shape, padding, mode)
        if need[1]:
            cols = _columns(pad(x, padding, mode), kernel, stride, dilation, out, groups)
            gw = mm(g3, cols.swapaxes(1, 2)).reshape(weight.shape)
        if len(need) > 2 and need[2]:
            gb = g.sum(axis=(0,) + tuple(range(2, g.ndim)))
        return gx, gw, gb
