"""Factories for new tensors. Floats default to float32; random ones use the seeded generator."""
from __future__ import annotations

import numpy as np

from .random import generator
from .tensor import Tensor

float32, float64, float16 = np.float32, np.float64, np.float16
int64, int32, long, bool_ = np.int64, np.int32, np.int64, np.bool_


def _shape(size):
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _make(arr, dtype, requires_grad):
    t = Tensor._wrap(arr if dtype is None else arr.astype(dtype, copy=False))
    return t.requires_grad_(True) if requires_grad else t


def tensor(data, dtype=None, requires_grad=False) -> Tensor:
    """A new tensor holding a copy of `data` (a list, number, array or tensor)."""
    return Tensor(data, dtype=dtype, requires_grad=requires_grad)


def zeros(*size, dtype=float32, requires_grad=False):
    return _make(np.zeros(_shape(size), dtype), None, requires_grad)


def ones(*size, dtype=float32, requires_grad=False):
    return _make(np.ones(_shape(size), dtype), None, requires_grad)


def full(size, fill_value, dtype=None, requires_grad=False):
    if dtype is None:
        dtype = float32 if isinstance(fill_value, float) else np.asarray(fill_value).dtype
    return _make(np.full(_shape((size,)), fill_value, dtype), None, requires_grad)


def zeros_like(t, dtype=None, requires_grad=False):
    return zeros(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def ones_like(t, dtype=None, requires_grad=False):
    return ones(t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, requires_grad=False):
    """Like PyTorch: integers give int64, any float argument gives float32."""
    if end is None:
        start, end = 0, start
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = float32 if floats else int64
    return _make(np.arange(start, end, step), dtype, requires_grad)


def eye(n, m=None, dtype=float32, requires_grad=False):
    return _make(np.eye(n, m, dtype=dtype), None, requires_grad)


def randn(*size, dtype=float32, requires_grad=False):
    """Standard normal samples."""
    return _make(generator().standard_normal(_shape(size)), dtype, requires_grad)


def rand(*size, dtype=float32, requires_grad=False):
    """Uniform samples in [0, 1)."""
    return _make(generator().random(_shape(size)), dtype, requires_grad)


def randint(low, high=None, size=(), dtype=int64):
    """Integers in [low, high) (or [0, low) when high is omitted)."""
    if high is None:
        low, high = 0, low
    return _make(generator().integers(low, high, size=_shape((size,))), dtype, False)


def randperm(n, dtype=int64):
    return _make(generator().permutation(n), dtype, False)
