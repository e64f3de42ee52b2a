"""Tensor-level rules of the reductions, the shape ops, the indexing ops and the writes.

A reduction spreads its gradient back over the reduced axes; a shape op moves it back; an
indexing op scatters it back to the positions it read. That scatter is an op of its own here
(`ScatterBack`), and its backward reads at those positions again: the two are each other's
backward, so gradients of any order flow through indexing.
"""
from __future__ import annotations

import numpy as np

from . import ops
from .autograd.op import Op
from .ops.diagonal import Diagonal, DiagonalEmbed
from .ops.dim_windows import FoldDim, UnfoldDim
from .graph_rules import constant, rule, saved_input, saved_output
from .complex_tensors import view_as_complex, view_as_real


def _kept(g, ctx, shape):
    """g with the reduced axes put back as size 1, so it broadcasts against the input's
    `shape`."""
    kept = tuple(1 if i in ctx.dims else n for i, n in enumerate(shape))
    return g if g.shape == kept else g.reshape(kept)


@rule(ops.Sum)
def _sum(ctx, g):
    return _kept(g, ctx, ctx.shape).expand(ctx.shape)


@rule(ops.Mean)
def _mean(ctx, g):
    return _kept(g / ctx.count, ctx, ctx.shape).expand(ctx.shape)


@rule(ops.Amax, ops.Amin)
def _amax(ctx, g):
    a, out = ctx.saved
    hit = a == out
    share = (hit / hit.sum(axis=ctx.dims, keepdims=True)).astype(g.dtype)
    return _kept(g, ctx, a.shape) * constant(share)


@rule(ops.Var)
def _var(ctx, g):
    centered = ctx.saved[0]
    # the input minus its mean: a stand-in for the input, which the node did not keep. It
    # differs from it by a constant along the reduced dims, which the variance ignores, so
    # centering it again gives the same values and the true derivative
    x = saved_input(ctx, 0, centered)
    c = x - x.mean(dim=ctx.dims, keepdim=True)
    return _kept(g, ctx, centered.shape) * c * (2 / ctx.denom)


@rule(ops.Std)
def _std(ctx, g):
    # d std = d var / (2 std), and 0 where std is 0, as the first-order backward (the
    # constant 1 added there only keeps the masked-out division finite)
    zero = ctx.std == 0
    std = saved_output(ctx, ctx.std) + constant(zero.astype(ctx.std.dtype))
    return _var(ctx, g / (2 * std) * constant(~zero))


@rule(ops.LogSumExp)
def _logsumexp(ctx, g):
    a, out = ctx.saved
    lse = saved_output(ctx, out).reshape(out.shape)
    return _kept(g, ctx, a.shape) * (saved_input(ctx, 0, a) - lse).exp()


@rule(ops.Cumsum)
def _cumsum(ctx, g):
    if g.ndim == 0:
        return g
    return g.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim)


@rule(ops.Reshape)
def _reshape(ctx, g):
    return g.reshape(ctx.shape)


@rule(ops.Permute)
def _permute(ctx, g):
    return g.permute(ctx.inverse)


@rule(ops.Expand)
def _expand(ctx, g):
    return g  # the engine sums the copies


@rule(ops.strided.AsStrided)
def _as_strided(ctx, g):
    in_idx, out_idx, n, scale = ops.strided.plan(ctx.geometry)
    return ops.strided.StridedTransfer.apply(g, src=out_idx, dst=in_idx, n=n, scale=scale)


@rule(ops.strided.StridedTransfer)
def _strided_transfer(ctx, g):
    return ops.strided.StridedTransfer.apply(g, src=ctx.dst, dst=ctx.src, n=ctx.n,
                                             scale=ctx.scale)


@rule(ops.Cat)
def _cat(ctx, g):
    edges = [0, *ctx.bounds, g.shape[ctx.dim]]
    return g.split([b - a for a, b in zip(edges[:-1], edges[1:])], ctx.dim)


@rule(ops.Stack)
def _stack(ctx, g):
    return g.unbind(ctx.dim)


# --- indexing: a read and a scatter-add, each the other's backward ----------------------------

# what each read op needs to run again: the keyword arguments its forward took
_READ_ARGS = {ops.GetItem: ("index",), ops.Gather: ("dim", "index"),
              ops.AdaptiveMaxGather: ("dim", "index"),
              ops.IndexSelect: ("dim", "index"), ops.Embedding: ("ids", "padding_idx")}


def _read_kwargs(node):
    return {name: getattr(node, name) for name in _READ_ARGS[node.__class__]}


def _padding(read):
    """Where an embedding read its padding row, which its backward never trains (or None)."""
    pad = getattr(read, "padding_idx", None)
    return None if pad is None else (read.ids == pad)[..., None]


class ScatterBack(Op):
    """The backward of a read (`x[index]`, gather, index_select, embedding) as an op: its
    gradient added at the positions read, in a zero tensor of the input's shape. Its own
    backward reads those positions again."""

    @staticmethod
    def forward(ctx, g, read=None):
        ctx.read = read  # the read's node: its backward scatters, its forward reads
        return read.backward(read, g)

    @staticmethod
    def backward(ctx, gg):
        read = ctx.read
        out = read.__class__.forward(object.__new__(read.__class__), gg, **_read_kwargs(read))
        pad = _padding(read)
        return out if pad is None else np.where(pad, np.zeros((), out.dtype), out)


@rule(ops.GetItem, ops.Gather, ops.AdaptiveMaxGather, ops.IndexSelect, ops.Embedding)
def _read(ctx, g):
    return ScatterBack.apply(g, read=ctx)


@rule(ScatterBack)
def _scatter_back(ctx, gg):
    read = ctx.read
    out = read.__class__.apply(gg, **_read_kwargs(read))
    pad = _padding(read)
    return out if pad is None else out.masked_fill(constant(pad), 0.0)


# --- writes: the overwritten tensor's gradient is zero where it was written over --------------

def _erased(g, index):
    """g with zeros written at `index`, as an op (IndexPut of a constant zero)."""
    return ops.IndexPut.apply(g, constant(np.zeros((), g.dtype)), index=index)


def _write_grads(ctx, g, added, index, written):
    """(the gradient of the tensor written into: g, or g with zeros where it was overwritten
    rather than `added` to; the gradient of what was written: `written(g)`), each if needed."""
    need = ctx.needs_input_grad
    ga = (g if added else _erased(g, index)) if need[0] else None
    return ga, (written(g) if len(need) > 1 and need[1] else None)


@rule(ops.IndexPut)
def _index_put(ctx, g):
    def values(g):
        gv = g[ctx.index]
        if gv.ndim < len(ctx.v_shape):  # values NumPy broadcast from fewer dims
            gv = gv.reshape((1,) * (len(ctx.v_shape) - gv.ndim) + gv.shape)
        return gv
    return _write_grads(ctx, g, ctx.accumulate, ctx.index, values)


@rule(ops.Scatter)
def _scatter(ctx, g):
    def src(g):  # what was written, back in src's shape
        zeros = constant(np.zeros(ctx.src_shape, g.dtype))
        return ops.IndexPut.apply(zeros, g[ctx.pos], index=ctx.region)
    return _write_grads(ctx, g, ctx.add, ctx.pos, src)


@rule(ops.ScatterReduce)
def _scatter_reduce(ctx, g):
    """g spread by constant shares (sum, mean, amax, amin: piecewise linear), or for prod by
    the products of the other factors, themselves products of the saved inputs taken with the
    op again (so they differentiate once more)."""
    need = ctx.needs_input_grad
    pos, region = ctx.pos, ctx.region
    if ctx.reduce == "sum":
        ga, gs = g, g[pos]
    elif ctx.reduce == "mean":
        ga = g / constant(ctx.count)
        gs = ga[pos]
    elif ctx.reduce in ("amax", "amin"):
        a, src, out = ctx.saved
        self_is = (a == out).astype(g.dtype)
        src_is = (src[region] == out[pos]).astype(g.dtype)
        shares = self_is.copy()
        np.add.at(shares, pos, src_is)
        spread = g / constant(shares)
        ga, gs = spread * constant(self_is), spread[pos] * constant(src_is)
    else:
        ga, gs = _scatter_prod_grads(ctx, g)
    if not ctx.include_self:
        ga = _erased(ga, pos)
    if len(need) > 1 and need[1]:
        gs = ops.IndexPut.apply(constant(np.zeros(ctx.src_shape, g.dtype)), gs, index=region)
    return (ga if need[0] else None), (gs if len(need) > 1 and need[1] else None)


def _scatter_prod_grads(ctx, g):
    a, src, out = ctx.saved
    pos, region = ctx.pos, ctx.region
    s = src[region]
    a_t, s_t, out_t = saved_input(ctx, 0, a), saved_input(ctx, 1, src)[region], \
        saved_output(ctx, out)

    def product(base, values):
        return ops.ScatterReduce.apply(base, values, dim=ctx.dim, index=ctx.index,
                                       reduce="prod", include_self=ctx.include_self)

    masked_a = a_t.masked_fill(constant(a == 0), 1.0)
    ga = g * product(masked_a, s_t) / masked_a
    src_zero = s == 0
    zeros_at = np.zeros(a.shape, np.int64)
    np.add.at(zeros_at, pos, src_zero.astype(np.int64))
    single = src_zero & (zeros_at[pos] == 1)
    others = product(a_t, s_t.masked_fill(constant(single), 1.0))
    ratio = (g * out_t)[pos] / s_t.masked_fill(constant(src_zero), 1.0)
    one_zero = constant(single.astype(g.dtype))
    return ga, one_zero * (g * others)[pos] + (1 - one_zero) * ratio


@rule(ops.CopySlices)
def _copy_slices(ctx, g):
    """The region written through a view takes its gradient from the values; base keeps the rest."""
    need = ctx.needs_input_grad
    flat = (view_as_real(g) if ctx.parts else g).reshape(-1)
    gb = None
    if need[0]:
        gb = _erased(flat, ctx.positions)
        gb = view_as_complex(gb.reshape(g.shape + (2,))) if ctx.parts else gb.reshape(g.shape)
    gv = flat[ctx.positions] if len(need) > 1 and need[1] else None
    return gb, gv


__all__ = ["ScatterBack"]


@rule(UnfoldDim)
def _unfold_dim(ctx, g):
    d = ctx.dim if ctx.in_shape else 0
    return FoldDim.apply(g, shape=ctx.in_shape, dimension=d, size=ctx.size, step=ctx.step)


@rule(FoldDim)
def _fold_dim(ctx, g):
    d, size, step = ctx.args
    return UnfoldDim.apply(g, dimension=d, size=size, step=step)


@rule(Diagonal)
def _diagonal(ctx, g):
    offset, d1, d2 = ctx.args
    return DiagonalEmbed.apply(g, shape=ctx.in_shape, offset=offset, dim1=d1, dim2=d2)


@rule(DiagonalEmbed)
def _diagonal_embed(ctx, g):
    offset, d1, d2 = ctx.args
    return Diagonal.apply(g, offset=offset, dim1=d1, dim2=d2)


@rule(ops.Contiguous)
def _contiguous(ctx, g):
    return g
