"""A number converted to a dtype as PyTorch converts it: checked, where NumPy either refuses
what PyTorch wraps or silently rounds what PyTorch refuses.

PyTorch converts a Python number given to an op (a clamp bound, a fill value) with c10's
`checked_convert`, and the numbers of a list given to `tensor(..., dtype=)` by the same
range test. The value fits an integer dtype when it lies between the dtype's lowest and
highest values; an integer fits an unsigned dtype down to minus its highest value and then
wraps (uint8 takes -1 as 255, -255 as 1, and refuses -256 and 256); a float must be finite
and within those bounds before it is truncated (127.9 does not fit int8, -0.5 not uint8).
A float dtype other than float64 takes infinities and NaN, and refuses finite values beyond
its largest (1e6 for float16); float64, complex and bool dtypes take every number. Two
exceptions, as measured against PyTorch: a list's floats become inf beyond a float dtype's
range, and a number written by indexing into float16 is rounded, whatever its size
(`checked_written`).

    checked_scalar(-1, uint8)               # numpy.uint8(255)
    checked_scalar(1000, int8)              # RuntimeError: value cannot be converted to
                                            # type int8_t without overflow
    checked_array([-1, 300], uint8)         # RuntimeError: ... to type uint8 without overflow
"""
from __future__ import annotations

import math

import numpy as np

# the C++ type names of PyTorch's scalar conversion message (ops' scalar arguments)
_C_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
            "int64": "int64_t", "float16": "c10::Half", "float32": "float"}


_FLOAT_MAX = {}  # float dtype -> its largest finite value, as a Python float
_INT64 = 2 ** 63


def _python_int(value):
    """PyTorch's conversion of a Python int to its Scalar: int64, or uint64 up to 2**64 - 1."""
    if value >= 2 ** 64:
        raise OverflowError("int too big to convert")
    if value < -2 ** 63:
        raise OverflowError("can't convert negative int to unsigned")


def _overflow(dtype, names):
    name = names.get(dtype.name, dtype.name) if names is not None else dtype.name
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


def _bounds(dtype, integers):
    """(lowest, highest) a value may have to be converted to integer or float `dtype`."""
    if dtype.kind == "f":
        info = np.finfo(dtype)
        return float(info.min), float(info.max)
    info = np.iinfo(dtype)
    if dtype.kind == "u" and integers:  # an integer wraps into an unsigned type
        return -int(info.max), int(info.max)
    return int(info.min), int(info.max)


def checked_scalar(value, dtype):
    """`value` (a Python or NumPy number) as a NumPy scalar of `dtype`, as PyTorch converts an
    op's scalar argument; RuntimeError (its message names the C++ type, as PyTorch's) where
    it does not fit."""
    dtype = np.dtype(dtype)
    cls = value.__class__
    if (cls is float or cls is int and -_INT64 <= value < _INT64) and dtype.kind == "f":
        # the usual case (a float fill or bound, attention's -inf mask), which an op may meet
        # once per token: one comparison with the dtype's largest value, kept per dtype
        top = _FLOAT_MAX.get(dtype)
        if top is None:
            top = _FLOAT_MAX[dtype] = float(np.finfo(dtype).max)
        if -top <= value <= top or cls is float and not math.isfinite(value):
            return dtype.type(value)
        raise _overflow(dtype, _C_NAMES)
    if isinstance(value, int) and not isinstance(value, bool):
        _python_int(value)
    if isinstance(value, (bool, np.bool_)) or dtype.kind in "bc":
        return dtype.type(value)
    if dtype == np.float64 or isinstance(value, (complex, np.complexfloating)):
        return dtype.type(value)
    integer = isinstance(value, (int, np.integer))
    lo, hi = _bounds(dtype, integer)
    if integer:
        fits = lo <= int(value) <= hi
    else:
        v = float(value)
        fits = (not np.isfinite(v) and dtype.kind == "f") or lo <= v <= hi
    if not fits:
        raise _overflow(dtype, _C_NAMES)
    if integer and dtype.kind in "iu":
        return np.array(int(value)).astype(dtype)[()]  # wraps a negative into unsigned
    with np.errstate(over="ignore", invalid="ignore"):
        return dtype.type(value)


def checked_written(value, dtype):
    """`value` converted as PyTorch converts a number written by indexing (`t[i] = 1e39`):
    as `checked_scalar`, except that float16 takes any number, rounded (1e6 and 1e39 become
    inf), but an integer from 2**63 on (an unsigned Scalar)."""
    dtype = np.dtype(dtype)
    if isinstance(value, int) and not isinstance(value, bool):
        _python_int(value)
    if (dtype == np.float16 and isinstance(value, (int, float, np.integer, np.floating))
            and not (isinstance(value, int) and value >= 2 ** 63)):
        with np.errstate(over="ignore"):
            return np.float16(value)
    return checked_scalar(value, dtype)


def checked_array(data, dtype):
    """Nested lists (or a number) of Python or NumPy numbers as an array of integer `dtype`,
    each number converted as PyTorch's `tensor(data, dtype=)` converts it: RuntimeError
    naming the dtype where one does not fit, ValueError for an integer beyond int64."""
    dtype = np.dtype(dtype)
    found = np.array(data)
    if found.dtype == object or (found.dtype == np.uint64 and found.size
                                 and int(found.max()) > np.iinfo(np.int64).max):
        raise ValueError("Overflow when unpacking long long")
    if found.dtype.kind not in "iuf":  # bool, complex, ...: NumPy's conversion and errors
        return np.array(data, dtype=dtype)
    if found.size:
        lo, hi = _bounds(dtype, found.dtype.kind in "iu")
        with np.errstate(invalid="ignore"):
            bad = ~((found >= lo) & (found <= hi))  # NaN is out of every range
        if bad.any():
            raise _overflow(dtype, None)
    return found.astype(dtype)
