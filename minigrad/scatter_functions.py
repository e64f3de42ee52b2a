"""PyTorch's functions that return a copy of a tensor with some of its elements replaced:
`slice_scatter`, `select_scatter`, `diagonal_scatter` (a slice, one index, or a diagonal
given new values: the inverses of slicing, `select` and `diagonal`), `index_copy` (rows at
an index along a dim), `masked_scatter` (the masked positions filled from a source's
elements in order), `put` (positions of the flattened tensor) and `index_reduce` (rows
combined with a source's by a product, mean, max or min).

Each is one write of the core's (`index_put`, `scatter_reduce`) at positions computed
here, so their gradients, to the tensor and to the new values, are those ops'. The Tensor
methods and their in-place forms (`index_copy_`, `masked_scatter_`, `put_`, ...) are in
tensor_functions.py.
"""
from __future__ import annotations

import numpy as np

from .linalg_checks import torch_dtype_name
from .ops.shape import normalize_dim
from .tensor import Tensor, array_of

__all__ = ["diagonal_scatter", "index_copy", "index_reduce", "masked_scatter", "put",
           "scatter_reduce", "select_scatter", "slice_scatter"]


def _tensor(x):
    return x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x))


def _same_dtype(op, input, src):
    if src.dtype != input.dtype:
        raise RuntimeError(f"{op}: expected self and source to have same dtypes but got "
                           f"{torch_dtype_name(input.dtype)} and {torch_dtype_name(src.dtype)}")


def _write(op, input, index, src):
    """input with its elements at `index` replaced by src, whose shape must be theirs."""
    src = _tensor(src)
    want = np.empty(input.shape, dtype=np.bool_)[index].shape
    if src.shape != want:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. src "
                           f"size = {list(src.shape)}, slice size = {list(want)}")
    # these scatters cast src as a view's copy_ would (index_put itself refuses another dtype)
    return input.index_put(index, src if src.dtype == input.dtype else src.to(input.dtype))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src."""
    d = normalize_dim(dim, input.ndim, "slice_scatter")
    return _write("slice_scatter", input, (slice(None),) * d + (slice(start, end, step),), src)


def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src (of that shape)."""
    d = normalize_dim(dim, input.ndim, "select_scatter")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select_scatter: index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    return _write("select_scatter", input, (slice(None),) * d + (index,), src)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with input.diagonal(offset, dim1, dim2) replaced by src, whose last dim runs
    along the diagonal (the diagonal's shape)."""
    n = input.ndim
    a, b = normalize_dim(dim1, n, "diagonal_scatter"), normalize_dim(dim2, n, "diagonal_scatter")
    if a == b:
        raise RuntimeError(f"diagonal_scatter: diagonal dimensions cannot be identical {dim1}, "
                           f"{dim2}")
    x = input.movedim((a, b), (-2, -1))  # the diagonal's positions index the last two dims
    rows, cols = x.shape[-2], x.shape[-1]
    start_r, start_c = max(-offset, 0), max(offset, 0)
    length = max(min(rows - start_r, cols - start_c), 0)
    k = np.arange(length)
    index = (slice(None),) * (n - 2) + (k + start_r, k + start_c)
    return _write("diagonal_scatter", x, index, src).movedim((-2, -1), (a, b))


def _along(input, dim, index, op):
    """(dim normalised, the index tuple picking `index` along it); a 0-d tensor counts as one
    of shape (1,), as PyTorch's index ops take it."""
    d = normalize_dim(dim, max(input.ndim, 1), op)
    idx = np.asarray(array_of(index))
    if idx.ndim > 1 or idx.dtype.kind not in "iu":
        raise IndexError(f"{op}: index should be a 0-d or 1-d integer tensor, got shape "
                         f"{idx.shape} and dtype {idx.dtype}")
    return d, (slice(None),) * d + (idx.reshape(-1),)


def index_copy(input, dim, index, source):
    """input with its slices at `index` along dim replaced by source's, in order (source has
    input's shape with len(index) in place of dim)."""
    source = _tensor(source)
    _same_dtype("index_copy", input, source)
    if input.ndim == 0:
        return index_copy(input.reshape(1), dim, index, source.reshape(-1)).reshape(())
    d, at = _along(input, dim, index, "index_copy")
    n = at[-1].size
    want = input.shape[:d] + (n,) + input.shape[d + 1:]
    if source.shape != want:
        raise RuntimeError(f"index_copy: source of shape {list(source.shape)} does not match "
                           f"self of shape {list(input.shape)} with {n} indices along dim {d} "
                           f"(expected {list(want)})")
    if at[-1].size and not (-input.shape[d] <= at[-1].min() and at[-1].max() < input.shape[d]):
        raise IndexError(f"index_copy: index out of range for dim {d} of size "
                         f"{input.shape[d]}")
    return input.index_put(at, source)


def masked_scatter(input, mask, source):
    """input with the positions where mask (broadcast to input's shape) is True filled, in
    row-major order, by source's first elements."""
    source = _tensor(source)
    m = np.asarray(array_of(mask))
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {m.dtype}")
    _same_dtype("masked_scatter", input, source)
    try:
        m = np.broadcast_to(m, input.shape)
    except ValueError:
        raise RuntimeError(f"masked_scatter: the mask of shape {list(m.shape)} does not "
                           f"broadcast to the tensor's shape {list(input.shape)}") from None
    count = int(m.sum())
    if count > source.numel():
        raise RuntimeError(f"masked_scatter: Number of elements of source < number of ones in "
                           f"mask ({source.numel()} < {count})")
    return input.index_put((m,), source.reshape(-1)[:count])


def put(input, index, source, accumulate=False):
    """input with the elements at `index` of its flattened form set to source's (added to
    them with accumulate); index and source have the same number of elements."""
    source = _tensor(source)
    _same_dtype("put", input, source)
    idx = np.asarray(array_of(index))
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"put: expected a Long index, got dtype {idx.dtype}")
    if idx.size != source.numel():
        raise RuntimeError(f"put: expected source and index to have the same number of "
                           f"elements, but got {source.numel()} and {idx.size}")
    n = input.numel()
    if idx.size and not (-n <= idx.min() and idx.max() < n):
        raise IndexError(f"put: index out of range for a tensor of {n} elements")
    flat = input.reshape(-1).index_put((idx.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices combined into input's slices at `index` along dim by
    `reduce` ("prod", "mean", "amax" or "amin"); include_self=False leaves the written
    slices' old values out of the reduction."""
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"index_reduce: reduce argument must be either prod, mean, amax or "
                           f"amin, got {reduce}")
    source = _tensor(source)
    _same_dtype("index_reduce", input, source)
    if input.ndim == 0:  # PyTorch's refuses a 0-d tensor, whatever the source
        raise RuntimeError(f"index_reduce: source tensor shape must match self tensor shape, "
                           f"excluding the specified dimension. Got self.shape = [] "
                           f"source.shape = {list(source.shape)}")
    d, at = _along(input, dim, index, "index_reduce")
    idx = at[-1]
    n = input.shape[d]
    if idx.size and not (-n <= idx.min() and idx.max() < n):
        raise IndexError(f"index_reduce: index out of range for dim {d} of size {n}")
    want = input.shape[:d] + (idx.size,) + input.shape[d + 1:]
    if source.shape != want:
        raise RuntimeError(f"index_reduce: source of shape {list(source.shape)} does not match "
                           f"self of shape {list(input.shape)} with {idx.size} indices along "
                           f"dim {d} (expected {list(want)})")
    spread = np.where(idx < 0, idx + n, idx).reshape((1,) * d + (-1,) + (1,) * (input.ndim - d - 1))
    return input.scatter_reduce(d, np.broadcast_to(spread, want), source, reduce,
                                include_self=include_self)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """`input.scatter_reduce(dim, index, src, reduce, include_self=...)`: src's values reduced
    ("sum", "prod", "mean", "amax", "amin") into a copy of input at index along dim."""
    return input.scatter_reduce(dim, index, src, reduce, include_self=include_self)
