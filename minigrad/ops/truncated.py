"""`fmod`: the remainder of a division truncated toward zero, a - b * trunc(a / b), whose sign
follows the dividend a (C's fmod), where `remainder` (Python's %) follows the divisor.

Its slope is 1 in a and -trunc(a / b) in b between the jumps, PyTorch's gradients for both.
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..errors import DivisionByZeroError
from ..graph_rules import constant, rule
from ..jvp_rules import jvp_rule


def _quotient(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.trunc(np.divide(a, b))


class FMod(Op):
    @staticmethod
    def forward(ctx, a, b):
        if np.result_type(a, b) == np.bool_:
            raise NotImplementedError("fmod: not implemented for bool tensors")
        if np.result_type(a, b).kind in "iu" and np.any(np.asarray(b) == 0):
            raise DivisionByZeroError("fmod: ZeroDivisionError (integer division by zero)")
        ctx.save_for_backward(a, b)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.asarray(np.fmod(a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        need = ctx.needs_input_grad
        return (g if need[0] else None), (-g * _quotient(a, b) if need[1] else None)


@rule(FMod)
def _fmod(ctx, g):
    a, b = ctx.saved
    need = ctx.needs_input_grad
    return (g if need[0] else None), (-g * constant(_quotient(a, b)) if need[1] else None)


@jvp_rule(FMod)
def _fmod_jvp(ctx, out, tangents):
    ta, tb = tangents
    a, b = ctx.saved
    result = np.zeros(out.shape, out.dtype)
    if ta is not None:
        result = result + ta
    if tb is not None:
        result = result - tb * _quotient(a, b)
    return result.astype(out.dtype, copy=False)


def fmod(input, other):
    """a - b * trunc(a / b) elementwise, broadcast, in the dtype PyTorch promotes to; an
    integer division by zero is an error, a float one NaN."""
    from ..tensor_operators import binary
    return binary(FMod, "fmod", input, other)
