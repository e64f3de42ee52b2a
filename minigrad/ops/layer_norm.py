"""Layer norm as one node each way, alone or after a post-norm residual's dropout and add
(`DropoutAddLayerNorm`): one fused kernel instead of the mean, variance and scaling ops.
"""
from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..autograd.op import Op


def _flat(t):
    return t if t is None or t.ndim == 1 else t.reshape(-1)  # (a 1-D weight needs no view)


def _shaped(a, shape):
    """a in `shape`: itself if it has it (a view would cost the engine a check of whom its
    memory belongs to before a leaf can keep it as its gradient)."""
    return a if a.shape == shape else a.reshape(shape)


class LayerNorm(Op):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last `ndims` dims (biased var).

    With x_hat the normalised input and h = g * weight, the input gradient is
        dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps)
    (means over the normalised dims): the two subtracted terms are the paths through the
    mean and the variance. The rows are flattened to (N, D) and handed to a fused kernel.
    """

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, ndims=1, eps=1e-5):
        # rows (N, D) as they are when x is 2-D, else a view: a view returned or saved costs
        # the engine a search for the array it shows (Op.apply)
        if ndims == 1 and x.ndim == 2:
            rows = x
        else:
            rows = x.reshape(-1, math.prod(x.shape[x.ndim - ndims:]))  # (math.prod: no array)
        y, xhat, rstd = kernels.layer_norm(rows, _flat(weight), _flat(bias), eps)
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.shapes = (x.shape, None if weight is None else weight.shape)
        return _shaped(y, x.shape)

    @staticmethod
    def backward(ctx, g):
        xhat, rstd, weight = ctx.saved
        x_shape, w_shape = ctx.shapes
        dx, dw, db = kernels.layer_norm_backward(_shaped(g, xhat.shape), xhat, rstd,
                                                 _flat(weight))
        need = ctx.needs_input_grad
        gw = _shaped(dw, w_shape) if len(need) > 1 and need[1] else None
        gb = _shaped(db, w_shape) if len(need) > 2 and need[2] else None
        return _shaped(dx, x_shape), gw, gb


class DropoutAddLayerNorm(Op):
    """LayerNorm(x + dropout(s)) over the last dim: a post-norm residual connection.

    x and s have one shape (..., D); weight and bias are (D,) or None. The forward pass is one
    kernel (kernels.dropout_add_layer_norm) that makes neither dropout(s) nor the sum as an
    array, and gives bit for bit the numbers of Dropout, Add and LayerNorm in turn. The
    gradient of the sum h is layer norm's; x receives it unchanged and s receives it through
    the same dropout mask, regenerated from the seed as each block of rows of the gradient is
    computed (kernels.dropout_add_layer_norm_backward).

    With `gen` (a Generator; an s that random_draws.fused_dropout takes) the mask is
    PyTorch's, drawn from it (that of dropout(s), in s's memory order) in the pass that makes
    the sum h, which layer norm's kernel then normalises: two passes, the numbers of the three
    ops bit for bit. The mask is kept for backward as ctx.mask, and s's gradient is layer
    norm's input gradient times it.
    """

    @staticmethod
    def forward(ctx, x, s, weight=None, bias=None, p=0.5, seed=0, eps=1e-5, gen=None):
        if s.shape != x.shape:
            raise ValueError(f"dropout_add_layer_norm: x of shape {x.shape} and s of shape "
                             f"{s.shape} differ")
        d = x.shape[-1]
        ctx.p, ctx.seed, ctx.mask = p, seed, None
        if gen is not None:
            from ..random_draws import dropout_drawn
            h, ctx.mask = dropout_drawn(gen, s, p, residual=x)
            y, xhat, rstd = kernels.layer_norm(h.reshape(-1, d), weight, bias, eps)
        else:
            y, xhat, rstd = kernels.dropout_add_layer_norm(x.reshape(-1, d), s.reshape(-1, d),
                                                           p, seed, weight, bias, eps)
        ctx.save_for_backward(xhat, rstd, weight)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        xhat, rstd, weight = ctx.saved
        need = ctx.needs_input_grad
        if need[1] and ctx.mask is None:   # s's gradient dropped in the same pass over the rows
            dh, ds, dw, db = kernels.dropout_add_layer_norm_backward(
                g.reshape(xhat.shape), xhat, rstd, weight, ctx.p, ctx.seed)
            ds = ds.reshape(g.shape)
        else:
            dh, dw, db = kernels.layer_norm_backward(g.reshape(xhat.shape), xhat, rstd, weight)
            ds = np.multiply(dh.reshape(g.shape), ctx.mask) if need[1] else None
        return (dh.reshape(g.shape), ds, dw if len(need) > 2 and need[2] else None,
                db if len(need) > 3 and need[3] else None)
