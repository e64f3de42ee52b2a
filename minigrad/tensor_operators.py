"""Tensor's arithmetic and comparison operators (`+`, `*`, `==`, `<`, `maximum`, ...) and the
dtype PyTorch computes them in.

An operator hands its operands to one op class (`ops.Add`, ...) or, for a comparison, to one
NumPy function. When the operands' dtypes differ in a way NumPy would resolve differently from
PyTorch (`int tensor * 0.5`, `float32 tensor + float64 0-d tensor`), they are first converted
to the dtype `dtypes.computation_dtype` gives. `Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from . import ops
from . import tensor as _t
from .autograd.op import _apply_hooks, _node_of
from .dtypes import computation_dtype
from .errors import broadcast_error

_PY_NUMBERS = (int, float)


class OperatorMethods:
    def __add__(self, other): return binary(ops.Add, "add", self, other)
    def __radd__(self, other): return binary(ops.Add, "add", other, self)
    def __sub__(self, other): return binary(ops.Sub, "sub", self, other)
    def __rsub__(self, other): return binary(ops.Sub, "sub", other, self)
    def __mul__(self, other): return binary(ops.Mul, "mul", self, other)
    def __rmul__(self, other): return binary(ops.Mul, "mul", other, self)
    def __truediv__(self, other): return binary(ops.Div, "div", self, other)
    def __rtruediv__(self, other): return binary(ops.Div, "div", other, self)
    def __pow__(self, other): return binary(ops.Pow, "pow", self, other)
    def __rpow__(self, other): return binary(ops.Pow, "pow", other, self)
    def __floordiv__(self, other): return binary(ops.FloorDivide, "floor_divide", self, other)
    def __rfloordiv__(self, other): return binary(ops.FloorDivide, "floor_divide", other, self)
    def __mod__(self, other): return binary(ops.Remainder, "remainder", self, other)
    def __rmod__(self, other): return binary(ops.Remainder, "remainder", other, self)
    def __neg__(self): return ops.Neg.apply(self)
    def __matmul__(self, other): return ops.MatMul.apply(self, other)
    def __rmatmul__(self, other): return ops.MatMul.apply(other, self)
    def maximum(self, other): return binary(ops.Maximum, "maximum", self, other)
    def minimum(self, other): return binary(ops.Minimum, "minimum", self, other)
    mul, matmul, neg = __mul__, __matmul__, __neg__
    floor_divide, remainder = __floordiv__, __mod__

    # the method forms that take more than the operator: self + alpha * other, and
    # division rounded towards zero or down
    def add(self, other, *, alpha=1):
        return binary(ops.Add, "add", self, other if alpha == 1 else other * alpha)

    def sub(self, other, *, alpha=1):
        return binary(ops.Sub, "sub", self, other if alpha == 1 else other * alpha)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return binary(ops.Div, "div", self, other)
        from .functional import div
        return div(self, other, rounding_mode=rounding_mode)

    # comparisons give bool tensors that carry no gradient; `t == None` is simply False
    def __eq__(self, other):
        return compare(np.equal, "eq", self, other) if is_operand(other) else NotImplemented

    def __ne__(self, other):
        return compare(np.not_equal, "ne", self, other) if is_operand(other) else NotImplemented

    def __lt__(self, other): return compare(np.less, "lt", self, other, ordered=True)
    def __le__(self, other): return compare(np.less_equal, "le", self, other, ordered=True)
    def __gt__(self, other): return compare(np.greater, "gt", self, other, ordered=True)
    def __ge__(self, other): return compare(np.greater_equal, "ge", self, other, ordered=True)
    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__
    __hash__ = object.__hash__  # defining __eq__ would otherwise make tensors unhashable
    # the bitwise operators (& | ^ ~ << >>, logical on bool tensors) are in tensor_logic.py


# Every Tensor is an OperatorMethods: the checks on each operator's operands test against this
# module's own class, which costs no lookup in tensor.py (this runs for every `+`, `*`, ...)
_Tensor = OperatorMethods


def is_operand(x):
    # a Python number first, by its class: `mask == 0` is everyday code, and each class that
    # an isinstance of several fails to match costs a call of its own
    return x.__class__ in _PY_NUMBERS or isinstance(x, (_Tensor, np.ndarray, np.generic, int,
                                                        float))


# the ops of index arithmetic, by the NumPy function their forward calls
_INDEX_ARITHMETIC = {ops.Add: np.add, ops.Sub: np.subtract, ops.Mul: np.multiply}


def binary(op, name, a, b, floats=False):
    """`op.apply(a, b)` in the dtype PyTorch computes in, with errors that name `name`;
    `floats`: integer operands give the default float (as atan2's do)."""
    try:
        return _binary(op, name, a, b, floats)
    except OverflowError:
        # a Python int outside an integer tensor's range (`int8 * 1000`): PyTorch converts it
        # to the tensor's dtype, wrapping as the arithmetic does, where NumPy refuses it
        wa, wb = _wrapped_ints(a, b)
        if wa is a and wb is b:
            raise
        return _binary(op, name, wa, wb, floats)


def _wrapped_ints(a, b):
    """(a, b) with a Python int operand beside an integer tensor wrapped into its dtype."""
    def wrap(number, other):
        if number.__class__ is not int or not isinstance(other, _Tensor) \
                or other._array.dtype.kind not in "iu":
            return number
        info = np.iinfo(other._array.dtype)
        number %= 1 << info.bits
        return number - (1 << info.bits) if number > info.max else number
    return wrap(a, b), wrap(b, a)


def _binary(op, name, a, b, floats):
    if b.__class__ is int and op in _INDEX_ARITHMETIC and isinstance(a, _Tensor) \
            and a._array.dtype.kind in "iu" and not _apply_hooks:
        # index arithmetic, `i + block_size` on an integer tensor: no gradient flows through
        # integers, so there is no node to record, and the op's forward is this one NumPy
        # call (a batch of 16 windows makes 64 of them; `apply` costs twice the call)
        return _t.Tensor._wrap(np.asarray(_INDEX_ARITHMETIC[op](a._array, b)))
    floats = floats or op is ops.Div  # true division: integers give floats
    if _needs_promotion(a, b, floats):
        if op is ops.Sub and any(np.result_type(_t.array_of(x)) == np.bool_ for x in (a, b)):
            raise TypeError("sub: subtraction with a bool tensor is not supported, as in "
                            "PyTorch; use ~ or logical_not() to invert a mask")
        a, b = _promoted(a, b, name, floats)
    try:
        return op.apply(a, b)
    except ValueError as e:
        _raise_if_broadcast(e, name, a, b)
        raise


def compare(fn, name, a, b, ordered=False):
    """A comparison in the promoted dtype, as in PyTorch: a bool tensor, no gradient.
    `ordered` (<, <=, >, >=) refuses complex numbers, which have no order."""
    if b.__class__ is int or a.__class__ is int:
        a, b = _wrapped_ints(a, b)  # `int8 < 300` compares with 300 in int8, as PyTorch does
    if _needs_promotion(a, b):
        a, b = _promoted(a, b, name)
    if ordered and any(getattr(x, "dtype", None) is not None and x.dtype.kind == "c"
                       for x in (a, b)):
        raise NotImplementedError(f"{name}: not implemented for complex tensors")
    try:  # (array_of inlined: masks such as `tril[:T, :T] == 0` are made for every call)
        return _t.Tensor._wrap(fn(a._array if isinstance(a, _Tensor) else a,
                                  b._array if isinstance(b, _Tensor) else b))
    except ValueError as e:
        _raise_if_broadcast(e, name, a, b)
        raise


def _raise_if_broadcast(e, name, a, b):
    if "broadcast" in str(e) and name not in str(e)[:20]:
        shapes = np.shape(_t.array_of(a)), np.shape(_t.array_of(b))
        raise broadcast_error(name, *shapes) from None


def _needs_promotion(a, b, floats=False):
    """False in the common cases where NumPy's rules already give PyTorch's dtype: two tensors
    of one dtype, a float tensor with a Python int or float, or an integer tensor with a Python
    int (NumPy, like PyTorch, converts the number to the tensor's dtype; `i + block_size` with
    an index tensor is everyday code)."""
    if isinstance(a, _Tensor):
        dtype = a._array.dtype
        if isinstance(b, _Tensor):
            return b._array.dtype is not dtype or (floats and dtype.kind != "f")
        return _number_needs_promotion(dtype, b, floats)
    return not isinstance(b, _Tensor) or _number_needs_promotion(b._array.dtype, a, floats)


def _number_needs_promotion(dtype, number, floats):
    """For a tensor of `dtype` with the operand `number` (not a tensor)."""
    if dtype.kind == "f":
        return number.__class__ not in _PY_NUMBERS
    return floats or dtype.kind not in "iu" or number.__class__ is not int


def _promoted(a, b, name, floats=False):
    dtype = computation_dtype((a, b), name, floats)
    return as_dtype(a, dtype), as_dtype(b, dtype)


def as_dtype(x, dtype):
    """`x` (a tensor, array or number) in `dtype`. A tensor converted for an op stands for the
    original in the graph: its gradient, computed in `dtype`, reaches the original, and the
    engine casts it back (PyTorch computes mixed ops the same way)."""
    if not isinstance(x, _Tensor):
        return np.asarray(x, dtype=dtype)
    if x._array.dtype == dtype:
        return x
    c = _t.Tensor._wrap(x._array.astype(dtype))
    if x._requires_grad:
        c._requires_grad = True
        if x.grad_fn is None:
            c._acc = _node_of(x)  # x's AccumulateGrad
        else:
            c.grad_fn, c._acc = x.grad_fn, x._acc  # (an output's edge, if x has one: op.py)
    return c
