"""Dropout, alone and fused with its neighbours in a Transformer layer (after a ReLU, before a
residual add), each one op with one kernel each way.

Every mask comes from a counter-based hash of (seed, element index), so backward regenerates it
from the seed instead of storing it, and a fused op drops exactly the elements the separate
ops would.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.function import Function


class Dropout(Function):
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted dropout).

    The mask comes from a counter-based hash of (seed, element index), so backward regenerates
    it from the seed instead of storing it.
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0):
        ctx.p, ctx.seed = p, seed
        return kernels.dropout(np.ascontiguousarray(a), p, seed)

    @staticmethod
    def backward(ctx, g):
        return kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)


class DropoutAdd(Function):
    """x + dropout(s, p, seed) as one op, x and s of one shape: a pre-norm residual connection.

    The same numbers as Dropout then Add. x's gradient is g; s's is dropout(g) (the mask
    regenerated from the seed).
    """

    @staticmethod
    def forward(ctx, x, s, p=0.5, seed=0):
        ctx.p, ctx.seed = p, seed
        return kernels.dropout_add(x, s, p, seed)

    @staticmethod
    def backward(ctx, g):
        ds = kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)
        return g, (ds if ctx.needs_input_grad[1] else None)


class ReluDropout(Function):
    """dropout(relu(x), p, seed) as one op: the same numbers and the same mask as the two ops.

    Backward needs neither the mask nor x: the output is > 0 exactly where ReLU passed an
    element and dropout kept it, and the gradient there is g / (1 - p), 0 elsewhere.
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0):
        out = kernels.relu_dropout(a, p, seed)
        ctx.p = p
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return kernels.relu_dropout_backward(ctx.saved[0], g, ctx.p)
