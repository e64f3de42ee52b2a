"""Two factories PyTorch keeps beside `arange` and `tensor`: `range`, deprecated but still met in
older scripts, and `scalar_tensor`, a 0-d tensor of a number.

`torch.range(start, end, step)` includes `end` (Python's `range` and `arange` stop before it),
and gives the default float dtype whatever its arguments: `range(1, 4)` is
`tensor([1., 2., 3., 4.])`. PyTorch computes each value as `start + i * step` in double (in
int64 for an integer dtype) and rounds it to the dtype once; so does this one, so that its
float32 values are PyTorch's bit for bit.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .creation import _make, _number
from .dtypes import get_default_dtype, resolve
from .errors import InvalidValueError
from .platform.layout import factory_keywords

__all__ = ["range", "scalar_tensor"]


@factory_keywords
def range(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """[start, end] in steps of `step`, `end` included; the default float dtype unless
    `dtype` says otherwise. Deprecated as in PyTorch: use `arange`, which stops before end."""
    warnings.warn("minigrad.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "minigrad.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=3)   # (the caller of factory_keywords' wrapper)
    start, end, step = _number(start), _number(end), _number(step)
    if end is None:
        raise TypeError("range() missing required argument 'end' (pos 2)")
    if step == 0:
        raise InvalidValueError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise InvalidValueError(f"range: start {start}, end {end} and step {step}: upper bound "
                                f"and lower bound inconsistent with step sign")
    dt = resolve(dtype, get_default_dtype())
    size = int((end - start) / step + 1)   # (truncated, as PyTorch sizes it)
    if dt.kind in "fc":
        values = float(start) + np.arange(size, dtype=np.float64) * float(step)
    else:
        values = int(start) + np.arange(size, dtype=np.int64) * int(step)
    return _make(values, dt, requires_grad, device, "range")


@factory_keywords
def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor holding the number `s`, in the default float dtype unless `dtype` says
    (an int or a bool too: `scalar_tensor(3)` is `tensor(3.)`)."""
    s = _number(s)
    if not isinstance(s, (int, float, bool, complex, np.number, np.bool_)):
        raise TypeError(f"scalar_tensor(): argument 's' must be Number, not {type(s).__name__}")
    dt = resolve(dtype, get_default_dtype())
    if isinstance(s, (complex, np.complexfloating)) and dt.kind != "c":
        raise TypeError(f"scalar_tensor: cannot store the complex {s} in {dt}")
    if dt.kind not in "fc" and isinstance(s, float) and not math.isfinite(s):
        raise RuntimeError(f"value cannot be converted to type {dt} without overflow")
    return _make(np.array(s, dtype=dt), None, requires_grad, device, "scalar_tensor")
