"""`nan_to_num`: NaN, +inf and -inf replaced by finite numbers (0 and the dtype's largest and
smallest by default). The replaced elements no longer depend on the input, so their gradient
is 0; elsewhere it passes unchanged, as PyTorch's."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..graph_rules import constant, rule
from ..jvp_rules import jvp_rule


class NanToNum(Op):
    @staticmethod
    def forward(ctx, a, nan=0.0, posinf=None, neginf=None):
        ctx.save_for_backward(a)
        if a.dtype.kind not in "fc":  # integers and bools hold no NaN or inf
            return a.copy()
        return np.nan_to_num(a, copy=True, nan=nan, posinf=posinf, neginf=neginf)

    @staticmethod
    def backward(ctx, g):
        return g * np.isfinite(ctx.saved[0])


@rule(NanToNum)
def _nan_to_num(ctx, g):
    return g * constant(np.isfinite(ctx.saved[0]).astype(g.dtype))


@jvp_rule(NanToNum)
def _nan_to_num_jvp(ctx, out, tangents):
    t = np.broadcast_to(tangents[0], out.shape)
    return (t * np.isfinite(ctx.saved[0])).astype(out.dtype, copy=False)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> `nan`, +inf -> `posinf` (the dtype's largest by default), -inf -> `neginf` (its
    smallest); integer and bool tensors are returned as copies."""
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)
