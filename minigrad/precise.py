"""`log1p` and `expm1`: log(1 + x) and exp(x) - 1 without the cancellation of writing them out.

For |x| near 1e-8, `(1 + x).log()` in float32 loses every digit of x (1 + x rounds to 1), while
NumPy's `log1p` and `expm1` keep them; policy gradients and log-probabilities of small
probabilities need these. Each is a small `Op` with its backward beside its forward,
registered here with its tensor-level rule (for `create_graph=True`) and its forward-mode rule.
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .dtypes import get_default_dtype
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import by_backward, jvp_rule
from .ops._util import conj_slope

__all__ = ["expm1", "log1p"]


class Log1p(Op):
    complex_aware = True  # holomorphic, as expm1: complex input takes the slope's conjugate

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log1p(a)

    @staticmethod
    def backward(ctx, g):
        return g / (1 + conj_slope(ctx.saved[0]))


class Expm1(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        out = np.expm1(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * (conj_slope(ctx.saved[0]) + 1)  # d (e^a - 1) / da = e^a, the saved output + 1


@rule(Log1p)
def _log1p(ctx, g):
    return g / (saved_input(ctx, 0, ctx.saved[0]) + 1)


@rule(Expm1)
def _expm1(ctx, g):
    return g * (saved_output(ctx, ctx.saved[0]) + 1)


jvp_rule(Log1p, Expm1)(by_backward)


def _floating(input):
    """Integer and bool tensors compute in the default float dtype, as PyTorch's do."""
    if np.issubdtype(input.dtype, np.inexact):  # complex goes on, for the op to refuse
        return input
    return input.to(get_default_dtype())


def log1p(input):
    """log(1 + x), elementwise, accurate for small |x| (any shape)."""
    return Log1p.apply(_floating(input))


def expm1(input):
    """exp(x) - 1, elementwise, accurate for small |x| (any shape)."""
    return Expm1.apply(_floating(input))
