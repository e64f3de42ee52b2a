"""Forward-mode rules: each op's Jacobian-vector product J t, on arrays.

A rule receives the op's node (its saved arrays and settings, as backward sees them), the
output array and one tangent per input (None where an input has none), and returns the
output's tangent. Three kinds cover most ops:
- elementwise ops (and softmax): J is symmetric (diagonal for an elementwise op), so J t is
  the op's own backward applied to t (`by_backward`, which other modules' elementwise ops register too);
- ops linear in their input (sum, reshape, indexing, cat, ...): J t is the op applied to t;
- the rest (matmul, linear, layer norm, ...) have their product written out.
"""
from __future__ import annotations

import numpy as np

from . import kernels, ops
from .graph_rules import registrar
from .graph_rules_elementwise import SigmoidValue, TanhValue
from .ops.diagonal import Diagonal, DiagonalEmbed, diagonal_view, embed
from .ops.dim_windows import FoldDim, UnfoldDim, fold
from .ops.index import _along

JVP_RULES = {}
jvp_rule = registrar(JVP_RULES)  # @jvp_rule(*ops) over `fn(ctx, out, tangents) -> tangent`


def _add_up(parts):
    parts = [p for p in parts if p is not None]
    return None if not parts else sum(parts[1:], parts[0])


@jvp_rule(ops.Add, ops.Sub, ops.Mul, ops.Div, ops.Pow, ops.Maximum, ops.Minimum, ops.Neg,
          ops.Exp, ops.Log, ops.Sqrt, ops.Abs, ops.Tanh, ops.Sigmoid, ops.Silu, ops.Relu, ops.LeakyRelu,
          ops.Gelu, ops.Clamp, ops.Where, ops.MaskedFill, ops.Sin, ops.Cos, ops.Tan, ops.Floor,
          ops.Ceil, ops.Round, ops.Trunc, ops.Sign, ops.Remainder, ops.FloorDivide,
          ops.ReluDropout, ops.Softmax, ops.BinaryCrossEntropy,
          SigmoidValue, TanhValue)
def by_backward(ctx, out, tangents):
    """A symmetric Jacobian is its own transpose: J t_i is the backward's part for input i,
    given t_i (broadcast to the output's shape) as the incoming gradient."""
    parts = []
    for i, t in enumerate(tangents):
        if t is not None:
            t = t.astype(out.dtype, copy=False)
            t = t if t.shape == out.shape else np.broadcast_to(t, out.shape)
            grads = ctx.backward(ctx, t)
            parts.append((grads if isinstance(grads, tuple) else (grads,))[i])
    return _add_up(parts)


@jvp_rule(ops.Cast)
def _cast(ctx, out, tangents):
    return tangents[0].astype(out.dtype)


@jvp_rule(ops.Sum, ops.Mean)
def _sum(ctx, out, tangents):
    t = tangents[0].sum(axis=ctx.dims, keepdims=ctx.keepdim)
    return t / ctx.count if isinstance(ctx, ops.Mean) else t


@jvp_rule(ops.Amax, ops.Amin)
def _amax(ctx, out, tangents):
    a, best = ctx.saved
    hit = a == best
    return (tangents[0] * hit / hit.sum(axis=ctx.dims, keepdims=True)).sum(
        axis=ctx.dims, keepdims=ctx.keepdim)


@jvp_rule(ops.Var)
def _var(ctx, out, tangents):
    centered = ctx.saved[0]
    return (2 * centered * tangents[0]).sum(axis=ctx.dims, keepdims=ctx.keepdim) / ctx.denom


@jvp_rule(ops.Std)
def _std(ctx, out, tangents):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(out == 0, 0, _var(ctx, out, tangents) / (2 * out))


@jvp_rule(ops.LogSumExp)
def _logsumexp(ctx, out, tangents):
    a, lse = ctx.saved
    return (np.exp(a - lse) * tangents[0]).sum(axis=ctx.dims, keepdims=ctx.keepdim)


@jvp_rule(ops.Cumsum)
def _cumsum(ctx, out, tangents):
    return tangents[0] if out.ndim == 0 else np.cumsum(tangents[0], axis=ctx.dim)


@jvp_rule(ops.Reshape)
def _reshape(ctx, out, tangents):
    return tangents[0].reshape(out.shape)


@jvp_rule(ops.Permute)
def _permute(ctx, out, tangents):
    return tangents[0].transpose(np.argsort(ctx.inverse))


@jvp_rule(ops.Contiguous)
def _contiguous(ctx, out, tangents):
    return tangents[0]


@jvp_rule(UnfoldDim)
def _unfold_dim(ctx, out, tangents):
    d = ctx.dim if ctx.in_shape else 0
    return np.array(UnfoldDim.forward(object.__new__(UnfoldDim), tangents[0], d, ctx.size,
                                      ctx.step))


@jvp_rule(FoldDim)
def _fold_dim(ctx, out, tangents):
    return fold(tangents[0], out.shape, *ctx.args)


@jvp_rule(Diagonal)
def _diagonal(ctx, out, tangents):
    return np.array(diagonal_view(tangents[0], *ctx.args))


@jvp_rule(DiagonalEmbed)
def _diagonal_embed(ctx, out, tangents):
    return embed(tangents[0], out.shape, *ctx.args)


@jvp_rule(ops.Expand)
def _expand(ctx, out, tangents):
    return np.broadcast_to(tangents[0], out.shape)


@jvp_rule(ops.strided.AsStrided)
def _as_strided(ctx, out, tangents):
    in_idx, out_idx, n, scale = ops.strided.plan(ctx.geometry)
    return ops.strided.transfer(tangents[0], in_idx, out_idx, n, scale)


@jvp_rule(ops.strided.StridedTransfer)
def _strided_transfer(ctx, out, tangents):
    return ops.strided.transfer(tangents[0], ctx.src, ctx.dst, ctx.n, ctx.scale)


@jvp_rule(ops.GetItem)
def _getitem(ctx, out, tangents):
    return np.asarray(tangents[0][ctx.index])


@jvp_rule(ops.Gather, ops.AdaptiveMaxGather)
def _gather(ctx, out, tangents):
    return tangents[0][_along(ctx.index, ctx.dim, len(ctx.shape))]


@jvp_rule(ops.IndexSelect)
def _index_select(ctx, out, tangents):
    return np.take(tangents[0], ctx.index, axis=ctx.dim)


@jvp_rule(ops.Embedding)
def _embedding(ctx, out, tangents):
    # the padding row's tangent too, as PyTorch's forward mode (its backward leaves that row
    # untrained, a convention of training rather than a derivative)
    return tangents[0][ctx.ids]


def _pieces(ctx, out, tangents, join):
    """cat and stack: the inputs' tangents joined, zeros for inputs that have none."""
    sizes = np.diff([0, *ctx.bounds, out.shape[ctx.dim]]) if join is np.concatenate else None
    parts = []
    for i, t in enumerate(tangents):
        if t is None:
            shape = list(out.shape)
            if sizes is None:
                del shape[ctx.dim]
            else:
                shape[ctx.dim] = sizes[i]
            t = np.zeros(shape, out.dtype)
        parts.append(t)
    return join(parts, axis=ctx.dim).astype(out.dtype, copy=False)


@jvp_rule(ops.Cat)
def _cat(ctx, out, tangents):
    return _pieces(ctx, out, tangents, np.concatenate)


@jvp_rule(ops.Stack)
def _stack(ctx, out, tangents):
    return _pieces(ctx, out, tangents, np.stack)


@jvp_rule(ops.Dropout)
def _dropout(ctx, out, tangents):
    if ctx.mask is not None:
        return tangents[0] * ctx.mask
    return kernels.dropout(np.ascontiguousarray(tangents[0]), ctx.p, ctx.seed)


def _dropped(ctx, t):
    """The tangent t through a fused op's dropout: its kept mask (PyTorch's), or the hash's."""
    if t is None:
        return None
    if ctx.mask is not None:
        return t * ctx.mask
    return kernels.dropout(np.ascontiguousarray(t), ctx.p, ctx.seed)


@jvp_rule(ops.DropoutAdd)
def _dropout_add(ctx, out, tangents):
    tx, ts = tangents
    return _add_up([tx, _dropped(ctx, ts)])


@jvp_rule(ops.Norm)
def _norm(ctx, out, tangents):
    """A norm of each slice is a scalar function of it: J t is its gradient dotted with t."""
    local = ctx.backward(ctx, np.ones(out.shape, out.dtype))
    return (local * tangents[0]).sum(axis=ctx.dims, keepdims=ctx.keepdim)


@jvp_rule(ops.LogSoftmax)
def _log_softmax(ctx, out, tangents):
    """J t = t - sum(softmax * t) along dim (softmax = exp of the output)."""
    t = tangents[0]
    d = ctx.dim if out.ndim else None
    return t - (np.exp(out) * t).sum(axis=d, keepdims=True)


def _product(a2, b2, ndims):
    """a2 @ b2 with the axes the forward added for 1-D operands dropped again."""
    r = np.matmul(a2, b2)
    if ndims[0] == 1:
        r = r[..., 0, :]
    if ndims[1] == 1:
        r = r[..., 0]
    return r


@jvp_rule(ops.MatMul)
def _matmul(ctx, out, tangents):
    a2, b2 = ctx.saved
    ta, tb = tangents
    parts = []
    if ta is not None:
        parts.append(_product(ta.reshape(a2.shape), b2, ctx.ndims))
    if tb is not None:
        parts.append(_product(a2, tb.reshape(b2.shape), ctx.ndims))
    return _add_up(parts)


@jvp_rule(ops.Linear)
def _linear(ctx, out, tangents):
    x, weight = ctx.saved
    tx, tw = tangents[0], tangents[1]
    tb = tangents[2] if len(tangents) > 2 else None
    return _add_up([None if tx is None else tx @ weight.T, None if tw is None else x @ tw.T,
                    None if tb is None else np.broadcast_to(tb, out.shape)])


def _normalized(ctx, tx, tw, tb):
    """Layer norm's tangent (N, D) from its input's (or None), its weight's and bias's. With
    x_hat = (x - mean) r: d x_hat = r (dx - mean(dx) - x_hat mean(x_hat dx))."""
    xhat, rstd, weight = ctx.saved
    parts = []
    if tx is not None:
        t = tx.reshape(xhat.shape)
        dxhat = rstd * (t - t.mean(-1, keepdims=True)
                        - xhat * (xhat * t).mean(-1, keepdims=True))
        parts.append(dxhat * weight.reshape(-1) if weight is not None else dxhat)
    if tw is not None:
        parts.append(xhat * tw.reshape(-1))
    if tb is not None:
        parts.append(np.broadcast_to(tb.reshape(-1), xhat.shape))
    return _add_up(parts)


def _at(tangents, i):
    return tangents[i] if len(tangents) > i else None


@jvp_rule(ops.LayerNorm)
def _layer_norm(ctx, out, tangents):
    total = _normalized(ctx, tangents[0], _at(tangents, 1), _at(tangents, 2))
    return None if total is None else total.reshape(out.shape)


@jvp_rule(ops.DropoutAddLayerNorm)
def _dropout_add_layer_norm(ctx, out, tangents):
    tx, ts = tangents[0], tangents[1]
    th = _add_up([tx, _dropped(ctx, ts)])
    total = _normalized(ctx, th, _at(tangents, 2), _at(tangents, 3))
    return None if total is None else total.reshape(out.shape)


@jvp_rule(ops.MaskedSoftmaxDropout)
def _masked_softmax_dropout(ctx, out, tangents):
    """dropout(softmax(x masked)): the softmax's symmetric Jacobian, then the mask."""
    allowed, p, seed = ctx.allowed, ctx.p, ctx.seed
    t = kernels.softmax_backward(ctx.saved[0], np.ascontiguousarray(tangents[0]))
    return kernels.dropout(t, p, seed) if p > 0 else t


@jvp_rule(ops.IndexPut)
def _index_put(ctx, out, tangents):
    """Linear in both inputs: the same write, of the tangents."""
    ta, tv = tangents
    t = np.zeros(out.shape, out.dtype) if ta is None else ta.astype(out.dtype, copy=True)
    if tv is not None:
        if ctx.accumulate:
            np.add.at(t, ctx.index, tv)
        else:
            t[ctx.index] = tv
    elif not ctx.accumulate:
        t[ctx.index] = 0
    return t


@jvp_rule(ops.CopySlices)
def _copy_slices(ctx, out, tangents):
    """Linear in both inputs: the same write, of the tangents."""
    tb, tv = tangents
    t = np.zeros(out.shape, out.dtype) if tb is None else np.array(tb, out.dtype, order="C")
    (t.view(t.real.dtype) if ctx.parts else t).reshape(-1)[ctx.positions] = 0 if tv is None else tv
    return t


@jvp_rule(ops.Scatter)
def _scatter(ctx, out, tangents):
    ta, ts = tangents
    t = np.zeros(out.shape, out.dtype) if ta is None else ta.astype(out.dtype, copy=True)
    values = 0 if ts is None else (ts[ctx.region] if np.ndim(ts) else ts)
    if ctx.add:
        np.add.at(t, ctx.pos, values)
    else:
        t[ctx.pos] = values
    return t


@jvp_rule(ops.ScatterReduce)
def _scatter_reduce(ctx, out, tangents):
    """Each element of either input reaches one output position: J t is the partials (the
    backward with a gradient of ones) times the tangents, added up where they meet."""
    ga, gs = ctx.backward(ctx, np.ones(out.shape, out.dtype))
    ta, ts = tangents
    t = np.zeros(out.shape, out.dtype) if ta is None else (ga * ta).astype(out.dtype)
    if ts is not None:
        np.add.at(t, ctx.pos, (gs * ts)[ctx.region])
    return t


@jvp_rule(ops.CrossEntropy)
def _cross_entropy(ctx, out, tangents):
    """Each row's loss depends on its row of logits only: the tangent is the row's gradient
    (backward with a gradient of ones) dotted with the row's tangent."""
    g = ctx.backward(ctx, np.ones(out.shape, out.dtype))
    rows = (g * tangents[0]).sum(-1)
    return rows if ctx.vals[3] == "none" else rows.sum()


@jvp_rule(ops.Einsum)
def _einsum(ctx, out, tangents):
    """Multilinear: the sum over operands of the product with that operand's tangent."""
    equation = ",".join(ctx.ins) + "->" + ctx.out
    return _add_up([np.einsum(equation, *ctx.saved[:i], t, *ctx.saved[i + 1:])
                    for i, t in enumerate(tangents) if t is not None])


__all__ = ["JVP_RULES", "jvp_rule"]
