"""Changes of unit and of precision: `deg2rad` and `rad2deg` (angles between degrees and
radians) and `float_power` (`pow` computed in float64, whatever the inputs' dtypes, so that
integer and float32 powers keep float64's digits). Each is composed of differentiable ops, so
its gradients are theirs; integer tensors give the default float dtype (float64 for
float_power), as PyTorch's do.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd import op as autograd_op
from .precise import _floating

__all__ = ["deg2rad", "float_power", "rad2deg"]


def deg2rad(input):
    """input degrees in radians, elementwise: input * pi / 180."""
    return _floating(input) * (math.pi / 180.0)


def rad2deg(input):
    """input radians in degrees, elementwise: input * 180 / pi."""
    return _floating(input) * (180.0 / math.pi)


def _float64(x):
    if isinstance(x, autograd_op.Tensor):
        from .tensor_operators import as_dtype
        return as_dtype(x, np.dtype(np.float64))  # the gradient reaches x in its own dtype
    if isinstance(x, complex):
        raise NotImplementedError("float_power: complex numbers are not supported")
    return float(x)


def float_power(input, exponent):
    """input ** exponent in float64, elementwise and broadcast; either may be a number (not
    both)."""
    if not isinstance(input, autograd_op.Tensor) and not isinstance(exponent, autograd_op.Tensor):
        raise TypeError(f"float_power(): expected a Tensor as input or exponent, got "
                        f"{type(input).__name__} and {type(exponent).__name__}")
    with np.errstate(divide="ignore", invalid="ignore"):  # 0 ** -1, (-2) ** 0.5: inf, NaN
        return _float64(input) ** _float64(exponent)
