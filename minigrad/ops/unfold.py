"""PyTorch's unfold and fold (im2col and col2im on their own): the sliding blocks of an
input as columns (N, C * prod(kernel), L), and the adjoint that adds columns back into an
image. Each is the other's gradient, so both differentiate to any order."""
from __future__ import annotations

import math

from ..autograd.op import Op
from ..graph_rules import rule
from ..jvp_rules import jvp_rule
from .conv import col2im, im2col


def unfold_array(x, kernel, conf):
    """x (N, C, *S) -> (N, C * prod(kernel), L), L = prod(out) block positions."""
    n, c = x.shape[:2]
    cols = im2col(x, kernel, conf).reshape(c * math.prod(kernel), n, math.prod(conf.out))
    return cols.transpose(1, 0, 2).copy()


def fold_array(cols, x_shape, kernel, conf):
    """The adjoint of unfold_array: cols (N, C * prod(kernel), L) summed into (N, C, *S)."""
    c, n = x_shape[1], x_shape[0]
    rows = cols.transpose(1, 0, 2).reshape(1, c * math.prod(kernel), n * math.prod(conf.out))
    return col2im(rows, x_shape, kernel, conf).copy()


class Unfold(Op):
    """x (N, C, *S) -> its blocks as columns (N, C * prod(kernel), L)."""

    @staticmethod
    def forward(ctx, x, kernel=(), conf=None):
        ctx.x_shape, ctx.kernel, ctx.conf = x.shape, kernel, conf
        return unfold_array(x, kernel, conf)

    @staticmethod
    def backward(ctx, g):
        return fold_array(g, ctx.x_shape, ctx.kernel, ctx.conf)


class Fold(Op):
    """Columns (N, C * prod(kernel), L) -> (N, C, *S) of x_shape, overlapping blocks summed."""

    @staticmethod
    def forward(ctx, cols, x_shape=(), kernel=(), conf=None):
        ctx.x_shape, ctx.kernel, ctx.conf = x_shape, kernel, conf
        return fold_array(cols, x_shape, kernel, conf)

    @staticmethod
    def backward(ctx, g):
        return unfold_array(g, ctx.kernel, ctx.conf)


@rule(Unfold)
def _unfold_rule(ctx, g):
    return Fold.apply(g, x_shape=ctx.x_shape, kernel=ctx.kernel, conf=ctx.conf)


@rule(Fold)
def _fold_rule(ctx, g):
    return Unfold.apply(g, kernel=ctx.kernel, conf=ctx.conf)


@jvp_rule(Unfold)
def _unfold_jvp(ctx, out, tangents):
    return unfold_array(tangents[0], ctx.kernel, ctx.conf)


@jvp_rule(Fold)
def _fold_jvp(ctx, out, tangents):
    return fold_array(tangents[0], ctx.x_shape, ctx.kernel, ctx.conf)
