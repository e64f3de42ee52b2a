"""The lazy convolutions and norms: layers whose input channels are read from their first
input, as LazyLinear reads its in_features (lazy_linear.py).

Until the first call the weight, bias and running statistics are empty placeholders; that call
gives them their shapes in place (so an optimizer built before it holds the very parameter
objects), initialises them as the eager layer does (a convolution's draws, a norm's ones and
zeros), and turns the module into the eager class (`cls_to_become`): a `LazyConv2d(16, 3)`
met by (N, 8, H, W) becomes `Conv2d(8, 16, 3)`.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import no_grad

from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .instance_norm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d

__all__ = ["LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyConv1d", "LazyConv2d",
           "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


def _shape_in_place(tensor, shape, fill=None):
    """Give a placeholder tensor its shape (and values), keeping the tensor object."""
    if tensor is not None:
        tensor._array = np.empty(shape, tensor.dtype) if fill is None else np.full(
            shape, fill, tensor.dtype)


class _LazyConv:
    """A convolution built with in_channels 0 and empty tensors until its first input."""

    def _lazy_init(self):
        self.in_channels = 0
        self.weight._array = np.empty(0, self.weight.dtype)
        _shape_in_place(self.bias, 0)

    def has_uninitialized_params(self):
        return self.in_channels == 0

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Shape the placeholders for input (N, C_in, ...) or (C_in, ...), draw them as the
        eager convolution does, and become it."""
        if not self.has_uninitialized_params():
            return
        name, unbatched = type(self).__name__, self._nd + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {name}, but got input of size: {input.shape}")
        in_channels = input.shape[1] if input.ndim == unbatched + 1 else input.shape[0]
        if in_channels % self.groups:
            raise ValueError("in_channels must be divisible by groups")
        out, g = self.out_channels, self.groups
        rows, cols = (in_channels, out // g) if self.transposed else (out, in_channels // g)
        with no_grad():
            self.in_channels = in_channels
            _shape_in_place(self.weight, (rows, cols) + self.kernel_size)
            _shape_in_place(self.bias, out)
            self.reset_parameters()
        self.__class__ = self.cls_to_become

    def forward(self, input, *args, **kwargs):
        eager = self.cls_to_become   # (read first: initialising changes the class)
        self.initialize_parameters(input)
        return eager.forward(self, input, *args, **kwargs)


def _lazy_conv(eager, transposed):
    """The lazy class of convolution class `eager`, with PyTorch's arguments (no in_channels)."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            eager.__init__(self, 0, out_channels, kernel_size, stride, padding, output_padding,
                           groups, bias, dilation, padding_mode, device, dtype)
            self._lazy_init()
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            eager.__init__(self, 0, out_channels, kernel_size, stride, padding, dilation, groups,
                           bias, padding_mode, device, dtype)
            self._lazy_init()
    name = f"Lazy{eager.__name__}"
    doc = f"{eager.__name__} with in_channels read from its first input: {eager.__doc__}"
    return type(name, (_LazyConv, eager), {"__init__": __init__, "cls_to_become": eager,
                                           "__doc__": doc, "__module__": __name__})


LazyConv1d = _lazy_conv(Conv1d, False)
LazyConv2d = _lazy_conv(Conv2d, False)
LazyConv3d = _lazy_conv(Conv3d, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, True)


class _LazyNorm:
    """A batch or instance norm built with num_features 0 and empty tensors until its first
    input, whose dim 1 gives num_features."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        self.cls_to_become.__init__(self, 0, eps, momentum, affine, track_running_stats,
                                    device, dtype, bias=bias)

    def has_uninitialized_params(self):
        return self.num_features == 0

    def reset_parameters(self):
        if not self.has_uninitialized_params():
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Shape the placeholders for input (N, C, ...): weight 1, bias 0, running mean 0 and
        variance 1, as the eager norm starts; then become it."""
        if not self.has_uninitialized_params():
            return
        n = input.shape[1] if input.ndim > 1 else 0
        with no_grad():
            self.num_features = n
            for name, fill in (("weight", 1), ("bias", 0), ("running_mean", 0),
                               ("running_var", 1)):
                _shape_in_place(getattr(self, name), n, fill)
        self.__class__ = self.cls_to_become

    def forward(self, input):
        eager = self.cls_to_become   # (read first: initialising changes the class)
        self.initialize_parameters(input)
        return eager.forward(self, input)


def _lazy_norm(eager):
    name = f"Lazy{eager.__name__}"
    doc = f"{eager.__name__} with num_features read from its first input: {eager.__doc__}"
    return type(name, (_LazyNorm, eager), {"cls_to_become": eager, "__doc__": doc,
                                           "__module__": __name__})


LazyBatchNorm1d = _lazy_norm(BatchNorm1d)
LazyBatchNorm2d = _lazy_norm(BatchNorm2d)
LazyBatchNorm3d = _lazy_norm(BatchNorm3d)
LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d)
