"""Tensor methods of logic, under PyTorch's names: the bitwise operators (& | ^ ~ << >>, on
integers bit by bit and on bools logical, floats refused as in PyTorch) and the tests with
bool results (isnan, isfinite, logical_and, any, all, isclose, allclose, equal).

None of these has a gradient. `Tensor` inherits them through tensor_math's `MathMethods`;
the comparisons (`==`, `<`, ...) are with the other operators in tensor_operators.py.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, ops
from . import tensor as _t
from .errors import DTypeNotImplementedError, broadcast_error


def _wrap(arr):
    return _t.Tensor._wrap(np.asarray(arr))


def _logical(fn, name, t, dim, keepdim):
    """any/all over dim (all dims by default): a bool tensor (uint8 for uint8 input, as
    PyTorch's) without gradient."""
    dims = ops.reduce.normalize_dims(dim, t.ndim, name)
    out = fn(t._array, axis=dims, keepdims=keepdim)
    return _wrap(out.astype(np.uint8) if t._array.dtype == np.uint8 else out)  # as PyTorch


def _pairwise(fn, name, a, b):
    """`fn` of the two operands' arrays, as a tensor without gradient; shapes that do not
    broadcast are PyTorch's RuntimeError."""
    x, y = a._array, _t.array_of(b)
    try:
        return _wrap(np.asarray(fn(x, y)))
    except ValueError:
        raise broadcast_error(name, np.shape(x), np.shape(y)) from None


def _bitwise(fn, name, a, b):
    """`fn` of two operands in the dtype PyTorch promotes them to, which must be an integer or
    bool one (a Python int is wrapped into a narrower tensor's dtype, as PyTorch does); bools
    are not shifted."""
    dtype = dtypes.computation_dtype((a, b), name)
    if dtype.kind not in ("iu" if "shift" in name else "biu"):
        raise DTypeNotImplementedError(f"{name}: not implemented for {dtype} operands (only integer"
                        f"{'' if 'shift' in name else ' and bool'} tensors)")
    x, y = (np.asarray(_t.array_of(v)).astype(dtype, copy=False) for v in (a, b))
    try:
        return _wrap(np.asarray(fn(x, y)))
    except ValueError as e:
        if "broadcast" not in str(e):
            raise
        raise broadcast_error(name, x.shape, y.shape) from None


def _left_shift(x, n):
    """Shifting by the width or more gives 0 (NumPy's would wrap the count, as the CPU does)."""
    bits = x.dtype.itemsize * 8
    return np.where(n >= bits, 0, np.left_shift(x, np.minimum(n, bits - 1))).astype(x.dtype)


def _right_shift(x, n):
    """By the width or more: the sign fill, 0 or -1, as PyTorch."""
    bits = x.dtype.itemsize * 8
    return np.right_shift(x, np.minimum(n, bits - 1)).astype(x.dtype)


class LogicMethods:
    # --- bitwise: on integers bit by bit, on bools logical, floats refused (as PyTorch) ------
    def __and__(self, other): return _bitwise(np.bitwise_and, "bitwise_and", self, other)
    def __or__(self, other): return _bitwise(np.bitwise_or, "bitwise_or", self, other)
    def __xor__(self, other): return _bitwise(np.bitwise_xor, "bitwise_xor", self, other)
    def __rand__(self, other): return _bitwise(np.bitwise_and, "bitwise_and", other, self)
    def __ror__(self, other): return _bitwise(np.bitwise_or, "bitwise_or", other, self)
    def __rxor__(self, other): return _bitwise(np.bitwise_xor, "bitwise_xor", other, self)
    def __lshift__(self, other): return _bitwise(_left_shift, "bitwise_left_shift", self, other)
    def __rshift__(self, other): return _bitwise(_right_shift, "bitwise_right_shift", self, other)
    def __rlshift__(self, other): return _bitwise(_left_shift, "bitwise_left_shift", other, self)
    def __rrshift__(self, other): return _bitwise(_right_shift, "bitwise_right_shift", other, self)
    bitwise_and, bitwise_or, bitwise_xor = __and__, __or__, __xor__
    bitwise_left_shift, bitwise_right_shift = __lshift__, __rshift__

    def __invert__(self):
        if self._array.dtype.kind not in "biu":
            raise TypeError(f"bitwise_not: ~ is only implemented on integer and bool tensors, "
                            f"got {self.dtype}")
        return _wrap(np.invert(self._array))
    bitwise_not = __invert__

    # --- logic (bool results, no gradient) ------------------------------------------------
    def isnan(self): return _wrap(np.isnan(self._array))
    def isinf(self): return _wrap(np.isinf(self._array))
    def isfinite(self): return _wrap(np.isfinite(self._array))
    def logical_not(self): return _wrap(np.logical_not(self._array))
    def logical_and(self, other): return _pairwise(np.logical_and, "logical_and", self, other)
    def logical_or(self, other): return _pairwise(np.logical_or, "logical_or", self, other)
    def logical_xor(self, other): return _pairwise(np.logical_xor, "logical_xor", self, other)
    def any(self, dim=None, keepdim=False): return _logical(np.any, "any", self, dim, keepdim)
    def all(self, dim=None, keepdim=False): return _logical(np.all, "all", self, dim, keepdim)

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _pairwise(lambda a, b: np.isclose(a, b, rtol, atol, equal_nan), "isclose", self,
                         other)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(np.allclose(self._array, _t.array_of(other), rtol, atol, equal_nan))

    def equal(self, other):
        """True when the shapes and all elements are equal."""
        o = _t.array_of(other)
        return self.shape == np.shape(o) and bool(np.all(self._array == o))
