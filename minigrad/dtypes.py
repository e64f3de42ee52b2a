"""Dtypes under PyTorch's names. A minigrad dtype is a NumPy scalar type (`minigrad.float32 is
numpy.float32`), and `tensor.dtype == minigrad.float32` holds as `tensor.dtype == torch.float32`
does. PyTorch's aliases (`float`, `double`, `half`, `long`, `int`, `short`, `bool`, `cfloat`)
are exported by `minigrad/__init__.py`, so this module need not shadow Python's builtins.

Dtypes NumPy lacks (bfloat16, the float8 family, complex32) exist as names, so code that
mentions them imports, but any use raises one error naming the dtype and what to use instead.
"""
from __future__ import annotations

import numpy as np

float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
bool_, complex64, complex128 = np.bool_, np.complex64, np.complex128
half, double, long, short, cfloat, cdouble = float16, float64, int64, int16, complex64, complex128


class UnsupportedDtype:
    """A PyTorch dtype with no NumPy counterpart; using it is an error that says what to use.

    NumPy reads an object's `dtype` attribute whenever it is given one as a dtype, so raising
    there makes `zeros(3, dtype=bfloat16)`, `t.to(bfloat16)` and `model.to(bfloat16)` all fail
    with this message, from every function, without a check in each.
    """

    def __init__(self, name, instead):
        self.name, self.instead = name, instead

    @property
    def dtype(self):
        raise TypeError(f"dtype minigrad.{self.name}: minigrad stores tensors as NumPy arrays "
                        f"and NumPy has no {self.name}; use {self.instead}")

    @property
    def is_floating_point(self):
        return "float" in self.name

    def __repr__(self):
        return f"minigrad.{self.name}"


bfloat16 = UnsupportedDtype("bfloat16", "float32 (or float16 to halve memory)")
float8_e4m3fn = UnsupportedDtype("float8_e4m3fn", "float16 or float32")
float8_e5m2 = UnsupportedDtype("float8_e5m2", "float16 or float32")
complex32 = chalf = UnsupportedDtype("complex32", "complex64")

FLOATING = (np.float16, np.float32, np.float64)


def resolve(dtype, default=float32):
    """`dtype` as a NumPy dtype; None gives `default` (float32 unless the caller says)."""
    return np.dtype(default if dtype is None else dtype)


def is_floating(dtype) -> bool:
    return np.dtype(dtype).type in FLOATING


finfo, iinfo = np.finfo, np.iinfo
