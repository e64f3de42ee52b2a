"""Cross entropy of logits against class ids as one node: no (N, C) array of
log-probabilities is made in forward, and backward writes the gradient in one pass."""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.op import Op


class CrossEntropy(Op):
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
