"""Binary cross entropy of probabilities, with PyTorch's floors where a log would be -inf."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op


class BinaryCrossEntropy(Op):
    """-(t log p + (1 - t) log(1 - p)) per element, (*) -> (*).

    At p = 0 or 1 a log is -inf; PyTorch floors each log at -100 in the forward pass and its
    gradient (p - t) / (p (1 - p)) divides by at least 1e-12, so both passes stay finite there
    and agree with each other (a floored log taken apart op by op would give 0 * inf = nan).
    """

    @staticmethod
    def forward(ctx, p, t):
        with np.errstate(divide="ignore", invalid="ignore"):
            log_p, log_not_p = np.log(p), np.log1p(-p)
        ctx.save_for_backward(p, t, log_p, log_not_p)
        return ((t - 1) * np.maximum(log_not_p, -100) - t * np.maximum(log_p, -100)).astype(
            p.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        p, t, log_p, log_not_p = ctx.saved
        need = ctx.needs_input_grad
        eps = p.dtype.type(np.float32(1e-12))  # PyTorch's EPSILON is a float, in every dtype
        gp = g * (p - t) / np.maximum((1 - p) * p, eps) if need[0] else None
        gt = g * (log_not_p - log_p) if need[1] else None  # -logit(p), unfloored as PyTorch's
        return gp, gt
