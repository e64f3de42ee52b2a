"""Indexing ops: `x[...]`, `gather` and `index_select`.

Their gradients scatter the incoming gradient back to the positions that were read, with
*add*: an element read twice (a repeated index) receives both gradients.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.op import Op
from ._util import normalize_dim
from ..errors import DTypeError, IndexRangeError, ShapeError

_max, _min = np.maximum.reduce, np.minimum.reduce


def _is_basic(index) -> bool:
    """True for ints, slices, None and Ellipsis only: such an index never repeats an element."""
    items = index if isinstance(index, tuple) else (index,)
    return all(isinstance(i, (int, np.integer, slice)) or i is None or i is Ellipsis
               for i in items)


def _check_index(a, index):
    items = index if isinstance(index, tuple) else (index,)
    dim = 0
    for item in items:
        if item is None:
            continue
        if item is Ellipsis:
            dim = a.ndim - sum(1 for i in items if i is not None and i is not Ellipsis) + dim
            continue
        arr = np.asarray(item) if not isinstance(item, slice) else None
        if arr is not None and arr.dtype == np.bool_:
            dim += max(arr.ndim, 1)
            continue
        if dim >= a.ndim:
            raise IndexError(f"index: too many indices for a tensor of shape {a.shape}")
        if arr is not None and arr.size:
            n = a.shape[dim]
            if arr.max() >= n or arr.min() < -n:
                bad = arr.max() if arr.max() >= n else arr.min()
                raise IndexError(f"index: index {bad} is out of range for dim {dim} "
                                 f"of size {n} (tensor shape {a.shape})")
        dim += 1


class GetItem(Op):
    complex_aware = True
    takes_indices = True

    @staticmethod
    def forward(ctx, a, index=None):
        ctx.shape, ctx.dtype, ctx.index = a.shape, a.dtype, index
        try:
            out = a[index]
        except IndexError:
            _check_index(a, index)
            raise
        if not isinstance(out, np.ndarray):
            # one element: NumPy gives a scalar (a copy); a 0-d view of `a` instead, as PyTorch's
            # `x[1]` is a view that sees later writes to x
            out = a[(*index, Ellipsis) if type(index) is tuple else (index, Ellipsis)]
        return out

    @staticmethod
    def backward(ctx, g):
        return _scatter_add(ctx.shape, ctx.index, g)


def _scatter_add(shape, positions, g):
    """The gradient of a read of `positions` (any NumPy index) from an array of `shape`: `g`
    added into zeros at the positions read. An index that cannot repeat an element (ints,
    slices) is a plain assignment, which is faster than `np.add.at`."""
    grad = np.zeros(shape, dtype=g.dtype)
    if _is_basic(positions):
        grad[positions] = g
    else:
        np.add.at(grad, positions, g)
    return grad


def _dim_and_index(a, dim, index, op):
    """`dim` as a non-negative dim of `a`, and `index` as an integer array; floats would be
    truncated silently, so they are refused."""
    d = normalize_dim(dim, a.ndim, op)
    index = np.asarray(index)
    if index.dtype == np.bool_ or not np.issubdtype(index.dtype, np.integer):
        raise DTypeError(f"{op}: index must hold integers, got dtype {index.dtype}")
    return d, index


def _check_range(index, size, message):
    """Every index in [0, size): unlike Python indexing, PyTorch's gather and index_select
    do not count from the end, so -1 is an error rather than the last element."""
    if index.size and (index.max() >= size or index.min() < 0):
        raise IndexRangeError(message.format(index.max() if index.max() >= size else index.min()))


def _along(index, dim, ndim):
    """Index arrays that address `index` along `dim` and every other dim in order."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim] = index
    return tuple(grids)


class Gather(Op):
    """out[i][j][k] = a[i][index[i][j][k]][k] for dim=1 (PyTorch's `gather`)."""
    complex_aware = True

    takes_indices = True

    @staticmethod
    def forward(ctx, a, dim=0, index=None):
        d, index = _dim_and_index(a, dim, index, "gather")
        if index.ndim != a.ndim:
            raise ShapeError(f"gather: index has {index.ndim} dims but the input of shape "
                             f"{a.shape} has {a.ndim}")
        too_big = [i for i in range(a.ndim) if i != d and index.shape[i] > a.shape[i]]
        if too_big:
            raise ShapeError(f"gather: index of shape {index.shape} is larger than the input "
                             f"of shape {a.shape} at dim {too_big[0]}")
        _check_range(index, a.shape[d], f"gather: index out of range for dim {d} of size "
                                        f"{a.shape[d]} (got {{0}}): index {{0}} is out of "
                                        f"bounds for dimension {d} with size {a.shape[d]}")
        ctx.shape, ctx.dim, ctx.index = a.shape, d, index
        return a[_along(index, d, a.ndim)]

    @staticmethod
    def backward(ctx, g):
        return _scatter_add(ctx.shape, _along(ctx.index, ctx.dim, len(ctx.shape)), g)


class AdaptiveMaxGather(Gather):
    """Adaptive max pooling's read of each bin's max from x (N, C, prod(S)) at the positions
    found in NumPy: Gather itself (the same gradients, of every order), under a name of its
    own so that an ONNX export computes the maxima of the bins (`spatial` is S, `bins` the
    number of bins per spatial dim) instead of baking in positions found for one input."""

    @staticmethod
    def forward(ctx, a, dim=0, index=None, spatial=(), bins=()):
        return Gather.forward(ctx, a, dim, index)


class IndexSelect(Op):
    """Pick whole slices along `dim` by a 1-D index (rows of an embedding table, for example)."""
    complex_aware = True

    takes_indices = True

    @staticmethod
    def forward(ctx, a, dim=0, index=None):
        d, index = _dim_and_index(a, dim, index, "index_select")
        if index.ndim > 1:
            raise ValueError(f"index_select: index must be 1-D, got shape {index.shape}")
        _check_range(index, a.shape[d], f"index_select: index {{}} is out of range for dim {d} "
                                        f"of size {a.shape[d]}")
        ctx.shape, ctx.dim, ctx.index = a.shape, d, index
        return np.take(a, index, axis=d)

    @staticmethod
    def backward(ctx, g):
        return _scatter_add(ctx.shape, (slice(None),) * ctx.dim + (ctx.index,), g)


class Embedding(Op):
    """Rows of `weight` (V, D) for integer `ids` of any shape: output ids.shape + (D,)."""

    takes_indices = True

    @staticmethod
    def forward(ctx, weight, ids=None, padding_idx=None, scale_grad_by_freq=False):
        ids = np.asarray(ids)
        # the kinds of np.integer, and the ufuncs' reductions without the methods' Python
        # wrappers: this runs for every batch and every sampled token
        if ids.dtype.kind not in "iu":
            raise DTypeError(f"embedding: ids must be integers, got dtype {ids.dtype}")
        if ids.size:
            top, low = _max(ids, axis=None), _min(ids, axis=None)
            if top >= weight.shape[0] or low < 0:
                bad = top if top >= weight.shape[0] else low
                raise IndexError(f"embedding: id {bad} is out of range for a table of "
                                 f"{weight.shape[0]} rows")
        ctx.shape, ctx.ids, ctx.padding_idx = weight.shape, ids, padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        # (np.take copies whole rows: 3x faster than weight[ids]'s fancy indexing on a batch)
        return np.take(weight, ids, axis=0)

    @staticmethod
    def backward(ctx, g):
        # rows of the same id add up: a compiled scatter-add (kernels.embedding_backward)
        ids, g = ctx.ids.reshape(-1), g.reshape(-1, ctx.shape[1])
        if ctx.scale_grad_by_freq:  # each id's rows over its count in the batch, as PyTorch
            counts = np.bincount(ids, minlength=ctx.shape[0])[ids]
            g = g * (1.0 / counts).astype(g.dtype)[:, None]
        grad = kernels.embedding_backward(ids, g, ctx.shape[0])
        if ctx.padding_idx is not None:  # the padding row is never trained
            grad[ctx.padding_idx] = 0
        return grad
