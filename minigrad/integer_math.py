"""The greatest common divisor and the least common multiple of integers, elementwise and
broadcast (`gcd`, `lcm`), in the promoted integer dtype; both are nonnegative (gcd(0, 0) is 0,
lcm with 0 is 0). Integers have no gradient; float and bool tensors are refused, as PyTorch
refuses them.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd import op as autograd_op
from .errors import broadcast_error
from .linalg_checks import torch_dtype_name

__all__ = ["gcd", "lcm"]


def _integers(name, fn, input, other):
    for arg, x in (("input", input), ("other", other)):
        if not isinstance(x, autograd_op.Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    dtype = dtypes.computation_dtype((input, other), name)
    if dtype.kind not in "iu":
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{torch_dtype_name(dtype)}' (only integer tensors)")
    a, b = input._array.astype(dtype, copy=False), other._array.astype(dtype, copy=False)
    try:
        return autograd_op.Tensor._wrap(np.asarray(fn(a, b), dtype))
    except ValueError:
        raise broadcast_error(name, a.shape, b.shape) from None


def gcd(input, other):
    """The greatest common divisor of input and other, elementwise (broadcast)."""
    return _integers("gcd", np.gcd, input, other)


def lcm(input, other):
    """The least common multiple of input and other, elementwise (broadcast)."""
    return _integers("lcm", np.lcm, input, other)
