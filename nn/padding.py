"""The padding layers of `torch.nn`: zero, constant, reflection, replication and circular
padding of the last 1, 2 or 3 dims, each a module over `F.pad` with its mode.

`padding` is an int (every side) or PyTorch's tuple: (left, right) for 1d; (left, right, top,
bottom) for 2d; (left, right, top, bottom, front, back) for 3d. Reflection padding is the
usual choice in front of a convolution in style transfer and CycleGAN generators (no dark
border), circular padding suits periodic signals.
"""
from __future__ import annotations

from .functional_pad import pad
from .module import Module


def _sides(padding, n):
    """An int as n equal widths; a sequence as its n ints."""
    if isinstance(padding, int):
        return (padding,) * n
    padding = tuple(padding)
    if len(padding) != n:
        raise ValueError(f"padding must be an int or {n} ints, got {padding}")
    return padding


class _PadNd(Module):
    """Pads with `mode` the last `nd` dims; the input's dims are checked by F.pad."""

    mode = nd = None

    def __init__(self, padding):
        super().__init__()
        self.padding = _sides(padding, 2 * self.nd)

    def forward(self, input):
        return pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dim with `value`: (N, C, W) or (C, W) -> (..., W + left + right)."""
    nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dims with `value`: (N, C, H, W) -> (N, C, H + top + bottom,
    W + left + right)."""
    nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dims with `value`: (N, C, D, H, W) -> padded D, H and W."""
    nd = 3


class _ZeroPad:
    """Constant padding with zeros (a mixin beside a ConstantPad class, as PyTorch's ZeroPad
    classes derive from theirs)."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad, ConstantPad1d):
    """Pads the last dim with zeros: (N, C, W) -> (N, C, W + left + right)."""


class ZeroPad2d(_ZeroPad, ConstantPad2d):
    """Pads the last two dims with zeros: (N, C, H, W) -> (N, C, H + top + bottom,
    W + left + right)."""


class ZeroPad3d(_ZeroPad, ConstantPad3d):
    """Pads the last three dims with zeros: (N, C, D, H, W) -> padded D, H and W."""


class ReflectionPad1d(_PadNd):
    """Pads the last dim with its mirror image, the edge not repeated: (N, C, W) or (C, W);
    each width below W."""
    mode, nd = "reflect", 1


class ReflectionPad2d(_PadNd):
    """Pads H and W with their mirror images, the edges not repeated: (N, C, H, W) or
    (C, H, W)."""
    mode, nd = "reflect", 2


class ReflectionPad3d(_PadNd):
    """Pads D, H and W with their mirror images: (N, C, D, H, W) or (C, D, H, W)."""
    mode, nd = "reflect", 3


class ReplicationPad1d(_PadNd):
    """Pads the last dim by repeating its edge values: (N, C, W) or (C, W)."""
    mode, nd = "replicate", 1


class ReplicationPad2d(_PadNd):
    """Pads H and W by repeating their edge values: (N, C, H, W) or (C, H, W)."""
    mode, nd = "replicate", 2


class ReplicationPad3d(_PadNd):
    """Pads D, H and W by repeating their edge values: (N, C, D, H, W) or (C, D, H, W)."""
    mode, nd = "replicate", 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input):
        if input.ndim not in (self.nd + 1, self.nd + 2):
            raise ValueError(f"expected {self.nd + 1}D or {self.nd + 2}D input (got "
                             f"{input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Pads the last dim by wrapping around (the end before the start): (N, C, W) or (C, W)."""
    nd = 1


class CircularPad2d(_CircularPadNd):
    """Pads H and W by wrapping around: (N, C, H, W) or (C, H, W)."""
    nd = 2


class CircularPad3d(_CircularPadNd):
    """Pads D, H and W by wrapping around: (N, C, D, H, W) or (C, D, H, W)."""
    nd = 3
