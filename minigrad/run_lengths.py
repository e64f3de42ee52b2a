"""`unique_consecutive`: each run of equal neighbouring elements (or slices along a dim)
kept once, as PyTorch's (and Unix `uniq`): optionally with, for every input element, the
index of its run (`return_inverse`) and each run's length (`return_counts`).
"""
from __future__ import annotations

import numpy as np

from .ops.shape import normalize_dim
from .tensor import Tensor

__all__ = ["unique_consecutive"]


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The runs' values: 1-D (of the flattened input) without dim, else the input with each
    run of equal slices along dim kept once. Inverse indices and counts are int64. No
gradient (PyTorch records one whose backward is not implemented)."""
    a = input._array
    if dim is None:
        flat = a.reshape(-1)
        starts = np.ones(flat.shape, dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values, inverse_shape = flat[starts], a.shape
    else:
        d = normalize_dim(dim, a.ndim, "unique_consecutive")
        if any(n == 0 for i, n in enumerate(a.shape) if i != d):
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        moved = np.moveaxis(a, d, 0).reshape(a.shape[d] if a.ndim else 1, -1)
        starts = np.ones(moved.shape[0], dtype=bool)
        starts[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        values = np.compress(starts, a, axis=d)
        inverse_shape = (a.shape[d],)
    out = [Tensor._wrap(np.ascontiguousarray(values))]
    if return_inverse:
        out.append(Tensor._wrap((np.cumsum(starts) - 1).astype(np.int64).reshape(inverse_shape)))
    if return_counts:
        first = np.flatnonzero(starts)
        out.append(Tensor._wrap(np.diff(np.append(first, starts.size)).astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)
