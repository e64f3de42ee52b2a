"""Convolution (PyTorch's conv1d and conv2d: strictly a cross-correlation) as one node, by
im2col: the windows of the input are copied once into columns, and one matrix product per
group with the weight computes every output position of the batch at once.

The backward pass reuses the same two pieces: the weight's gradient is the output gradient
times the columns (recomputed from the saved input rather than kept, since they are kernel-size
times larger than it), and the input's gradient is the weight times the output gradient, its
columns added back into the windows they came from (col2im).

Both gradients are bilinear, like the convolution itself, so the three maps close: the
gradients of the input-gradient and of the weight-gradient map are again the convolution and
the other map. Each is a node here (`ConvInputGrad`, `ConvWeightGrad`), so a gradient taken
with create_graph=True is made of them and can be differentiated again, to any order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..autograd.op import Op
from ..graph_rules import rule, saved_input
from ..jvp_rules import jvp_rule
from .matmul import mm
from .windows import kernel_positions, pad, scatter_windows, unpad


@dataclass(frozen=True)
class ConvConf:
    """A convolution's settings: per spatial dim the stride, the (lo, hi) padding, the
    dilation and the output size; the groups and how the padding is filled."""
    stride: tuple
    padding: tuple
    dilation: tuple
    out: tuple
    groups: int = 1
    padding_mode: str = "zeros"


def _channels_first(x, conf):
    """x (N, C, *S) padded, as a C-order (C, N, *S_padded) array: the layout whose windows
    copy fastest into columns (one pass makes both the padding and the transpose)."""
    return np.ascontiguousarray(pad(x.swapaxes(0, 1), conf.padding, conf.padding_mode))


def im2col(x, kernel, conf):
    """Input (N, C, *S) -> columns (G, C/G * prod(kernel), N * prod(out)) of its padded
    windows, laid out so that each group's whole batch is one matrix product. They are
    filled one kernel position at a time, each a block copy: several times faster than
    copying the 2 + 2d dimensional window view at once."""
    n, c = x.shape[:2]
    xc = _channels_first(x, conf)
    cols = np.empty((c,) + tuple(kernel) + (n,) + conf.out, x.dtype)
    for offset, window in kernel_positions(kernel, conf.stride, conf.dilation, conf.out):
        cols[(slice(None),) + offset] = xc[(slice(None), slice(None)) + window]
    return cols.reshape(conf.groups, c // conf.groups * math.prod(kernel),
                        n * math.prod(conf.out))


def _grouped(weight, groups):
    """weight (C_out, C_in / G, *kernel) as (G, C_out / G, C_in / G * prod(kernel))."""
    return weight.reshape(groups, weight.shape[0] // groups, math.prod(weight.shape[1:]))


def _as_rows(g, groups):
    """An output-shaped g (N, C_out, *out) as (G, C_out/G, N * P), the products' layout."""
    return g.swapaxes(0, 1).reshape(groups, g.shape[1] // groups,
                                    g.shape[0] * math.prod(g.shape[2:]))


# the columns of a batch are kernel-size times its input (170 MB for the second layer of
# PyTorch's MNIST example on a batch of 256): a large batch is done in slices whose columns
# stay near this size, so that the memory a convolution needs stays bounded
COLUMN_BYTES = 32 << 20


def _slices(n, per_item):
    """Batch slices whose columns take about COLUMN_BYTES (at least one item each)."""
    step = max(1, COLUMN_BYTES // max(per_item, 1))
    return [slice(i, min(i + step, n)) for i in range(0, n, step)] or [slice(0, 0)]


def _column_bytes(shape, kernel, conf, itemsize):
    """The bytes of one batch item's columns: C_in * prod(kernel) * prod(out)."""
    return shape[1] * math.prod(kernel) * math.prod(conf.out) * itemsize


def convolve(x, weight, conf):
    """y (N, C_out, *out) without bias: per group weight @ columns."""
    n, c_out, kernel = x.shape[0], weight.shape[0], weight.shape[2:]
    w = _grouped(weight, conf.groups)
    y = np.empty((n, c_out) + conf.out, np.result_type(x.dtype, weight.dtype))
    for part in _slices(n, _column_bytes(x.shape, kernel, conf, x.itemsize)):
        m = part.stop - part.start
        ym = mm(w, im2col(x[part], kernel, conf))
        y[part] = ym.reshape((c_out, m) + conf.out).swapaxes(0, 1)
    return y


def input_grad(g, weight, x_shape, conf):
    """The gradient of x (x_shape) given g (N, C_out, *out): weight^T @ g, each kernel
    position's columns added back where they were read (col2im), the padding's share folded
    back."""
    n, kernel = x_shape[0], weight.shape[2:]
    wt = _grouped(weight, conf.groups).swapaxes(1, 2)
    gx = np.empty(x_shape, g.dtype)
    for part in _slices(n, _column_bytes(x_shape, kernel, conf, g.itemsize)):
        m = part.stop - part.start
        cols = mm(wt, _as_rows(g[part], conf.groups))
        gx[part] = col2im(cols, (m,) + tuple(x_shape[1:]), kernel, conf)
    return gx


def col2im(cols, x_shape, kernel, conf):
    """The adjoint of the columns: cols (G, C/G * prod(kernel), N * prod(out)) added back
    where each was read, the padding's share folded back: (N, C, *S) of x_shape."""
    n, c = x_shape[:2]
    cols = cols.reshape((c,) + tuple(kernel) + (n,) + conf.out)  # no copy
    padded = scatter_windows(lambda i, offset: cols[(slice(None),) + offset],
                             (c, n) + tuple(s + lo + hi for s, (lo, hi)
                                            in zip(x_shape[2:], conf.padding)),
                             kernel, conf.stride, conf.dilation, conf.out, cols.dtype)
    return unpad(padded, (c, n) + tuple(x_shape[2:]), conf.padding,
                 conf.padding_mode).swapaxes(0, 1)


def weight_grad(g, x, w_shape, conf):
    """The gradient of the weight (w_shape) given g (N, C_out, *out): g @ columns^T, summed
    over the batch's slices."""
    gw = None
    for part in _slices(x.shape[0], _column_bytes(x.shape, w_shape[2:], conf, x.itemsize)):
        cols = im2col(x[part], w_shape[2:], conf)
        term = mm(_as_rows(g[part], conf.groups), cols.swapaxes(1, 2))
        gw = term if gw is None else np.add(gw, term, out=gw)
    return gw.reshape(w_shape)


class Convolution(Op):
    """y[n, o] = sum over c in o's group and kernel positions of x_padded[n, c, window] * w[o, c]
    + b[o]: x (N, C_in, *S), weight (C_out, C_in / groups, *kernel), bias (C_out,) or None,
    y (N, C_out, *out) for one or two spatial dims S.

    `conf.padding` is a (lo, hi) pair per spatial dim ("same" pads unevenly for an even
    span); `conf.padding_mode` is how the padded border is filled (a Conv module's). Per
    group the product is (C_out/G, C_in/G * K) @ (C_in/G * K, N * P), P output positions: the
    batch rides in the columns, so a batch is one product, not N small ones.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None, conf=None):
        y = convolve(x, weight, conf)
        if bias is not None:
            y += bias.reshape((-1,) + (1,) * len(conf.out))
        ctx.save_for_backward(x, weight)
        ctx.conf = conf
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved
        need = ctx.needs_input_grad
        gx = input_grad(g, weight, x.shape, ctx.conf) if need[0] else None
        gw = weight_grad(g, x, weight.shape, ctx.conf) if need[1] else None
        gb = g.sum(axis=(0,) + tuple(range(2, g.ndim))) if len(need) > 2 and need[2] else None
        return gx, gw, gb


class ConvInputGrad(Op):
    """The input gradient of a convolution as an op of (g, weight): (N, C_in, *S)."""

    @staticmethod
    def forward(ctx, g, weight, x_shape=(), conf=None):
        ctx.save_for_backward(g, weight)
        ctx.x_shape, ctx.conf = x_shape, conf
        return input_grad(g, weight, x_shape, conf)

    @staticmethod
    def backward(ctx, gx):
        g, weight = ctx.saved
        need = ctx.needs_input_grad
        return (convolve(gx, weight, ctx.conf) if need[0] else None,
                weight_grad(g, gx, weight.shape, ctx.conf) if need[1] else None)


class ConvWeightGrad(Op):
    """The weight gradient of a convolution as an op of (g, x): (C_out, C_in / G, *kernel)."""

    @staticmethod
    def forward(ctx, g, x, w_shape=(), conf=None):
        ctx.save_for_backward(g, x)
        ctx.w_shape, ctx.conf = w_shape, conf
        return weight_grad(g, x, w_shape, conf)

    @staticmethod
    def backward(ctx, gw):
        g, x = ctx.saved
        need = ctx.needs_input_grad
        return (convolve(x, gw, ctx.conf) if need[0] else None,
                input_grad(g, gw, x.shape, ctx.conf) if need[1] else None)


# --- the same gradients as tensor ops (create_graph=True), and forward mode -----------------

@rule(Convolution)
def _convolution_rule(ctx, g):
    x, weight = ctx.saved
    need, conf = ctx.needs_input_grad, ctx.conf
    gx = (ConvInputGrad.apply(g, saved_input(ctx, 1, weight), x_shape=x.shape, conf=conf)
          if need[0] else None)
    gw = (ConvWeightGrad.apply(g, saved_input(ctx, 0, x), w_shape=weight.shape, conf=conf)
          if need[1] else None)
    gb = g.sum((0,) + tuple(range(2, g.ndim))) if len(need) > 2 and need[2] else None
    return gx, gw, gb


@rule(ConvInputGrad)
def _input_grad_rule(ctx, gx):
    g, weight = ctx.saved
    need, conf = ctx.needs_input_grad, ctx.conf
    return (Convolution.apply(gx, saved_input(ctx, 1, weight), conf=conf) if need[0] else None,
            ConvWeightGrad.apply(saved_input(ctx, 0, g), gx, w_shape=weight.shape, conf=conf)
            if need[1] else None)


@rule(ConvWeightGrad)
def _weight_grad_rule(ctx, gw):
    g, x = ctx.saved
    need, conf = ctx.needs_input_grad, ctx.conf
    return (Convolution.apply(saved_input(ctx, 1, x), gw, conf=conf) if need[0] else None,
            ConvInputGrad.apply(saved_input(ctx, 0, g), gw, x_shape=x.shape, conf=conf)
            if need[1] else None)


def _bilinear(f, a, b, ta, tb):
    """The tangent of the bilinear f(a, b): f(ta, b) + f(a, tb), skipping absent tangents."""
    parts = [f(ta, b) if ta is not None else None, f(a, tb) if tb is not None else None]
    parts = [p for p in parts if p is not None]
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


@jvp_rule(Convolution)
def _convolution_jvp(ctx, out, tangents):
    x, weight = ctx.saved
    tx, tw = tangents[0], tangents[1]
    tb = tangents[2] if len(tangents) > 2 else None
    t = (_bilinear(lambda a, b: convolve(a, b, ctx.conf), x, weight, tx, tw)
         if tx is not None or tw is not None else np.zeros_like(out))
    return t if tb is None else t + tb.reshape((-1,) + (1,) * len(ctx.conf.out))


@jvp_rule(ConvInputGrad)
def _input_grad_jvp(ctx, out, tangents):
    g, weight = ctx.saved
    return _bilinear(lambda a, b: input_grad(a, b, ctx.x_shape, ctx.conf), g, weight,
                     *tangents)


@jvp_rule(ConvWeightGrad)
def _weight_grad_jvp(ctx, out, tangents):
    g, x = ctx.saved
    return _bilinear(lambda a, b: weight_grad(a, b, ctx.w_shape, ctx.conf), g, x, *tangents)
