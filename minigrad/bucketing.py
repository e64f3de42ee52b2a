"""Positions in sorted sequences: `searchsorted` (where values would be inserted to keep a
sorted sequence, or each row of a batch of sequences, in order) and `bucketize` (the bucket of
each value between sorted boundaries). Their results are indices, int64 (int32 on request), so
they have no gradient, as in PyTorch."""
from __future__ import annotations

import numpy as np

__all__ = ["bucketize", "searchsorted"]


def _side(right, side, op):
    if side is None:
        return "right" if right else "left"
    if side not in ("left", "right"):
        raise RuntimeError(f"{op}: side can only be 'left' or 'right', got {side!r}")
    if right and side == "left":
        raise RuntimeError(f"{op}: side and right can't be set to opposites, got side of left "
                           f"while right was True")
    return side


def _array(x):
    from .tensor import array_of
    return np.asarray(array_of(x))


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """For each value of `input`, the index in `sorted_sequence` (sorted along its last dim)
    where it would be inserted: before equal elements ("left"), or after them (right=True,
    "right"). A 1-D sequence serves every value; an (..., n) one has one row per row of
    `input` (..., m). A number as input gives a 0-d result. `sorter` holds the indices that
    sort an unsorted sequence."""
    from .tensor import Tensor
    side = _side(right, side, "searchsorted")
    seq, values = _array(sorted_sequence), _array(input)
    if sorter is not None:
        order = _array(sorter)
        if order.shape != seq.shape:
            raise RuntimeError(f"searchsorted: boundary and sorter must have the same size, "
                               f"got shapes {seq.shape} and {order.shape}")
        seq = np.take_along_axis(seq, order.astype(np.int64), axis=-1)
    if seq.ndim == 0:
        raise RuntimeError("searchsorted: boundaries tensor should have at least 1 dimension, "
                           "got a 0-d tensor")
    if seq.ndim == 1:
        out = np.searchsorted(seq, values, side=side)
    else:
        if values.shape[:-1] != seq.shape[:-1]:
            raise RuntimeError(f"searchsorted: boundaries tensor should be 1 dimension or the "
                               f"first N-1 dimensions of boundaries tensor and input value "
                               f"tensor must match, but we got boundaries tensor "
                               f"{list(seq.shape)} and input value tensor {list(values.shape)}")
        rows, width = seq.reshape(-1, seq.shape[-1]), values.shape[-1]
        flat = values.reshape(-1, width)
        out = np.stack([np.searchsorted(r, v, side=side) for r, v in zip(rows, flat)]) \
            if rows.shape[0] else np.zeros(flat.shape, np.int64)
        out = out.reshape(values.shape)
    return Tensor._wrap(np.asarray(out, np.int32 if out_int32 else np.int64))


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value: i with boundaries[i-1] < x <= boundaries[i] (right=False), or
    boundaries[i-1] <= x < boundaries[i] (right=True), for 1-D sorted `boundaries`."""
    if _array(boundaries).ndim != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got dim "
                           f"{_array(boundaries).ndim}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
