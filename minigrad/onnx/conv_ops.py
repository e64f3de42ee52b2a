"""ONNX nodes for convolution and pooling (the ops of `minigrad.ops.conv` and
`minigrad.ops.pooling`): Conv, ConvTranspose, MaxPool, and the means as AveragePool or
products with their averaging matrices (interpolation's too), each with PyTorch's exact sizes
and divisors."""
from __future__ import annotations

import math

import numpy as np

from ..ops.conv import ConvInputGrad, Convolution
from ..ops.pooling import AvgPool, MaxPool, SpatialLinear
from ..ops.windows import index_maps
from .errors import UnsupportedOperatorError


def _pads(padding):
    """(lo, hi) per dim as ONNX's pads: every dim's begin, then every dim's end."""
    return [lo for lo, _ in padding] + [hi for _, hi in padding]


def _constant(v):
    """A keyword array of the op (a divisor, an averaging matrix), as the tracer keeps it."""
    if getattr(v, "kind", "const") != "const":
        raise UnsupportedOperatorError(f"onnx.export: a pooling constant was computed from "
                                       f"the input ({v!r})")
    return np.asarray(getattr(v, "array", v))


def _inputs(g, rec):
    return [g.name(v) for v in rec.inputs if v is not None]


def _conv(g, rec):
    """Zero padding is Conv's own; the other padding modes gather each spatial dim at its
    source positions first (the padded elements are read, not computed)."""
    conf, inputs = rec.kwargs["conf"], _inputs(g, rec)
    pads = _pads(conf.padding)
    if conf.padding_mode != "zeros":
        for i, idx in index_maps(rec.inputs[0].shape, conf.padding, conf.padding_mode):
            inputs[0] = g.node("Gather", [inputs[0], g.const(idx.astype(np.int64))],
                               axis=2 + i)
        pads = [0] * len(pads)
    kernel = list(rec.inputs[1].shape[2:])
    return g.node("Conv", inputs, kernel_shape=kernel, strides=list(conf.stride),
                  pads=pads, dilations=list(conf.dilation), group=conf.groups)


def _conv_transpose(g, rec):
    """A transposed convolution: the input gradient of the convolution whose input has the
    output's size; the sizes a stride leaves open are ONNX's output_padding."""
    conf, size = rec.kwargs["conf"], rec.kwargs["x_shape"][2:]
    kernel = rec.inputs[1].shape[2:]
    extra = [n - (s * (i - 1) + d * (k - 1) + 1 - lo - hi) for n, i, s, d, k, (lo, hi)
             in zip(size, conf.out, conf.stride, conf.dilation, kernel, conf.padding)]
    return g.node("ConvTranspose", _inputs(g, rec), kernel_shape=list(kernel),
                  strides=list(conf.stride), pads=_pads(conf.padding),
                  dilations=list(conf.dilation), group=conf.groups, output_padding=extra)


def _max_pool(g, rec):
    # the right padding already reaches ceil_mode's last window, so floor sizes are exact
    conf = rec.kwargs["conf"]
    return g.node("MaxPool", _inputs(g, rec), kernel_shape=list(conf.kernel),
                  strides=list(conf.stride), pads=_pads(conf.padding),
                  dilations=list(conf.dilation))


def _avg_pool(g, rec):
    """Window sums (AveragePool counting every padded place, times the kernel size) over
    PyTorch's divisors, a constant of the output's spatial shape."""
    conf, div = rec.kwargs["conf"], _constant(rec.kwargs["div"])
    t = rec.out.dtype
    mean = g.node("AveragePool", _inputs(g, rec), kernel_shape=list(conf.kernel),
                  strides=list(conf.stride), pads=_pads(conf.padding), count_include_pad=1)
    scale = (math.prod(conf.kernel) / div).astype(t)
    return g.node("Mul", [mean, g.const(scale)])


def _spatial_linear(g, rec):
    """Adaptive means and interpolation: products with each spatial dim's matrix (from the
    right for the last dim, from the left for the one before)."""
    y = g.name(rec.inputs[0])
    mats = [_constant(m) for m in rec.kwargs["mats"]]
    last = len(mats) + 1
    for i, m in enumerate(mats):
        if i == len(mats) - 2:  # a 2-d pool's H: (H_out, H) @ (N, C, H, W_out)
            y = g.node("MatMul", [g.const(m), y])
            continue
        # the last dim from the right; a volume's depth swapped to the last place and back
        swap = list(range(last + 1))
        swap[2 + i], swap[last] = last, 2 + i
        if 2 + i != last:
            y = g.node("Transpose", [y], perm=swap)
        y = g.node("MatMul", [y, g.const(np.ascontiguousarray(m.T))])
        if 2 + i != last:
            y = g.node("Transpose", [y], perm=swap)
    return y


CONV_OPS = {Convolution: _conv, ConvInputGrad: _conv_transpose, MaxPool: _max_pool,
            AvgPool: _avg_pool, SpatialLinear: _spatial_linear}
