"""Indexing by flat positions and finding elements: `take` (elements of the flattened input
at the positions of an index tensor, negative positions counting from the end; the result has
the index's shape) and `argwhere` (the positions of the nonzero elements, one row each).
take's gradient is indexing's, summed where positions repeat.
"""
from __future__ import annotations

import numpy as np

from .autograd import function
from .linalg_checks import torch_dtype_name

__all__ = ["argwhere", "take"]


def take(input, index):
    """input.reshape(-1)[index]: index an int64 tensor of any shape, values in [-n, n) for n
    elements."""
    i = index._array if isinstance(index, function.Tensor) else None
    if i is None or i.dtype != np.int64:
        got = type(index).__name__ if i is None else torch_dtype_name(i.dtype)
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    bad = (i >= n) | (i < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(i[bad].flat[0])} on a "
                         f"tensor of {n} elements.")
    flat = input.reshape(-1)
    return flat[function.Tensor._wrap(np.where(i < 0, i + n, i))]


def argwhere(input):
    """The positions of input's nonzero elements, an (n, input.ndim) int64 tensor in
    row-major order (`nonzero`)."""
    return input.nonzero()
