"""PyTorch's legacy tensor types: `FloatTensor([1, 2])`, `LongTensor(3, 4)`, `x.type(LongTensor)`
and `isinstance(x, FloatTensor)` (true for a float32 tensor), as older PyTorch code uses them.

Each type is a dtype in disguise: calling it makes a Tensor of that dtype from data (or of a
shape, filled with zeros where PyTorch would leave memory uninitialised), and an isinstance
check compares dtypes.
"""
from __future__ import annotations

import numpy as np

from ..tensor import Tensor


class _TypeCheck(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype

    def __repr__(cls):
        return f"<class 'minigrad.{cls.__name__}'>"


class TensorType(metaclass=_TypeCheck):
    """Base of the legacy types; `dtype` is set by each subclass."""

    dtype = None

    def __new__(cls, *args):
        if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
            data = args[0]._array if isinstance(args[0], Tensor) else args[0]
            return Tensor._wrap(np.array(data).astype(cls.dtype))
        shape = tuple(int(n) for n in args)
        return Tensor._wrap(np.zeros(shape, cls.dtype))


def _legacy(name, dtype):
    return _TypeCheck(name, (TensorType,), {"dtype": np.dtype(dtype), "__doc__":
                      f"A {np.dtype(dtype)} tensor, from data or of a shape (PyTorch's {name})."})


FloatTensor = _legacy("FloatTensor", np.float32)
DoubleTensor = _legacy("DoubleTensor", np.float64)
HalfTensor = _legacy("HalfTensor", np.float16)
LongTensor = _legacy("LongTensor", np.int64)
IntTensor = _legacy("IntTensor", np.int32)
ShortTensor = _legacy("ShortTensor", np.int16)
CharTensor = _legacy("CharTensor", np.int8)
ByteTensor = _legacy("ByteTensor", np.uint8)
BoolTensor = _legacy("BoolTensor", np.bool_)

_ALL = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor, CharTensor,
        ByteTensor, BoolTensor)
_BY_DTYPE = {cls.dtype: cls for cls in _ALL}
_BY_NAME = {cls.__name__: cls for cls in _ALL}


def type_name(dtype):
    """'minigrad.FloatTensor' for float32, and so on (what `t.type()` returns)."""
    cls = _BY_DTYPE.get(np.dtype(dtype))
    return f"minigrad.{cls.__name__}" if cls else f"minigrad.Tensor[{np.dtype(dtype)}]"


def dtype_of(spec):
    """The dtype meant by a legacy type, its name ('torch.LongTensor'), or a dtype."""
    if isinstance(spec, str):
        name = spec.rsplit(".", 1)[-1]
        if name not in _BY_NAME:
            raise ValueError(f"type: unknown tensor type {spec!r} (expected one of "
                             f"{', '.join(_BY_NAME)})")
        return _BY_NAME[name].dtype
    if isinstance(spec, type) and issubclass(spec, TensorType):
        return spec.dtype
    return spec
