"""Tensors assembled from others: `meshgrid` (coordinate grids), `tile` (repeated copies),
`hstack`, `vstack`, `dstack` and `column_stack` (concatenation after PyTorch's promotion to at
least 1, 2 or 3 dims, which `atleast_1d`, `atleast_2d` and `atleast_3d` do alone),
`block_diag` (matrices along a diagonal), `diag_embed` (vectors as diagonals) and
`cartesian_prod` (all combinations of the elements of 1-D tensors) and `combinations` (the
r-element subsets of one 1-D tensor's elements, Python's itertools.combinations).

Each is expand, index_select, repeat, reshape and cat, so gradients flow through ops that have them.
"""
from __future__ import annotations

import warnings

import numpy as np

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "block_diag", "cartesian_prod",
           "column_stack", "combinations", "diag_embed", "dstack", "hstack", "meshgrid", "tile", "vstack"]


def meshgrid(*tensors, indexing=None):
    """Grids of the 1-D (or 0-d) tensors' coordinates: for sizes n0, n1, ..., each output has
    shape (n0, n1, ...) with tensor i along dim i ("ij"); "xy" swaps the first two dims
    (shape (n1, n0, ...)), as NumPy's default. The tensors may come as one list."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("meshgrid: in an upcoming PyTorch release it will be required to pass "
                      "the indexing argument; 'ij' is assumed", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"meshgrid: indexing must be one of 'xy' or 'ij', got {indexing!r}")
    if not tensors:
        raise RuntimeError("meshgrid: expects a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.ndim > 1:
            raise RuntimeError(f"meshgrid: expects 0D or 1D tensors, tensor {i} has shape "
                               f"{t.shape}")
        if t.dtype != tensors[0].dtype:
            raise RuntimeError(f"meshgrid: expects all tensors to have the same dtype, got "
                               f"{tensors[0].dtype} and {t.dtype}")
    flat = [t.reshape(-1) for t in tensors]
    swap = indexing == "xy" and len(flat) >= 2
    if swap:
        flat[0], flat[1] = flat[1], flat[0]
    shape = tuple(t.shape[0] for t in flat)
    grids = [t.reshape(*(1,) * i, -1, *(1,) * (len(flat) - i - 1)).expand(shape)
             for i, t in enumerate(flat)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def tile(input, dims):
    """Copies of the input along each dim: `dims` shorter than the input's dims is padded
    with 1s in front, longer gives the input leading dims of size 1 (then as `repeat`)."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = (1,) * (input.ndim - len(dims)) + dims
    return input.repeat(*dims)


def _at_least(t, ndim):
    if t.ndim >= ndim:
        return t
    return t.reshape((1,) * (ndim - max(t.ndim, 1)) + (t.shape or (1,)))


def _stack_check(tensors, op):
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise RuntimeError(f"{op}: expects a non-empty list or tuple of tensors")


def hstack(tensors):
    """Side by side: 1-D (and 0-d) tensors end to end, others along dim 1."""
    from .functional import cat
    _stack_check(tensors, "hstack")
    parts = [_at_least(t, 1) for t in tensors]
    return cat(parts, 0 if parts[0].ndim == 1 else 1)


def vstack(tensors):
    """One above the other: each made at least 2-D ((n,) becomes (1, n)), along dim 0."""
    from .functional import cat
    _stack_check(tensors, "vstack")
    return cat([_at_least(t, 2) for t in tensors], 0)


def _at_least_3d(t):
    """(n,) -> (1, n, 1) and (m, n) -> (m, n, 1), as PyTorch's (not NumPy's leading-1 rule)."""
    if t.ndim >= 3:
        return t
    return _at_least(t, 2).unsqueeze(-1)


def _each(fn, tensors):
    """fn of one tensor, or a tuple of fn of each of several (given apart or as one list)."""
    if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)):
        return fn(tensors[0])
    if len(tensors) == 1:
        tensors = tensors[0]
    return tuple(fn(t) for t in tensors)


def atleast_1d(*tensors):
    """A 0-d tensor as (1,), others as they are."""
    return _each(lambda t: _at_least(t, 1), tensors)


def atleast_2d(*tensors):
    """(n,) as (1, n), a 0-d tensor as (1, 1), others as they are."""
    return _each(lambda t: _at_least(t, 2), tensors)


def atleast_3d(*tensors):
    """(n,) as (1, n, 1), (m, n) as (m, n, 1), a 0-d tensor as (1, 1, 1)."""
    return _each(_at_least_3d, tensors)


def dstack(tensors):
    """Along a third dim: each made at least 3-D (see `atleast_3d`), joined along dim 2."""
    from .functional import cat
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return cat([_at_least_3d(t) for t in tensors], 2)


def column_stack(tensors):
    """Columns side by side: 0-d and 1-D tensors become (n, 1) columns, the rest join as they
    are, along dim 1."""
    from .functional import cat
    if not isinstance(tensors, (list, tuple)) or not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    return cat([t.reshape(-1, 1) if t.ndim <= 1 else t for t in tensors], 1)


def block_diag(*tensors):
    """The matrices (0-d and 1-D tensors as 1-row matrices) along the diagonal of one
    (sum of rows, sum of columns) matrix, zeros elsewhere, in their promoted dtype."""
    from .creation import zeros
    from .dtypes import promote_types
    from .functional import cat
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    dtype = tensors[0].dtype
    for t in tensors[1:]:
        dtype = promote_types(dtype, t.dtype)
    blocks = [_at_least(t, 2).to(dtype) for t in tensors]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        rows.append(cat([zeros(r, left, dtype=dtype), b, zeros(r, width - left - c, dtype=dtype)],
                        1))
        left += c
    return cat(rows, 0)


def cartesian_prod(*tensors):
    """Every combination of one element of each 1-D tensor, (prod of sizes, number of
    tensors), the last varying fastest; one tensor comes back as it is."""
    for i, t in enumerate(tensors):
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)} (tensor {i} "
                               f"of cartesian_prod)")
    if len(tensors) == 1:
        return tensors[0]
    from .functional import stack
    return stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """input (*, n) as the diagonal `offset` of square matrices (n + |offset|) in dims dim1
    and dim2 of the result (which has one dim more), zeros elsewhere."""
    from .ops._util import normalize_dim
    from .tensor import Tensor
    nd = input.ndim + 1
    d1, d2 = normalize_dim(dim1, nd, "diag_embed"), normalize_dim(dim2, nd, "diag_embed")
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.ndim else 1
    m = n + abs(offset)
    place = np.zeros((n, m, m), input.dtype)  # element i goes to (i, i + offset)
    i = np.arange(n)
    place[i, i + max(-offset, 0), i + max(offset, 0)] = 1
    x = input.reshape(*input.shape[:-1], 1, n) if input.ndim else input.reshape(1, 1)
    out = (x @ Tensor._wrap(place.reshape(n, m * m))).reshape(*input.shape[:-1], m, m)
    order = [ax for ax in range(nd) if ax not in (d1, d2)]  # where the batch dims go
    perm = [0] * nd
    for src, dst in enumerate(order):
        perm[dst] = src
    perm[d1], perm[d2] = nd - 2, nd - 1
    return out.permute(*perm)


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of the 1-D input's elements, in itertools' order, as rows
    of a (count, r) tensor (with_replacement: an element may repeat in a row); r = 0 gives
    an empty 1-D tensor, r larger than the input an empty (0, r) one."""
    import itertools
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input[:0]
    pick = (itertools.combinations_with_replacement if with_replacement
            else itertools.combinations)
    rows = np.array(list(pick(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return input.index_select(0, rows.reshape(-1)).reshape(-1, r)
