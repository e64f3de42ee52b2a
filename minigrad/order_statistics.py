"""Order statistics PyTorch has beside median and quantile: `mode` (the most frequent value
along a dim, with its index), and `nanmedian` and `nanquantile`, which ignore NaNs where
median and quantile propagate them.

Each result is the input's element at an index found by sorting, read with `gather` (or by
`MedianAll` and quantile's interpolation of the sorted values), so the gradient goes to
the elements chosen, as PyTorch's does, with every rule of those ops.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .ops._util import normalize_dim
from .statistics import MedianAll, _orderable, sorted_quantile

__all__ = ["mode", "nanmedian", "nanquantile"]


def _reduced(input, d, index, pair, keepdim):
    """(values, indices) from the int64 positions `index` (size 1 along d) of input's rows."""
    from .tensor import Tensor
    values = input.gather(d, Tensor._wrap(index))
    if not keepdim:
        values, index = values.squeeze(d), np.squeeze(index, d)
    return pair(values, Tensor._wrap(index))


def _row_dim(input, dim, op):
    """dim as a non-negative int, after PyTorch's checks; None for a 0-d input."""
    d = normalize_dim(dim, max(input.ndim, 1), op)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size. (input of "
                         f"shape {tuple(input.shape)})")
    return d if input.ndim else None


def _mode_index(a):
    """For rows a (..., n): the position of each row's most frequent value, the smallest of
    equally frequent ones, at its last occurrence (PyTorch's choice), as (..., 1) int64."""
    order = np.argsort(a, axis=-1, kind="stable")
    s = np.take_along_axis(a, order, -1)
    n = s.shape[-1]
    positions = np.broadcast_to(np.arange(n), s.shape)
    starts = np.ones(s.shape, bool)
    starts[..., 1:] = s[..., 1:] != s[..., :-1]
    first = np.maximum.accumulate(np.where(starts, positions, 0), axis=-1)
    ends = np.ones(s.shape, bool)
    ends[..., :-1] = starts[..., 1:]
    last = n - 1 - np.maximum.accumulate(np.where(ends, n - 1 - positions, 0)[..., ::-1],
                                         axis=-1)[..., ::-1]
    best = np.argmax(last - first, axis=-1)[..., None]   # the first longest run: smallest value
    run = first == np.take_along_axis(first, best, -1)
    return np.where(run, order, -1).max(-1, keepdims=True).astype(np.int64)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along `dim` and its index, a (values, indices) pair: among
    equally frequent values the smallest, at its last occurrence."""
    from .tensor import Tensor
    d = _row_dim(input, dim, "mode")
    if d is None:
        return return_types.mode(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    rows = np.moveaxis(input._array, d, -1)
    index = np.moveaxis(_mode_index(rows), -1, d)
    return _reduced(input, d, index, return_types.mode, keepdim)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the non-NaN values (NaN where there are none): of all elements, a
    0-d tensor; or along `dim`, a (values, indices) pair."""
    from .tensor import Tensor
    if dim is None and input.numel() == 0:  # NaN, converted to the dtype, as median's
        return MedianAll.apply(input)
    _orderable(input, "nanmedian")
    if dim is None:
        nan = np.isnan(input._array) if input.dtype.kind == "f" else np.zeros(input.shape, bool)
        if not nan.any() or nan.all():  # median's, and its spread of the gradient over ties
            return MedianAll.apply(input)
        return MedianAll.apply(input[Tensor._wrap(~nan)])
    d = _row_dim(input, dim, "nanmedian")
    if d is None:
        return return_types.nanmedian(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    a = input._array
    order = np.argsort(a, axis=d, kind="stable")  # NaN last
    if a.dtype.kind == "f":
        counted = (~np.isnan(a)).sum(d, keepdims=True)
    else:
        counted = np.full(a.shape[:d] + (1,) + a.shape[d + 1:], a.shape[d])
    index = np.take_along_axis(order, np.maximum(counted - 1, 0) // 2, d).astype(np.int64)
    return _reduced(input, d, index, return_types.nanmedian, keepdim)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile over the non-NaN values of each row (NaN for a row of NaNs only)."""
    return sorted_quantile(input, q, dim, keepdim, interpolation, skip_nan=True)
