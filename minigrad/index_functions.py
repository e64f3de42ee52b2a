"""Indexing by flat positions and finding elements: `take` (elements of the flattened input
at the positions of an index tensor, negative positions counting from the end; the result has
the index's shape), `argwhere` (the positions of the nonzero elements, one row each) and
`unravel_index` (flat positions as one coordinate tensor per dim of a shape).
take's gradient is indexing's, summed where positions repeat.
"""
from __future__ import annotations

import numpy as np

from .autograd import op as autograd_op
from .linalg_checks import torch_dtype_name

__all__ = ["argwhere", "take", "unravel_index"]


def take(input, index):
    """input.reshape(-1)[index]: index an int64 tensor of any shape, values in [-n, n) for n
    elements."""
    i = index._array if isinstance(index, autograd_op.Tensor) else None
    if i is None or i.dtype != np.int64:
        got = type(index).__name__ if i is None else torch_dtype_name(i.dtype)
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {got}")
    n = input.numel()
    bad = (i >= n) | (i < -n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(i[bad].flat[0])} on a "
                         f"tensor of {n} elements.")
    flat = input.reshape(-1)
    return flat[autograd_op.Tensor._wrap(np.where(i < 0, i + n, i))]


def argwhere(input):
    """The positions of input's nonzero elements, an (n, input.ndim) int64 tensor in
    row-major order (`nonzero`)."""
    return input.nonzero()


def unravel_index(indices, shape):
    """The coordinates of flat positions `indices` (an integer tensor) in a tensor of `shape`:
    a tuple of int64 tensors of indices' shape, one per dim (negative positions count from
    the end, as NumPy's would not)."""
    i = indices._array if isinstance(indices, autograd_op.Tensor) else None
    if i is None:
        raise TypeError(f"unravel_index: expected 'indices' to be a tensor, got "
                        f"{type(indices).__name__}")
    if i.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{torch_dtype_name(i.dtype)}")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    n = int(np.prod(shape))
    if i.size and (i.min() < -n or i.max() >= n):
        raise ValueError(f"unravel_index: 'indices' must be in range [-{n}, {n - 1}] for shape "
                         f"{shape}")
    coords = np.unravel_index(np.where(i < 0, i + n, i).astype(np.int64), shape)
    return tuple(autograd_op.Tensor._wrap(np.asarray(c, dtype=np.int64)) for c in coords)
