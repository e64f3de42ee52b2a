"""Fused ops for the layers a Transformer calls thousands of times: linear, layer norm (alone
or after a residual connection's dropout and add) and cross entropy. Each could be written from smaller ops; one node with a hand-derived backward
does the same math with fewer temporaries and far less bookkeeping.
"""
from __future__ import annotations

import math

import numpy as np

from .. import kernels
from ..autograd.function import Function
from .matmul import addmm, mm, mm_and_sum


class Linear(Function):
    """y = x W^T + b for x of shape (..., D_in), W (D_out, D_in), b (D_out,).

    The leading dims are flattened into one (N, D_in) matrix, so every product is one big
    matmul rather than a batch of small ones.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        if x.shape[-1] != weight.shape[1]:
            raise ValueError(f"linear: input of shape {x.shape} has {x.shape[-1]} features but "
                             f"the weight of shape {weight.shape} expects {weight.shape[1]}")
        if x.dtype != weight.dtype:
            raise TypeError(f"linear: input dtype {x.dtype} differs from weight dtype "
                            f"{weight.dtype}")
        # x itself is saved, not the (N, D_in) view: the version check then finds its tensor
        # at once instead of searching the operands for the owner of a view's memory
        ctx.save_for_backward(x, weight)
        ctx.lead = x.shape[:-1]
        x2 = x.reshape(-1, x.shape[-1])
        # with a bias, a large product adds it in its own pass (BLAS's beta = 1)
        y = mm(x2, weight.T) if bias is None else addmm(bias, x2, weight.T)
        return y.reshape(ctx.lead + (weight.shape[0],))

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved
        x2 = x.reshape(-1, x.shape[-1])
        g2 = g.reshape(-1, weight.shape[0])
        need = ctx.needs_input_grad
        gx = gb = None
        if need[0] and len(need) > 2 and need[2]:
            # the bias gradient (column sums of g) taken as the dX product reads g's rows
            gx, gb = mm_and_sum(g2, weight)
        elif need[0]:
            gx = mm(g2, weight)
        elif len(need) > 2 and need[2]:
            gb = g2.sum(axis=0)
        if gx is not None:
            gx = gx.reshape(ctx.lead + (weight.shape[1],))
        gw = mm(g2.T, x2) if need[1] else None
        return gx, gw, gb


def _flat(t):
    return None if t is None else t.reshape(-1)


class LayerNorm(Function):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last `ndims` dims (biased var).

    With x_hat the normalised input and h = g * weight, the input gradient is
        dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sqrt(var + eps)
    (means over the normalised dims): the two subtracted terms are the paths through the
    mean and the variance. The rows are flattened to (N, D) and handed to a fused kernel.
    """

    @staticmethod
    def forward(ctx, x, weight=None, bias=None, ndims=1, eps=1e-5):
        d = math.prod(x.shape[x.ndim - ndims:])  # (np.prod of a tuple costs 2.5 us, 20x this)
        y, xhat, rstd = kernels.layer_norm(x.reshape(-1, d), _flat(weight), _flat(bias), eps)
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.shapes = (x.shape, None if weight is None else weight.shape)
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        xhat, rstd, weight = ctx.saved
        x_shape, w_shape = ctx.shapes
        dx, dw, db = kernels.layer_norm_backward(g.reshape(xhat.shape), xhat, rstd,
                                                 None if weight is None else weight.reshape(-1))
        need = ctx.needs_input_grad
        gw = dw.reshape(w_shape) if len(need) > 1 and need[1] else None
        gb = db.reshape(w_shape) if len(need) > 2 and need[2] else None
        return dx.reshape(x_shape), gw, gb


class DropoutAddLayerNorm(Function):
    """LayerNorm(x + dropout(s)) over the last dim: a post-norm residual connection.

    x and s have one shape (..., D); weight and bias are (D,) or None. The forward pass is one
    kernel (kernels.dropout_add_layer_norm) that makes neither dropout(s) nor the sum as an
    array, and gives bit for bit the numbers of Dropout, Add and LayerNorm in turn. The
    gradient of the sum h is layer norm's; x receives it unchanged and s receives it through
    the same dropout mask, regenerated from the seed.
    """

    @staticmethod
    def forward(ctx, x, s, weight=None, bias=None, p=0.5, seed=0, eps=1e-5):
        if s.shape != x.shape:
            raise ValueError(f"dropout_add_layer_norm: x of shape {x.shape} and s of shape "
                             f"{s.shape} differ")
        d = x.shape[-1]
        y, xhat, rstd = kernels.dropout_add_layer_norm(x.reshape(-1, d), s.reshape(-1, d), p,
                                                       seed, weight, bias, eps)
        ctx.save_for_backward(xhat, rstd, weight)
        ctx.p, ctx.seed = p, seed
        return y.reshape(x.shape)

    @staticmethod
    def backward(ctx, g):
        xhat, rstd, weight = ctx.saved
        dh, dw, db = kernels.layer_norm_backward(g.reshape(xhat.shape), xhat, rstd, weight)
        need = ctx.needs_input_grad
        ds = kernels.dropout(dh, ctx.p, ctx.seed).reshape(g.shape) if need[1] else None
        return (dh.reshape(g.shape), ds, dw if len(need) > 2 and need[2] else None,
                db if len(need) > 3 and need[3] else None)


class CrossEntropy(Function):
    """Cross entropy of logits (N, C) against class ids (N,), PyTorch's exact definition.

    With label smoothing e, each row's target distribution is (1 - e) on the true class plus
    e / C everywhere, so the loss is (1 - e) * nll + e * mean_c(-log p_c). Rows whose target is
    `ignore_index` count for nothing, and "mean" divides by the number of counted rows.
    The gradient with respect to the logits is p - target_distribution, per counted row.

    Memory: forward keeps the logits (they are the input, so nothing is copied) and two
    numbers per row (kernels.cross_entropy); no (N, C) array of log-probabilities is made.
    Backward writes the gradient in one pass over the logits.
    """

    @staticmethod
    def forward(ctx, logits, target=None, ignore_index=-100, label_smoothing=0.0,
                reduction="mean"):
        target = np.asarray(target)
        keep = target != ignore_index
        safe = np.where(keep, target, 0)
        loss, stats = kernels.cross_entropy(logits, safe, label_smoothing)
        loss = np.where(keep, loss, 0).astype(logits.dtype)
        count = int(keep.sum())
        ctx.save_for_backward(logits, stats)
        ctx.vals = (safe, keep, label_smoothing, reduction, count)
        if reduction == "none":
            return loss
        if reduction == "sum":
            return np.asarray(loss.sum(), dtype=logits.dtype)
        # PyTorch returns nan for a mean over zero counted rows; so do we
        return np.asarray(loss.sum() / count if count else np.nan, dtype=logits.dtype)

    @staticmethod
    def backward(ctx, g):
        logits, stats = ctx.saved
        safe, keep, eps, reduction, count = ctx.vals
        # what each row's loss counts for: 1 if kept (1 / count for "mean"), times its
        # upstream gradient (one per row for "none", one for all otherwise)
        w = keep / max(count, 1) if reduction == "mean" else keep.astype(np.float64)
        w = w * np.asarray(g, np.float64)
        return kernels.cross_entropy_backward(logits, safe, stats, w, eps)
