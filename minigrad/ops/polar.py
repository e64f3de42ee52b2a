"""The polar coordinates of a point (x, y): its angle atan2(y, x) in (-pi, pi] (PyTorch's
arctan2 is the same) and its radius hypot(x, y) = sqrt(x^2 + y^2), computed without the
overflow of squaring. Both broadcast their two tensors. At the origin (and wherever x^2 + y^2
underflows to 0) atan2's gradient is 0 and hypot's NaN, as PyTorch's."""
from __future__ import annotations

import numpy as np

from ._sloped import Sloped, binary, zero_where


def _atan2_slopes(out, y, x):
    square = x * x + y * y
    r = zero_where(square == 0, 1 / square)
    return x * r, -y * r


class Atan2(Sloped):
    fn, slopes = np.arctan2, staticmethod(_atan2_slopes)


class Hypot(Sloped):
    fn, uses_output = np.hypot, True
    slopes = staticmethod(lambda out, a, b: (a / out, b / out))


def atan2(input, other):
    """The angle of the point (other, input), that is of x = other, y = input, elementwise
    (broadcast); integer tensors give the default float dtype."""
    return binary(Atan2, "atan2", input, other)


def hypot(input, other):
    """sqrt(input^2 + other^2), elementwise (broadcast), for floating-point tensors."""
    return binary(Hypot, "hypot", input, other, integers=False)


arctan2 = atan2
