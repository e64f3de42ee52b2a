"""The parts of a floating-point number and tests on them: `frac` (what is left after
truncation toward zero), `signbit` (the sign bit, set for -0.0 too), `copysign` (the magnitude
of one number with the sign of another), `heaviside` (the step function, with the value given
at 0), `isposinf` and `isneginf`. frac and copysign are differentiable as PyTorch's are (frac's
gradient is 1; copysign's is +-1 toward its first input, 0 where that input is 0, and 0 toward
the sign-giving one); the tests give bool tensors, and heaviside has no derivative (its
result is in the graph, and backward through it raises, as in PyTorch).
"""
from __future__ import annotations

import numpy as np

from .autograd import function
from .autograd.function import Function
from .linalg_checks import torch_dtype_name
from .ops._sloped import Sloped, with_numbers, zero_where

__all__ = ["copysign", "frac", "heaviside", "isneginf", "isposinf", "signbit"]


def _array(x):
    return x._array if isinstance(x, function.Tensor) else np.asarray(x)


def _wrap(a):
    return function.Tensor._wrap(np.asarray(a))


def frac(input):
    """input - trunc(input), elementwise, for floating-point tensors (the sign is input's)."""
    if input._array.dtype.kind != "f":
        raise NotImplementedError(f'"frac": not implemented for '
                                  f"'{torch_dtype_name(input.dtype)}' tensors (only "
                                  f"floating-point ones)")
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as PyTorch's, without a warning
        return input - input.trunc()


def signbit(input):
    """True where the sign bit is set (negative numbers and -0.0), a bool tensor."""
    return _wrap(np.signbit(input._array))


def isposinf(input):
    """True where input is +inf, a bool tensor."""
    return _wrap(np.isposinf(input._array) if input._array.dtype.kind == "f"
                 else np.zeros(input.shape, bool))


def isneginf(input):
    """True where input is -inf, a bool tensor."""
    return _wrap(np.isneginf(input._array) if input._array.dtype.kind == "f"
                 else np.zeros(input.shape, bool))


def _zeros(like):
    """Zeros shaped as `like` (an array or a tensor): the slope that passes no gradient (a
    product with 0 would make NaN of an infinite or NaN `like`)."""
    if isinstance(like, function.Tensor):
        from .creation import zeros_like
        return zeros_like(like)
    return np.zeros_like(like)


class Copysign(Sloped):
    fn, uses_output = np.copysign, True
    # out / input is +-1; where input is 0 PyTorch passes no gradient
    slopes = staticmethod(lambda out, a, b: (zero_where(a == 0, out / a),
                                             _zeros(b)))


def copysign(input, other):
    """|input| with the sign of other (its sign bit: -0.0 counts as negative), elementwise and
    broadcast; other may be a number. Integer tensors give the default float dtype."""
    from .tensor_operators import binary
    if not isinstance(input, function.Tensor):
        raise TypeError(f"copysign(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return binary(Copysign, "copysign", *with_numbers("copysign", input, other), floats=True)


class Heaviside(Function):
    """The step function as an op of the graph, so that, as in PyTorch, its result requires
    grad when an operand does and backward through it raises: it has no derivative."""

    @staticmethod
    def forward(ctx, a, v):
        return np.where(a == 0, v, (a > 0).astype(a.dtype)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("the derivative for 'heaviside' is not implemented (as in PyTorch: "
                           "the step function has none)")


def heaviside(input, values):
    """0 where input < 0, values (broadcast) where input == 0, 1 where input > 0, in input's
    dtype, which values must share (no derivative, as in PyTorch)."""
    a, v = input._array, _array(values)
    if a.dtype != v.dtype:
        raise RuntimeError(f"heaviside is not yet implemented for tensors with different "
                           f"dtypes. (input {torch_dtype_name(input.dtype)}, values "
                           f"{torch_dtype_name(v.dtype)})")
    try:
        np.broadcast_shapes(a.shape, v.shape)
    except ValueError:
        raise RuntimeError(f"heaviside: shapes {a.shape} and {v.shape} cannot be broadcast "
                           f"together") from None
    return Heaviside.apply(input, values if isinstance(values, function.Tensor) else _wrap(v))
