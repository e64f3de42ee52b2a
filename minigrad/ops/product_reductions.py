"""Products along a dim: `prod` (the whole product) and `cumprod` (running products).

Their gradients are written without dividing by the input, so zeros are handled exactly as in
PyTorch: d prod / d a_k is the product of all the other elements (nonzero only where a_k is
the one zero), taken as the product of the elements before k times the product of those after
(two exclusive running products); and for cumprod, d L / d a_k = P_k S_k with P_k the product
before k and S_k = g_k + a_{k+1} S_{k+1} summed from the end, a scan along the dim.

The tensor-level rules (for `create_graph=True`) spell "the product of the others" out with the
ops themselves: for each k, the row with a_k set to 1 (an n x n table per reduced row, fine for
the small dims a second derivative is taken through).
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..graph_rules import constant, rule, saved_input
from ..jvp_rules import jvp_rule
from ._util import conj_slope, normalize_dim
from .cumulative import running


def _widened(a):
    """bool and integer products are int64, as PyTorch's (float dtypes keep theirs)."""
    return a if a.dtype.kind in "fc" else a.astype(np.int64)


def _exclusive_products(a, axis):
    """(products before each element, products after it) along `axis`."""
    ones = np.ones_like(np.take(a, [0], axis=axis))
    before = np.cumprod(np.concatenate([ones, np.delete(a, -1, axis=axis)], axis=axis),
                        axis=axis)
    flipped = np.flip(a, axis)
    after = np.cumprod(np.concatenate([ones, np.delete(flipped, -1, axis=axis)], axis=axis),
                       axis=axis)
    return before, np.flip(after, axis)


class Prod(Op):
    """The product over `dim` (None: all elements, a 0-d result): (..., n, ...) -> (..., ...).
    Holomorphic: a complex input's gradient takes the conjugates of the other factors."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        a = _widened(a)
        ctx.dim, ctx.keepdim = dim, keepdim
        ctx.save_for_backward(a)
        if dim is None:
            return np.asarray(np.prod(a))
        return np.prod(a, axis=dim, keepdims=keepdim)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        if ctx.dim is None:
            flat = a.reshape(-1)
            if flat.size == 0:
                return np.zeros(a.shape, g.dtype)
            before, after = _exclusive_products(flat, 0)
            return (g * conj_slope(before * after)).reshape(a.shape)
        if a.shape[ctx.dim] == 0:
            return np.zeros(a.shape, g.dtype)
        before, after = _exclusive_products(a, ctx.dim)
        if not ctx.keepdim:
            g = np.expand_dims(g, ctx.dim)
        return g * conj_slope(before * after)


class Cumprod(Op):
    """Running products along `dim`: (..., n, ...) -> (..., n, ...). Holomorphic, as prod:
    complex input runs the scan on the conjugates."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, dim=0):
        a = _widened(a)
        ctx.dim = dim
        ctx.save_for_backward(a)
        return running(np.cumprod, a, dim)

    @staticmethod
    def backward(ctx, g):
        a = np.moveaxis(conj_slope(ctx.saved[0]), ctx.dim, -1)
        g = np.moveaxis(np.asarray(g), ctx.dim, -1)
        n = a.shape[-1]
        if n == 0:
            return np.moveaxis(np.zeros(a.shape, g.dtype), -1, ctx.dim)
        before, _ = _exclusive_products(a, -1)
        scan = np.empty(np.broadcast_shapes(a.shape, g.shape), dtype=np.result_type(a, g))
        scan[..., n - 1] = g[..., n - 1]
        for k in range(n - 2, -1, -1):  # S_k = g_k + a_{k+1} S_{k+1}
            scan[..., k] = g[..., k] + a[..., k + 1] * scan[..., k + 1]
        return np.moveaxis(before * scan, -1, ctx.dim)


def _others_table(a, dim):
    """For a tensor (..., n, ...) along `dim` (moved last): a tensor (..., n, n) whose row k is
    the elements with the k-th set to 1."""
    moved = a.movedim(dim, -1)
    n = moved.shape[-1]
    rows = moved.unsqueeze(-2).expand(*moved.shape[:-1], n, n)
    return rows.masked_fill(constant(np.eye(n, dtype=bool)), 1)


@rule(Prod)
def _prod(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    dim = ctx.dim
    if dim is None:
        others = Prod.apply(_others_table(a.reshape(-1), 0), dim=1).reshape(a.shape)
        return g * others
    others = Prod.apply(_others_table(a, dim), dim=a.ndim).movedim(-1, dim)
    return (g if ctx.keepdim else g.unsqueeze(dim)) * others


@rule(Cumprod)
def _cumprod(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    n = a.shape[ctx.dim]
    # table[..., k, i]: the product of a_0..a_i with a_k set to 1, which counts for i >= k
    table = Cumprod.apply(_others_table(a, ctx.dim), dim=a.ndim)
    later = constant(np.triu(np.ones((n, n), dtype=table.dtype)))
    gi = g.movedim(ctx.dim, -1).unsqueeze(-2)                     # (..., 1, n) over i
    return (table * later * gi).sum(-1).movedim(-1, ctx.dim)


@jvp_rule(Prod)
def _prod_jvp(ctx, out, tangents):
    """J t: the sum over the reduced elements of t times the product of the others."""
    t = tangents[0]
    a = ctx.saved[0]
    t = np.broadcast_to(t, a.shape)
    if ctx.dim is None:
        before, after = _exclusive_products(a.reshape(-1), 0) if a.size else (a, a)
        return np.asarray((t.reshape(-1) * before * after).sum(), dtype=out.dtype)
    if a.shape[ctx.dim] == 0:
        return np.zeros(out.shape, out.dtype)
    before, after = _exclusive_products(a, ctx.dim)
    return (t * before * after).sum(axis=ctx.dim, keepdims=ctx.keepdim).astype(out.dtype)


@jvp_rule(Cumprod)
def _cumprod_jvp(ctx, out, tangents):
    """J t: the running sum of t_j times the product of the others up to i; by the product
    rule, out_i * sum_{j<=i} t_j / a_j where no a_j is 0, written without the division as
    the scan T_i = T_{i-1} a_i + P_i t_i (P_i the product before i)."""
    a = np.moveaxis(ctx.saved[0], ctx.dim, -1)
    t = np.moveaxis(np.broadcast_to(tangents[0], ctx.saved[0].shape), ctx.dim, -1)
    n = a.shape[-1]
    result = np.zeros(a.shape, out.dtype)
    if n == 0:
        return np.moveaxis(result, -1, ctx.dim)
    before, _ = _exclusive_products(a, -1)
    result[..., 0] = t[..., 0]
    for i in range(1, n):
        result[..., i] = result[..., i - 1] * a[..., i] + before[..., i] * t[..., i]
    return np.moveaxis(result, -1, ctx.dim)


def _check_dim(dim, ndim, op):
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}: dim must be one int, got {dim!r} (reduce one dim at a time)")
    return normalize_dim(dim, max(ndim, 1), op) if ndim else None


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements (a 0-d tensor), or along `dim` (keepdim keeps it as size
    1). bool and integer inputs give int64; `dtype` converts the input first."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return Prod.apply(input)
    d = _check_dim(dim, input.ndim, "prod")
    if d is None:  # a 0-d tensor: dim 0 or -1 is its one element
        return Prod.apply(input)
    return Prod.apply(input, dim=d, keepdim=keepdim)


def cumprod(input, dim, *, dtype=None):
    """Running products along `dim`, the input's shape; bool and integer inputs give int64."""
    if dtype is not None:
        input = input.to(dtype)
    d = _check_dim(dim, input.ndim, "cumprod")
    if d is None:
        return Prod.apply(input)
    return Cumprod.apply(input, dim=d)
