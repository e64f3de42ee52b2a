"""Dropout, alone and fused with its neighbours in a Transformer layer (after a ReLU, before a
residual add), each one op with one kernel each way.

Without a generator, a mask comes from a counter-based hash of (seed, element index)
(random.use_pytorch_dropout(False), the opt-out), so a fused op's backward
regenerates it from the seed instead of storing it, and a fused op drops exactly the elements
the separate ops would. Dropout alone keeps its mask for backward (see there). Given a
generator (random.use_pytorch_dropout, the default), each draws PyTorch's mask instead, from
it, in its forward pass (random_draws.dropout_drawn), and keeps the mask for backward.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd.op import Op

_MASKABLE = (np.dtype(np.float32), np.dtype(np.float64))  # the kernels' dtypes


class Dropout(Op):
    """Zero each element with probability p and scale the rest by 1/(1-p) (inverted dropout).

    The mask is PyTorch's, drawn from `gen` (see forward), or from a counter-based hash of
    (seed, element index). With the hash, when a gradient is
    wanted, forward keeps the mask itself (0 or 1/(1-p) in a's dtype, as PyTorch keeps one)
    and backward multiplies by it: the hash of each element costs about ten times the multiply,
    and the kernel computes x * mask too, so the numbers are the same as hashing again. (The
    fused dropouts below, on the Transformer's larger tensors, regenerate the mask instead.)
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0, mask=None, gen=None):
        # `mask`: given (0 or 1/(1-p) of a's shape, PyTorch's draws: random.use_pytorch_dropout)
        # it is used instead of the hash's; `gen`: a Generator to draw that mask from here, in
        # the pass that applies it (an `a` that random_draws.fused_dropout takes)
        if gen is not None:
            from ..random_draws import dropout_drawn
            out, mask = dropout_drawn(gen, a, p)
            ctx.p, ctx.seed, ctx.mask = p, seed, mask
            ctx.save_for_backward(mask)
            return out
        ctx.p, ctx.seed, ctx.mask = p, seed, mask
        if mask is None and (ctx.next_nodes[0] is None or a.dtype not in _MASKABLE):
            return kernels.dropout(np.ascontiguousarray(a), p, seed)  # no backward: one pass
        if mask is None:  # (by the element count: the mask is a function of the flat index)
            mask = kernels.dropout_mask(a.size, p, seed, a.dtype).reshape(a.shape)
        ctx.save_for_backward(mask)
        return np.multiply(a, mask, order="C")

    @staticmethod
    def backward(ctx, g):
        if ctx.saved:
            return np.multiply(g, ctx.saved[0], order="C")
        return kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)


class DropoutAdd(Op):
    """x + dropout(s, p, seed) as one op, x and s of one shape: a pre-norm residual connection.

    The same numbers as Dropout then Add. x's gradient is g; s's is dropout(g) (the mask
    regenerated from the seed). With `gen` (a Generator; an s that random_draws.fused_dropout
    takes) the mask is PyTorch's, drawn from it in the pass that adds (that of dropout(s)),
    and kept for backward as ctx.mask.
    """

    @staticmethod
    def forward(ctx, x, s, p=0.5, seed=0, gen=None):
        ctx.p, ctx.seed, ctx.mask = p, seed, None
        if gen is not None:
            from ..random_draws import dropout_drawn
            out, ctx.mask = dropout_drawn(gen, s, p, residual=x)
            return out
        return kernels.dropout_add(x, s, p, seed)

    @staticmethod
    def backward(ctx, g):
        if not ctx.needs_input_grad[1]:
            return g, None
        if ctx.mask is not None:
            return g, np.multiply(g, ctx.mask, order="C")
        return g, kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)


class ReluDropout(Op):
    """dropout(relu(x), p, seed) as one op: the same numbers and the same mask as the two ops.

    Backward needs neither the mask nor x: the output is > 0 exactly where ReLU passed an
    element and dropout kept it, and the gradient there is g / (1 - p), 0 elsewhere. With
    `gen` (a Generator; an `a` that random_draws.fused_dropout takes) the mask is PyTorch's,
    drawn from it in the pass (random.use_pytorch_dropout): that of dropout(relu(a)).
    """

    @staticmethod
    def forward(ctx, a, p=0.5, seed=0, gen=None):
        if gen is not None:
            from ..random_draws import dropout_drawn
            out = dropout_drawn(gen, a, p, relu=True, keep_mask=False)[0]
        else:
            out = kernels.relu_dropout(a, p, seed)
        ctx.p = p
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return kernels.relu_dropout_backward(ctx.saved[0], g, ctx.p)
