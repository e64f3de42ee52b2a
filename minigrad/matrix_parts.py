"""Parts of matrices: `diagonal` (any diagonal of any two dims), `diag` (a vector's diagonal
matrix, or a matrix's diagonal), `trace`, the positions `tril_indices` and `triu_indices`, and
`Tensor.fill_diagonal_`, a masked write.

`diagonal` is a view, as PyTorch's: a write into it changes the input (its op is in
ops/diagonal.py); `diag` of a matrix is a copy of it, as PyTorch's. `diag` of a vector is an
`index_put` of computed positions, so its gradients come from the indexing ops, which have
rules of every order already.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .tensor import Tensor

__all__ = ["diag", "diagflat", "diagonal", "trace", "tril_indices", "triu_indices"]


def _diagonal_positions(rows, cols, offset):
    """(row, col) index arrays of the `offset` diagonal of a rows x cols matrix."""
    start_r, start_c = max(0, -offset), max(0, offset)
    length = max(0, min(rows - start_r, cols - start_c))
    steps = np.arange(length)
    return steps + start_r, steps + start_c


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The `offset` diagonal (above the main one for offset > 0) of the matrices in dims dim1
    and dim2: (..., n, ..., m, ...) -> (..., L), the diagonal as the last dim."""
    return _diagonal(input, offset, dim1, dim2)


def _diagonal(input, offset, dim1, dim2):
    return ops.Diagonal.apply(input, offset=int(offset), dim1=dim1, dim2=dim2)


def diag(input, diagonal=0):
    """For a vector (n,): the square matrix (n + |k|, n + |k|) with it on diagonal k and zeros
    elsewhere; for a matrix: its diagonal k, a vector."""
    if input.ndim == 1:
        size = input.shape[0] + abs(diagonal)
        rows, cols = _diagonal_positions(size, size, diagonal)
        zeros = Tensor._wrap(np.zeros((size, size), input.dtype))
        return zeros.index_put((Tensor._wrap(rows), Tensor._wrap(cols)), input)
    if input.ndim == 2:  # a copy, as PyTorch's (only `diagonal` is a view)
        return _diagonal(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D (shape "
                       f"{input.shape})")


def diagflat(input, offset=0):
    """The square matrix with `input`'s elements, flattened, on diagonal `offset`."""
    return diag(input.reshape(-1), offset)


def trace(input):
    """The sum of a matrix's main diagonal (integers sum to int64, as `sum`)."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                           f"(shape {input.shape})")
    if input.dtype == np.bool_:  # as PyTorch's kernel
        raise NotImplementedError("trace: not implemented for bool tensors")
    return diagonal(input).sum()


def _triangle_indices(fn, name, row, col, offset, dtype):
    if row < 0 or col < 0:
        raise RuntimeError(f"{name}: row and col must be non-negative, got {row} and {col}")
    if dtype is not None and np.dtype(dtype).kind not in "iu":
        raise RuntimeError(f"{name}: dtype must be an integer type, got {dtype}")
    rows, cols = fn(row, offset, col)
    return Tensor._wrap(np.stack([rows, cols]).astype(dtype or np.int64).reshape(2, -1))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) positions of the lower triangle of a row x col matrix (on and below
    diagonal `offset`), row by row."""
    return _triangle_indices(np.tril_indices, "tril_indices", row, col, offset, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (2, N) positions of the upper triangle (on and above diagonal `offset`)."""
    return _triangle_indices(np.triu_indices, "triu_indices", row, col, offset, dtype)


def fill_diagonal_(input, fill_value, wrap=False):
    """`Tensor.fill_diagonal_`: write `fill_value` on the main diagonal in place, (i, i) of a
    2-d tensor of any shape, (i, i, ..., i) of one whose dims are all equal; `wrap=True` goes on
    past a tall matrix's first square block, as PyTorch's."""
    mask = Tensor._wrap(fill_diagonal_mask(input.shape, wrap))
    return input._assign("fill_diagonal_", lambda old: old.masked_fill(mask, fill_value))


def fill_diagonal_mask(shape, wrap):
    """The elements `Tensor.fill_diagonal_` writes, as a boolean array of `shape`: (i, i, ...)
    for i below the smallest dim; with `wrap`, a 2-d matrix taller than wide by more than one
    row continues every width + 1 elements in row-major order, as PyTorch's strided fill."""
    if len(shape) < 2:
        raise RuntimeError(f"fill_diagonal_: dimensions must larger than 1, got a "
                           f"{len(shape)}-d tensor")
    if len(shape) > 2 and len(set(shape)) > 1:
        raise RuntimeError(f"fill_diagonal_: all dimensions of input must be of equal length, "
                           f"got shape {tuple(shape)}")
    mask = np.zeros(shape, dtype=bool)
    size = min(shape)
    mask[(np.arange(size),) * len(shape)] = True
    height, width = shape[0], shape[-1]
    if wrap and len(shape) == 2 and height > width + 1:
        flat = mask.reshape(-1)
        flat[np.arange(size, -(-height * width // (width + 1))) * (width + 1)] = True
    return mask
