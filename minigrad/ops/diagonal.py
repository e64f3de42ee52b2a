"""`diagonal(input, offset, dim1, dim2)` as a view of its input, as PyTorch's, and its adjoint.

The diagonal of dims dim1 and dim2 is (..., L) with the diagonal last: dims dim1 and dim2
are dropped and one dim of length L, whose stride is the sum of theirs, is added at the end.
No element is copied, so a write into the diagonal changes the input and the other way round.
Its gradient puts g on that diagonal of a zero tensor of the input's shape (`DiagonalEmbed`);
each op is the other's adjoint, so gradients of any order flow through them (their
tensor-level rules are in graph_rules_reduce_shape.py).
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ._util import normalize_dim


def diagonal_dims(ndim, offset, dim1, dim2):
    """(dim1, dim2) normalised, with PyTorch's error for a repeated dim."""
    d1 = normalize_dim(dim1, ndim, "diagonal")
    d2 = normalize_dim(dim2, ndim, "diagonal")
    if d1 == d2:
        raise RuntimeError(f"diagonal: diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def diagonal_view(a, offset, d1, d2):
    """The array of a's `offset` diagonal of dims d1, d2, on a's memory (writable where a is).

    NumPy's `diagonal` is such a view, marked read-only only to warn about a change NumPy once
    planned; where `a` itself may be written, so may its diagonal."""
    view = a.diagonal(offset, d1, d2)
    if a.flags.writeable:
        view.flags.writeable = True
    return view


class Diagonal(Op):
    """(..., n, ..., m, ...) -> (..., L): the view of one diagonal of dims dim1 and dim2."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, offset=0, dim1=0, dim2=1):
        d1, d2 = diagonal_dims(a.ndim, offset, dim1, dim2)
        ctx.in_shape, ctx.args = a.shape, (offset, d1, d2)
        return diagonal_view(a, offset, d1, d2)

    @staticmethod
    def backward(ctx, g):
        return embed(g, ctx.in_shape, *ctx.args)


def embed(g, shape, offset, d1, d2):
    """The adjoint of `Diagonal`: g (..., L) on the diagonal of a zero array of `shape`."""
    out = np.zeros(shape, dtype=g.dtype)
    diagonal_view(out, offset, d1, d2)[...] = g
    return out


class DiagonalEmbed(Op):
    """`embed` as an op: the gradient of `Diagonal`, whose gradient is the diagonal again."""
    complex_aware = True

    @staticmethod
    def forward(ctx, g, shape=(), offset=0, dim1=0, dim2=1):
        ctx.args = (offset, dim1, dim2)
        return embed(g, shape, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, gg):
        return np.array(diagonal_view(gg, *ctx.args))
