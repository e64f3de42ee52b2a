"""Convolution layers: Conv1d, Conv2d, Conv3d, their transposes ConvTranspose1d/2d/3d, and
Unfold and Fold (the blocks a convolution reads), as torch.nn's (arguments, attributes, default initialisation, repr); the computations are
`functional_conv.convolution` and `functional_conv.conv_transposed`."""
from __future__ import annotations

import math

import numpy as np

from . import init
from .functional_conv import conv_transposed, convolution, fold, ntuple, unfold
from .module import Module, Parameter, factory_dtype

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What Conv1d and Conv2d share; subclasses set `_nd` and `_op`."""

    _nd, _op, transposed = 2, "Conv2d", False

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
        self.output_padding = (0,) * nd  # a transposed convolution's sets its own
        # a transposed convolution's weight is (C_in, C_out / groups, *kernel)
        rows, cols = ((in_channels, out_channels // groups) if self.transposed
                      else (out_channels, in_channels // groups))
        self.weight = Parameter(np.empty((rows, cols) + self.kernel_size, dtype))
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
        if self.output_padding != (0,) * self._nd:
            s += f", output_padding={self.output_padding}"
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


class Conv3d(_ConvNd):
    """A 3-d convolution (volumes, video): (N, C_in, D, H, W) or (C_in, D, H, W) ->
    (N, C_out, D_out, H_out, W_out), weight (C_out, C_in / groups, kD, kH, kW), bias (C_out,)."""

    _nd, _op = 3, "Conv3d"


class _ConvTransposeNd(_ConvNd):
    """What ConvTranspose1d and ConvTranspose2d share: PyTorch's argument order (output_padding
    after padding, dilation after bias) and `output_size=` in forward."""

    transposed = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'{self._op}: only "zeros" padding mode is supported, got '
                             f"padding_mode={padding_mode!r}")
        if isinstance(padding, str):
            raise TypeError(f"{self._op}: padding must be an int or a tuple of ints, not "
                            f"{padding!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         groups, bias, padding_mode, device, dtype)
        self.output_padding = ntuple(output_padding, self._nd, "output_padding", self._op)

    def forward(self, input, output_size=None):
        extra = self.output_padding
        if output_size is not None:
            extra = self._output_padding(input, output_size)
        return conv_transposed(input, self.weight, self.bias, self.stride, self.padding, extra,
                               self.groups, self.dilation, self._nd,
                               "conv_transpose" + self._op[-2:])

    def _output_padding(self, input, output_size):
        """The output_padding that gives `output_size` (its last dims), checked to be reachable."""
        nd = self._nd
        wanted = tuple(int(n) for n in output_size)[-nd:]
        smallest = tuple((n - 1) * s - 2 * p + d * (k - 1) + 1 for n, s, p, d, k in zip(
            input.shape[-nd:], self.stride, self.padding, self.dilation, self.kernel_size))
        largest = tuple(m + s - 1 for m, s in zip(smallest, self.stride))
        if len(wanted) != nd or any(not lo <= w <= hi for w, lo, hi
                                    in zip(wanted, smallest, largest)):
            raise ValueError(f"{self._op}: requested an output size of {list(output_size)}, "
                             f"but valid sizes range from {list(smallest)} to {list(largest)} "
                             f"(for an input of {list(input.shape[-nd:])})")
        return tuple(w - lo for w, lo in zip(wanted, smallest))


class ConvTranspose1d(_ConvTransposeNd):
    """A transposed 1-d convolution: (N, C_in, L) or (C_in, L) -> (N, C_out, L_out), weight
    (C_in, C_out / groups, kernel_size), bias (C_out,); `output_size=` picks among the sizes
    a stride allows."""

    _nd, _op = 1, "ConvTranspose1d"


class ConvTranspose2d(_ConvTransposeNd):
    """A transposed 2-d convolution (an upsampling layer): (N, C_in, H, W) or (C_in, H, W) ->
    (N, C_out, H_out, W_out), weight (C_in, C_out / groups, kH, kW), bias (C_out,)."""

    _nd, _op = 2, "ConvTranspose2d"


class ConvTranspose3d(_ConvTransposeNd):
    """A transposed 3-d convolution: (N, C_in, D, H, W) or (C_in, D, H, W) ->
    (N, C_out, D_out, H_out, W_out), weight (C_in, C_out / groups, kD, kH, kW), bias (C_out,)."""

    _nd, _op = 3, "ConvTranspose3d"


class _Blocks(Module):
    """What Unfold and Fold share: the block arguments, kept as given (PyTorch's repr)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = (kernel_size, dilation,
                                                                      padding, stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Unfold(_Blocks):
    """The sliding blocks of (N, C, H, W) as columns (N, C * prod(kernel_size), L)."""

    def forward(self, input):
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(_Blocks):
    """Columns (N, C * prod(kernel_size), L) summed into (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()
