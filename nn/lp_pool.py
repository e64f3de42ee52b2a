"""Power-average pooling: `lp_pool1d/2d/3d` of `torch.nn.functional` and the LPPool1d/2d/3d
layers, (sum over each window of x^p)^(1/p): p = 1 is sum pooling, p = 2 the Euclidean norm
of the window, p = inf max pooling of |x|.

Composed as PyTorch composes it, from average pooling of x^p times the window's size, so the
values and the gradients (a zero sum gives a zero gradient through the relu) are PyTorch's.
"""
from __future__ import annotations

import math

from .functional_conv import ntuple
from .functional_pool import (avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d,
                              max_pool3d)
from .module import Module

_POOLS = {1: (avg_pool1d, max_pool1d), 2: (avg_pool2d, max_pool2d), 3: (avg_pool3d, max_pool3d)}


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, op):
    avg, maxp = _POOLS[nd]
    if norm_type == math.inf:
        return maxp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -math.inf:
        return -maxp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    size = math.prod(ntuple(kernel_size, nd, "kernel_size", op))
    return (out.sign() * out.abs().relu()).mul(size).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p): (N, C, L) or (C, L) -> (..., L_out);
    p = norm_type."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, "lp_pool1d")


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p): (N, C, H, W) or (C, H, W) -> (..., H_out, W_out)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, "lp_pool2d")


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum of x^p over each window)^(1/p): (N, C, D, H, W) or (C, D, H, W) ->
    (..., D_out, H_out, W_out)."""
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, "lp_pool3d")


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride = norm_type, kernel_size, stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """Power-average pooling of (N, C, L) or (C, L)."""
    _fn = lp_pool1d


class LPPool2d(_LPPoolNd):
    """Power-average pooling of (N, C, H, W) or (C, H, W)."""
    _fn = lp_pool2d


class LPPool3d(_LPPoolNd):
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W)."""
    _fn = lp_pool3d
