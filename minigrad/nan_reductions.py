"""Sums and means that skip NaNs: `nansum` (NaNs count as zero) and `nanmean` (the mean of
the values that are not NaN: NaN where there are none), over all elements or over `dim`.

Each is masked_fill (a NaN's gradient is 0, as PyTorch's) then sum, and a division by the
count, ops with backward, double-backward and forward-mode rules.
"""
from __future__ import annotations

import numpy as np

__all__ = ["nanmean", "nansum"]


def _zeroed(input, dtype):
    from .tensor import Tensor
    x = input if dtype is None else input.to(dtype)
    if x.dtype.kind != "f":
        return x, None
    nan = np.isnan(x._array)
    return (x.masked_fill(Tensor._wrap(nan), 0.0) if nan.any() else x), nan


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over `dim` (all elements by default) with NaNs counted as zero; `dtype` casts
    the input first. Integers and bools sum as `sum` does."""
    x, _ = _zeroed(input, dtype)
    return x.sum(dim, keepdim=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean over `dim` (all elements by default) of the values that are not NaN; NaN
    where every value is NaN (or there are none)."""
    from .tensor import Tensor
    x, nan = _zeroed(input, dtype)
    if x.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {x.dtype}")
    dims = tuple(range(x.ndim)) if dim is None else dim
    count = (~nan).sum(axis=dims if x.ndim else None, keepdims=keepdim).astype(x.dtype)
    with np.errstate(invalid="ignore", divide="ignore"):
        return x.sum(dim, keepdim=keepdim) / Tensor._wrap(np.asarray(count))
