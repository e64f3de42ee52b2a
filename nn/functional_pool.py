"""Pooling of `torch.nn.functional`: max_pool1d/2d/3d, avg_pool1d/2d/3d,
adaptive_avg_pool1d/2d/3d, with PyTorch's arguments and checks; the computations are the ops
of `minigrad.ops.pooling`, which work for any number of spatial dims.

Inputs are (N, C, L), (N, C, H, W) or (N, C, D, H, W), or the same without the batch dim.
"""
from __future__ import annotations

from minigrad.creation import from_numpy
from minigrad.errors import ShapeError
from minigrad.ops.pooling import (AvgPool, MaxPool, SpatialLinear, bins, divisor, max_indices,
                                  pool_conf, window_max)
from minigrad.ops.windows import out_size

from .functional_conv import batched, ntuple


def _window_args(input, kernel_size, stride, padding, dilation, ceil_mode, nd, op):
    """(the input with a batch dim, whether one was added, kernel, stride, (lo, hi) pads,
    dilation, out), checked as PyTorch checks them."""
    kernel = ntuple(kernel_size, nd, "kernel_size", op)
    # stride=None (or an empty list, PyTorch's default in its signature) means kernel_size
    stride = kernel if stride is None or stride == [] or stride == () else ntuple(
        stride, nd, "stride", op)
    pads = ntuple(padding, nd, "padding", op)
    dilation = ntuple(dilation, nd, "dilation", op)
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"{op}: kernel size should be greater than zero, got {kernel}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"{op}: stride should be greater than zero, got {stride}")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"{op}: dilation should be greater than zero, got {dilation}")
    for p, k, d in zip(pads, kernel, dilation):
        if p < 0 or 2 * p > d * (k - 1) + 1:
            raise RuntimeError(f"{op}: pad should be at most half of effective kernel size, "
                               f"but got pad={p}, kernel_size={k} and dilation={d}")
    x, lifted = batched(input, nd, op)
    out = tuple(out_size(n, k, s, d, p, p, ceil_mode)
                for n, k, s, d, p in zip(x.shape[2:], kernel, stride, dilation, pads))
    if not all(out) or not all(x.shape[1:]):
        shape = "x".join(map(str, x.shape[1:]))
        raise RuntimeError(f"{op}: given input size: ({shape}). Calculated output size: "
                           f"({'x'.join(map(str, (x.shape[1],) + out))}). Output size is too "
                           f"small")
    return x, lifted, kernel, stride, tuple((p, p) for p in pads), dilation, out


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd, op):
    x, lifted, kernel, stride, pads, dilation, out = _window_args(
        input, kernel_size, stride, padding, dilation, ceil_mode, nd, op)
    conf = pool_conf(x.shape, kernel, stride, dilation, pads, out)
    y = MaxPool.apply(x, conf=conf)
    if lifted:
        y = y.squeeze(0)
    if not return_indices:
        return y
    # the offsets are found again from the values: only this call pays for them
    _, arg = window_max(x.detach().numpy(), conf)
    indices = from_numpy(max_indices(arg, conf))
    return y, indices.squeeze(0) if lifted else indices


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max of each window: (N, C, L) -> (N, C, L_out); with return_indices also the
    position of each max in L (int64)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     1, "max_pool1d")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max of each window: (N, C, H, W) -> (N, C, H_out, W_out); with return_indices also
    the flat position h * W + w of each max (int64)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     2, "max_pool2d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The max of each window: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out); with
    return_indices also the flat position (d * H + h) * W + w of each max (int64)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices,
                     3, "max_pool3d")


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd, op):
    x, lifted, kernel, stride, pads, _, out = _window_args(
        input, kernel_size, stride, padding, 1, ceil_mode, nd, op)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError(f"{op}: divisor must be not zero")
    conf = pool_conf(x.shape, kernel, stride, (1,) * nd, pads, out)
    div = divisor(x.shape, kernel, stride, pads, out, count_include_pad, divisor_override)
    y = AvgPool.apply(x, conf=conf, div=div)
    return y.squeeze(0) if lifted else y


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean of each window: (N, C, L) -> (N, C, L_out)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window: (N, C, H, W) -> (N, C, H_out, W_out); the padding counts in
    the divisor unless count_include_pad=False; divisor_override replaces the divisor."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """The mean of each window: (N, C, D, H, W) -> (N, C, D_out, H_out, W_out), with
    avg_pool2d's count_include_pad and divisor_override."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d")


def _adaptive_avg_pool(input, output_size, nd, op):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got "
                           f"{list(input.shape)}")
    x, lifted = batched(input, nd, op)
    sizes = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    if len(sizes) != nd:
        raise ShapeError(f"{op}: output_size must be an int or {nd} values, got {output_size}")
    out = tuple(n if o is None else int(o) for o, n in zip(sizes, x.shape[2:]))
    if any(o < 0 for o in out):
        raise RuntimeError(f"{op}: output_size {out} must not be negative")
    if x.dtype.kind != "f":
        raise RuntimeError(f"{op}: expected a floating input, got {x.dtype}")
    y = SpatialLinear.apply(x, mats=[bins(n, o, x.dtype) for n, o in zip(x.shape[2:], out)])
    return y.squeeze(0) if lifted else y


def adaptive_avg_pool1d(input, output_size):
    """The mean over output_size bins covering L: (N, C, L) -> (N, C, output_size)."""
    return _adaptive_avg_pool(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """The mean over bins covering H and W: (N, C, H, W) -> (N, C, *output_size); an int is
    both sizes, None keeps the input's size in that dim."""
    return _adaptive_avg_pool(input, output_size, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """The mean over bins covering D, H and W: (N, C, D, H, W) -> (N, C, *output_size)."""
    return _adaptive_avg_pool(input, output_size, 3, "adaptive_avg_pool3d")
