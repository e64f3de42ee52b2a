"""The negative log-likelihood losses of `torch.nn.functional` for a predicted distribution
other than a categorical one: Poisson (of counts) and Gaussian (of a mean and a variance).

Both follow PyTorch's formulas term by term (the Stirling term of a full Poisson loss, the
variance clamped at eps with its gradient passed through unchanged), its checks of the
variance's shape and its error wording; `minigrad.nn.functional` re-exports them.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.op import Op
from minigrad.graph_rules import rule
from minigrad.jvp_rules import by_backward, jvp_rule
from minigrad.tensor import Tensor

from .functional_loss import _no_legacy, _reduce


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """exp(input) - target * input for a log-rate `input` (log_input=True), or
    input - target * log(input + eps) for a rate; full=True adds Stirling's approximation of
    log(target!), target log target - target + log(2 pi target) / 2, where target > 1."""
    _no_legacy(size_average, reduce, "poisson_nll_loss")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        t = target if isinstance(target, Tensor) else Tensor._wrap(np.asarray(target))
        with np.errstate(divide="ignore", invalid="ignore"):
            stirling = t * t.log() - t + 0.5 * (2 * math.pi * t).log()
        loss = loss + stirling.masked_fill(t <= 1, 0)
    return _reduce(loss, reduction, "poisson_nll_loss")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (input - target)^2 / max(var, eps)) / 2 per element, plus
    log(2 pi) / 2 with full=True. `var` has the input's shape (one variance per expectation),
    or one dim of size 1 where the input's is larger, or lacks the input's last dim, or is a
    float. The clamp at eps changes the value but not the gradient, as in PyTorch."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        from minigrad.creation import ones_like
        var = var * ones_like(input)
    elif bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = _FloorWithoutGradient.apply(var, eps=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction, "gaussian_nll_loss")


class _FloorWithoutGradient(Op):
    """max(var, eps), (*) -> (*), with the gradient of the identity: PyTorch clamps a clone
    of the variance in place under no_grad, so the clamp is not part of the graph."""

    @staticmethod
    def forward(ctx, var, eps):
        return np.maximum(var, var.dtype.type(eps))

    @staticmethod
    def backward(ctx, g):
        return g


# the identity's gradient is the identity again, in either direction
rule(_FloorWithoutGradient)(lambda ctx, g: g)
jvp_rule(_FloorWithoutGradient)(by_backward)
