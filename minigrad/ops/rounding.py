"""Rounding and integer division. These functions are flat between their jumps, so their
derivative is zero wherever it exists, and PyTorch (hence minigrad) passes back zeros; the
exception is `remainder`, which falls by b * floor(a / b) and so has slope 1 in `a`."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..errors import DivisionByZeroError


class _Flat(Op):
    """A piecewise-constant function of one input: gradient zero."""

    fn = None
    keeps_ints = True  # on an integer tensor, floor/ceil/round/trunc return it unchanged

    @classmethod
    def forward(cls, ctx, a):
        if cls.keeps_ints and not np.issubdtype(a.dtype, np.floating):
            return a.copy()
        return cls.fn(a)

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g)


class Floor(_Flat):
    fn = staticmethod(np.floor)


class Ceil(_Flat):
    fn = staticmethod(np.ceil)


class Round(_Flat):
    fn = staticmethod(np.round)  # halves to even, as PyTorch


class Trunc(_Flat):
    fn = staticmethod(np.trunc)


class Sign(_Flat):
    fn = staticmethod(np.sign)
    keeps_ints = False

    @classmethod
    def forward(cls, ctx, a):
        if a.dtype.kind == "c":  # PyTorch's wording: the complex form is sgn
            raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support "
                                      "complex numbers. Please use torch.sgn instead.")
        return _Flat.forward.__func__(cls, ctx, a)


class FloorDivide(Op):
    """floor(a / b), rounding toward minus infinity (Python's and PyTorch's `//`)."""

    @staticmethod
    def forward(ctx, a, b):
        if not (np.issubdtype(np.result_type(a, b), np.floating)) and np.any(np.asarray(b) == 0):
            raise DivisionByZeroError("floor_divide: ZeroDivisionError (integer division by zero)")
        return np.asarray(np.floor_divide(a, b))

    @staticmethod
    def backward(ctx, g):
        return np.zeros_like(g), np.zeros_like(g)  # a step function: flat almost everywhere


class Remainder(Op):
    """a - b * floor(a / b): the sign follows b, as Python's `%` and PyTorch's remainder."""

    @staticmethod
    def forward(ctx, a, b):
        if not (np.issubdtype(np.result_type(a, b), np.floating)) and np.any(np.asarray(b) == 0):
            raise DivisionByZeroError("remainder: ZeroDivisionError (integer division by zero)")
        ctx.save_for_backward(a, b)
        return np.asarray(np.remainder(a, b))

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        need = ctx.needs_input_grad
        return (g if need[0] else None), (-g * np.floor_divide(a, b) if need[1] else None)
