"""Pooling layers: MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d, as torch.nn's (their
arguments kept as given, as PyTorch keeps them, so that `repr` matches); the computations are
the functions of `functional_pool.py`."""
from __future__ import annotations

from . import functional_pool as P
from .functional_conv import ntuple
from .module import Module


class _MaxPoolNd(Module):
    _fn = staticmethod(P.max_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                        ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """The max of each window: (N, C, L) or (C, L) -> (N, C, L_out)."""

    _fn = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """The max of each window: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)."""

    _fn = staticmethod(P.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """The max of each window: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out)."""

    _fn = staticmethod(P.max_pool3d)


class AvgPool1d(Module):
    """The mean of each window: (N, C, L) or (C, L) -> (N, C, L_out)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        # PyTorch keeps AvgPool1d's sizes as 1-tuples (its repr shows them so)
        self.kernel_size = ntuple(kernel_size, 1, "kernel_size", "AvgPool1d")
        self.stride = ntuple(stride if stride is not None else kernel_size, 1, "stride",
                             "AvgPool1d")
        self.padding = ntuple(padding, 1, "padding", "AvgPool1d")
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """The mean of each window: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out)."""

    _fn = staticmethod(P.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    """The mean of each window: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out)."""

    _fn = staticmethod(P.avg_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn = staticmethod(P.adaptive_avg_pool2d)

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """The mean over output_size bins covering L: (N, C, L) -> (N, C, output_size)."""

    _fn = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """The mean over bins covering H and W: (N, C, H, W) -> (N, C, *output_size); e.g.
    AdaptiveAvgPool2d(1) is global average pooling, (N, C, 1, 1)."""

    _fn = staticmethod(P.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """The mean over bins covering D, H and W: (N, C, D, H, W) -> (N, C, *output_size)."""

    _fn = staticmethod(P.adaptive_avg_pool3d)
