"""Ops that write into a copy of a tensor: `index_put` (what `t[idx] = v` records), `scatter`
and `scatter_add`, and `CopySlices` (what a write through a view records on its base).

Each returns a new array; the in-place Tensor methods (`t[idx] = v`, `scatter_`) copy it back
into the tensor's memory. The gradient of the overwritten tensor is the incoming gradient with
zeros where values were replaced (those elements no longer influence the output); the written
values receive the incoming gradient at the positions they were written to. Adding instead of
replacing (`accumulate=True`, `scatter_add`) keeps the first gradient whole.
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..autograd.views import replay
from ._util import normalize_dim
from ..errors import DTypeError, IndexRangeError, ShapeError


def _sum_to(grad, shape):
    """`grad` ready for values of `shape` that NumPy broadcast when assigning them: values may
    carry extra leading 1s (a[0] = ones((1, 3))); the engine sums the broadcast axes."""
    if grad.ndim < len(shape):
        grad = grad.reshape((1,) * (len(shape) - grad.ndim) + grad.shape)
    return grad


def _written_into(g, pos, added):
    """The gradient of the tensor written into at `pos`: g, with zeros where the write replaced
    values rather than adding to them."""
    if added:
        return g
    g = np.array(g)  # a copy, and an array even for a 0-d gradient
    g[pos] = 0
    return g


class IndexPut(Op):
    """out = a with out[index] = v (or += v when accumulate, repeated indices adding up)."""

    takes_indices = True
    complex_aware = True  # it copies and adds: no conjugate in its gradient (item assignment)

    @staticmethod
    def forward(ctx, a, v, index=None, accumulate=False):
        out = a.copy()
        try:
            if accumulate:
                np.add.at(out, index, v)
            else:
                out[index] = v
        except IndexError as e:
            raise IndexError(f"index_put_: {e} (tensor of shape {a.shape})") from None
        except ValueError:
            raise ShapeError(f"index_put_: values of shape {np.shape(v)} do not broadcast to "
                             f"the {np.shape(a[index])} elements selected in a tensor of shape "
                             f"{a.shape}") from None
        need = ctx.needs_input_grad
        # the positions are kept only if a gradient reads them (as PyTorch saves them), so that
        # changing the index afterwards is an error exactly when it would change a gradient
        keep = (len(need) > 1 and need[1]) or (need and need[0] and not accumulate)
        ctx.index = index if keep else None
        ctx.accumulate, ctx.v_shape = accumulate, np.shape(v)
        return out

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        ga = _written_into(g, ctx.index, ctx.accumulate) if need[0] else None
        gv = _sum_to(g[ctx.index], ctx.v_shape) if len(need) > 1 and need[1] else None
        return ga, gv


def _scatter_positions(op, a, dim, index, src):
    """Checked (positions in `a`, region of `src`) for scatter along `dim` (PyTorch's rules)."""
    d = normalize_dim(dim, a.ndim, op)
    index = np.asarray(index)
    if not np.issubdtype(index.dtype, np.integer):
        raise DTypeError(f"{op}: index must be an integer tensor, got dtype {index.dtype}")
    if index.ndim != a.ndim:
        raise ShapeError(f"{op}: index has {index.ndim} dims but the tensor of shape {a.shape} "
                         f"has {a.ndim}")
    for k in range(a.ndim):
        if k != d and index.shape[k] > a.shape[k]:
            raise ShapeError(f"{op}: index of shape {index.shape} is larger than the tensor of "
                             f"shape {a.shape} in dim {k}")
        if np.ndim(src) and index.shape[k] > np.shape(src)[k]:
            raise ShapeError(f"{op}: index of shape {index.shape} is larger than src of shape "
                             f"{np.shape(src)} in dim {k}")
    if index.size and (index.min() < 0 or index.max() >= a.shape[d]):
        bad = index.min() if index.min() < 0 else index.max()
        raise IndexRangeError(f"{op}: index {bad} is out of range for dim {d} of size "
                              f"{a.shape[d]} (index {bad} is out of bounds for dimension {d} "
                              f"with size {a.shape[d]})")
    grids = list(np.indices(index.shape, sparse=True))
    grids[d] = index
    region = tuple(slice(0, n) for n in index.shape)
    return tuple(grids), region


class Scatter(Op):
    """out = a, then out[index[i][j]][j] = src[i][j] for dim 0 (and likewise for other dims).

    `src` may be larger than `index`: only its leading index.shape block is used. `add=True`
    adds into `a` instead of replacing (`scatter_add`).
    """

    takes_indices = True

    @staticmethod
    def forward(ctx, a, src, dim=0, index=None, add=False):
        op = "scatter_add" if add else "scatter"
        pos, region = _scatter_positions(op, a, dim, index, src)
        values = src[region] if np.ndim(src) else src
        out = a.copy()
        if add:
            np.add.at(out, pos, values)
        else:
            out[pos] = values
        need = ctx.needs_input_grad
        keep = (len(need) > 1 and need[1]) or (need and need[0] and not add)
        ctx.pos = pos if keep else None  # as in IndexPut: kept only if a gradient reads it
        ctx.region, ctx.add, ctx.src_shape = region, add, np.shape(src)
        return out

    @staticmethod
    def backward(ctx, g):
        need = ctx.needs_input_grad
        ga = _written_into(g, ctx.pos, ctx.add) if need[0] else None
        gs = None
        if len(need) > 1 and need[1]:
            gs = np.zeros(ctx.src_shape, g.dtype)
            gs[ctx.region] = g[ctx.pos]
        return ga, gs


class CopySlices(Op):
    """out = base with the region that `chain` (the view ops from base to a view) selects
    replaced by `values` (the view's shape): what an in-place write through a view does to the
    base's graph (PyTorch's CopySlices). With an empty chain, `values` replaces all of base.

    The region is found once, as positions: the chain is replayed on base's flat positions (in
    an array with base's strides), so it works whatever base's memory layout and whether or
    not a step of the chain copies. A
    complex base's positions are complex, 2k + (2k + 1)i for element k, so that a chain through
    `real`, `imag` or `view_as_real` ends on the positions of the real numbers it shows
    (`ctx.parts`): those are written in the base seen as pairs of reals.
    """
    complex_aware = True

    @staticmethod
    def forward(ctx, base, values, chain=()):
        n = np.arange(base.size).reshape(base.shape)
        if base.dtype.kind == "c":
            n, k = np.empty_like(base, dtype=np.complex128), n
            n.real, n.imag = 2 * k, 2 * k + 1
        elif not base.flags.c_contiguous:
            # laid out in memory as base is, so that a step that reads memory (as_strided)
            # picks the elements it picks of base
            n, k = np.empty_like(base, dtype=np.int64), n
            n[...] = k
        positions = replay(chain, n)
        if np.shape(values) != positions.shape:
            raise ShapeError(f"copy_slices: values of shape {np.shape(values)} for a view of "
                             f"shape {positions.shape}")
        ctx.parts = base.dtype.kind == "c" and positions.dtype.kind != "c"
        if positions.dtype.kind == "c":
            positions = positions.real.astype(np.int64) // 2
        elif positions.dtype.kind == "f":
            positions = positions.astype(np.int64)
        out = base.copy()
        _flat(out, ctx.parts)[positions] = values
        ctx.positions = positions
        return out

    @staticmethod
    def backward(ctx, g):
        gb = np.array(g, order="C")  # a C-ordered copy, so that reshape(-1) is a view of it
        _flat(gb, ctx.parts)[ctx.positions] = 0  # overwritten: those elements of base are gone
        return gb, _flat(np.ascontiguousarray(g), ctx.parts)[ctx.positions]


def _flat(a, parts):
    """C-ordered `a` as a flat array: of its elements, or (`parts`) of their real and imaginary
    parts in turn."""
    return (a.view(a.real.dtype) if parts else a).reshape(-1)
