"""Type promotion as in PyTorch: the dtype an op on operands of mixed dtypes computes in.

    minigrad.result_type(x_float32, y_int64)   # float32
    minigrad.result_type(x_int64, 0.5)          # float32, the default float dtype
    minigrad.promote_types(minigrad.int8, minigrad.uint8)   # int16

Dtypes fall in three categories, bool < integer < floating. Operands fall in three priority
classes: tensors with at least one dimension, 0-d tensors, and Python numbers (NumPy scalars
count as Python numbers). A lower class changes the result only when it brings a higher
category: `float32 tensor * float64 0-d tensor` stays float32, but `int32 tensor * 0-d
float64 tensor` is float64, and `int tensor * 0.5` is float32, because a Python float counts
as the default float dtype. Two dtypes of one category promote as in NumPy (`uint8 + int8`
is int16, `float16 + float32` is float32); across categories the higher one's dtype wins
unchanged (`int64 + float16` is float16, where NumPy says float64).
"""
from __future__ import annotations

import numpy as np

_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}  # bool < integer < floating
_DEFAULT_FLOAT = np.dtype(np.float32)


def get_default_dtype():
    """The dtype of Python floats in tensors and promotions: float32, as in PyTorch."""
    return _DEFAULT_FLOAT.type


def _category(dtype, op):
    try:
        return _CATEGORY[dtype.kind]
    except KeyError:
        raise TypeError(f"{op}: dtype {dtype} is not supported (use bool, an integer type, "
                        f"float16, float32 or float64)") from None


def promote_types(type1, type2):
    """The smallest dtype both convert to without leaving the higher category (`torch.promote_types`)."""
    a, b = np.dtype(type1), np.dtype(type2)
    ca, cb = _category(a, "promote_types"), _category(b, "promote_types")
    if ca != cb:
        return a if ca > cb else b
    out = np.promote_types(a, b)
    if _CATEGORY.get(out.kind) != ca:  # uint64 with a signed type: NumPy would pick float64
        raise TypeError(f"promote_types: {a} and {b} have no common integer dtype")
    return out


def _classify(x, op):
    """(priority class, dtype): 0 for dimensioned tensors and arrays, 1 for 0-d ones, 2 for
    Python numbers, which count as bool, int64 or the default float."""
    arr = getattr(x, "_array", x)  # a Tensor's array
    if isinstance(arr, np.ndarray):
        return (0 if arr.ndim else 1), arr.dtype
    if isinstance(x, (bool, np.bool_)):
        return 2, np.dtype(np.bool_)
    if isinstance(x, (int, np.integer)):
        return 2, np.dtype(np.int64)
    if isinstance(x, (float, np.floating)):
        return 2, _DEFAULT_FLOAT
    raise TypeError(f"{op}: cannot compute with a {type(x).__name__} "
                    f"(expected tensors, arrays or Python numbers)")


def _combine(higher, lower, op):
    """A lower priority class changes the dtype only if its category is higher."""
    if higher is None or lower is None:
        return lower if higher is None else higher
    if _category(lower, op) > _category(higher, op):
        return promote_types(higher, lower)
    return higher


def result_type(*operands):
    """The dtype PyTorch computes `operands` in (`torch.result_type`, for any number of them)."""
    return _result_type(operands, "result_type")


def _result_type(operands, op):
    if not operands:
        raise TypeError(f"{op}: expected at least one operand")
    classes = [None, None, None]  # dimensioned, 0-d, Python numbers
    for x in operands:
        k, dtype = _classify(x, op)
        classes[k] = dtype if classes[k] is None else promote_types(classes[k], dtype)
    return _combine(classes[0], _combine(classes[1], classes[2], op), op)


def computation_dtype(operands, op, floats=False):
    """`result_type`, or with `floats=True` the default float for a non-float result (true
    division of integers gives floats)."""
    dtype = _result_type(operands, op)
    return _DEFAULT_FLOAT if floats and dtype.kind != "f" else dtype
