"""Convolution layers: Conv1d and Conv2d, as torch.nn's (arguments, attributes, default
initialisation, repr); the computation is `functional_conv.convolution`."""
from __future__ import annotations

import math

import numpy as np

from . import init
from .functional_conv import convolution, ntuple
from .module import Module, Parameter, factory_dtype

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d and Conv2d share; subclasses set `_nd` and `_op`."""

    _nd, _op = 2, "Conv2d"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        op, nd = self._op, self._nd
        dtype = factory_dtype(device, dtype, op)
        if groups <= 0:
            raise ValueError(f"{op}: groups must be a positive integer, got {groups}")
        if in_channels % groups:
            raise ValueError(f"{op}: in_channels must be divisible by groups, got "
                             f"in_channels={in_channels} and groups={groups}")
        if out_channels % groups:
            raise ValueError(f"{op}: out_channels must be divisible by groups, got "
                             f"out_channels={out_channels} and groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{op}: padding_mode must be one of {set(_PADDING_MODES)}, but got "
                             f"padding_mode={padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = ntuple(kernel_size, nd, "kernel_size", op)
        self.stride = ntuple(stride, nd, "stride", op)
        self.dilation = ntuple(dilation, nd, "dilation", op)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"{op}: invalid padding string {padding!r}, should be one of "
                                 f"{{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions")
            self.padding = padding
        else:
            self.padding = ntuple(padding, nd, "padding", op)
        self.padding_mode = padding_mode
        self.transposed, self.output_padding = False, (0,) * nd
        self.weight = Parameter(np.empty((out_channels, in_channels // groups)
                                         + self.kernel_size, dtype))
        self.bias = Parameter(np.empty(out_channels, dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch's default: kaiming_uniform_(a=sqrt(5)) is U(-1/sqrt(fan_in), 1/sqrt(fan_in)),
        # fan_in = in_channels / groups * prod(kernel_size); the bias has the same bound
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fans(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return convolution(input, self.weight, self.bias, self.stride, self.padding,
                           self.dilation, self.groups, self._nd, self._op.lower(),
                           self.padding_mode)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    """A 1-d convolution: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out), weight
    (C_out, C_in / groups, kernel_size), bias (C_out,)."""

    _nd, _op = 1, "Conv1d"


class Conv2d(_ConvNd):
    """A 2-d convolution: (N, C_in, H, W) or (C_in, H, W) -> (N, C_out, H_out, W_out), weight
    (C_out, C_in / groups, kH, kW), bias (C_out,)."""

    _nd, _op = 2, "Conv2d"
