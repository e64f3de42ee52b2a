"""Extrema that treat NaN as missing, and both extrema at once: `fmax` and `fmin` (the
elementwise maximum and minimum, NaN only where both inputs are NaN, unlike `maximum`, which
propagates it) and `aminmax` (the pair `(min, max)` of `amin` and `amax`, over all elements or
along one dim). fmax's gradient goes to the input chosen (the first one on a tie), as
PyTorch's; aminmax's are amin's and amax's, shared evenly among tied elements.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd import op as autograd_op
from .ops._sloped import Sloped

__all__ = ["aminmax", "fmax", "fmin"]


def _as_float(mask, like):
    """A bool mask as 0.0 and 1.0 in like's dtype (arrays and tensors alike)."""
    if isinstance(mask, autograd_op.Tensor):
        return mask.to(like.dtype)
    return np.asarray(mask).astype(np.result_type(like))


def _first_wins(better):
    """The slopes of an extremum whose first input is chosen where `better(a, b)` holds or b
    is NaN."""
    def slopes(out, a, b):
        first = better(a, b) | (b != b)
        return _as_float(first, a), _as_float(~first, b)
    return staticmethod(slopes)


class Fmax(Sloped):
    fn, slopes = np.fmax, _first_wins(lambda a, b: a >= b)


class Fmin(Sloped):
    fn, slopes = np.fmin, _first_wins(lambda a, b: a <= b)


def _extremum(op, name, input, other):
    from .tensor_operators import binary
    for arg, x in (("input", input), ("other", other)):
        if not isinstance(x, autograd_op.Tensor):
            raise TypeError(f"{name}(): argument '{arg}' must be Tensor, not {type(x).__name__}")
    return binary(op, name, input, other)


def fmax(input, other):
    """The elementwise maximum (broadcast), ignoring NaN: NaN only where both are NaN; in the
    promoted dtype (integers stay integers)."""
    return _extremum(Fmax, "fmax", input, other)


def fmin(input, other):
    """The elementwise minimum (broadcast), ignoring NaN: NaN only where both are NaN; in the
    promoted dtype (integers stay integers)."""
    return _extremum(Fmin, "fmin", input, other)


def aminmax(input, *, dim=None, keepdim=False):
    """(min, max), a named pair: over all elements (0-d tensors, or with keepdim all dims
    kept at size 1) or along dim."""
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is not None and input.ndim and input.shape[dim] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size. "
                         f"(input of shape {tuple(input.shape)})")
    if dim is None and keepdim:
        dims = tuple(range(input.ndim))
        return return_types.aminmax(input.amin(dims, True), input.amax(dims, True))
    return return_types.aminmax(input.amin(dim, keepdim), input.amax(dim, keepdim))
