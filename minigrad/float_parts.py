"""The parts of a floating-point number and tests on them: `frac` (what is left after
truncation toward zero), `signbit` (the sign bit, set for -0.0 too), `copysign` (the magnitude
of one number with the sign of another), `heaviside` (the step function, with the value given
at 0), `isposinf` and `isneginf`; `frexp` (mantissa and exponent), `ldexp` (their inverse) and
`nextafter` (the next representable number toward another). frac and copysign are differentiable as PyTorch's are (frac's
gradient is 1; copysign's is +-1 toward its first input, 0 where that input is 0, and 0 toward
the sign-giving one); the tests give bool tensors, and heaviside has no derivative (its
result is in the graph, and backward through it raises, as in PyTorch). ldexp is a product
with a power of two, and frexp's mantissa the input times one, so both differentiate as
those; nextafter passes the gradient to its first input where it moves (input != other,
PyTorch's rule) and none to the second.
"""
from __future__ import annotations

import numpy as np

from .autograd import op as autograd_op
from .autograd.op import Op
from .errors import broadcast_error
from .graph_rules import constant, rule
from .jvp_rules import jvp_rule
from .linalg_checks import torch_dtype_name
from .ops._sloped import Sloped, with_numbers, zero_where

__all__ = ["copysign", "frac", "frexp", "heaviside", "isneginf", "isposinf", "ldexp",
           "nextafter", "signbit"]


def _array(x):
    return x._array if isinstance(x, autograd_op.Tensor) else np.asarray(x)


def _wrap(a):
    return autograd_op.Tensor._wrap(np.asarray(a))


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
    if isinstance(like, autograd_op.Tensor):
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
    if not isinstance(input, autograd_op.Tensor):
        raise TypeError(f"copysign(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    return binary(Copysign, "copysign", *with_numbers("copysign", input, other), floats=True)


class Heaviside(Op):
    """The step function as an op of the graph, so that, as in PyTorch, its result requires
    grad when an operand does and backward through it raises: it has no derivative."""

    @staticmethod
    def forward(ctx, a, v):
        return np.where(a == 0, v, (a > 0).astype(a.dtype)).astype(a.dtype, copy=False)

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("the derivative for 'heaviside' is not implemented (as in "
                                  "PyTorch: the step function has none)")


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
        raise broadcast_error("heaviside", a.shape, v.shape) from None
    return Heaviside.apply(input, values if isinstance(values, autograd_op.Tensor) else _wrap(v))


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1)
    (0 for 0); the mantissa keeps input's float dtype, the exponent is int32."""
    from . import return_types
    a = input._array
    if a.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    _, e = np.frexp(a)
    exponent = _wrap(e.astype(np.int32))
    scale = _wrap(np.ldexp(np.ones((), a.dtype), -e).astype(a.dtype))  # exact: a power of 2
    return return_types.frexp(input * scale, exponent)


def ldexp(input, other):
    """input * 2 ** other, elementwise and broadcast, in their common float dtype (integers
    give the default float); differentiable in both as that product."""
    from .dtypes import computation_dtype
    other = other if isinstance(other, autograd_op.Tensor) else _wrap(other)
    dtype = computation_dtype((input, other), "ldexp", floats=True)
    return input.to(dtype) * 2.0 ** other.to(dtype)


class NextAfter(Op):
    """The next float after a toward b; PyTorch's gradient: 1 toward a where a != b (0 where
    the result is b itself), 0 toward b."""

    @staticmethod
    def forward(ctx, a, b):
        ctx.moved = a != b
        return np.nextafter(a, b)

    @staticmethod
    def backward(ctx, g):
        return g * ctx.moved, np.zeros_like(g)


def nextafter(input, other):
    """The next representable number after input toward other, elementwise and broadcast,
    for float tensors (both promoted to their common dtype)."""
    from .dtypes import result_type
    dtype = result_type(input, other)
    if dtype.kind != "f":
        raise NotImplementedError(f'"nextafter_cpu" not implemented for '
                                  f"'{torch_dtype_name(dtype)}'")
    to = [x.to(dtype) if isinstance(x, autograd_op.Tensor) else _wrap(np.asarray(x, dtype))
          for x in (input, other)]
    try:
        np.broadcast_shapes(to[0].shape, to[1].shape)
    except ValueError:
        raise broadcast_error("nextafter", to[0].shape, to[1].shape) from None
    return NextAfter.apply(*to)


@rule(NextAfter)
def _next_after_rule(ctx, g):
    return g * constant(ctx.moved.astype(g.dtype)), None


@jvp_rule(NextAfter)
def _next_after_jvp(ctx, out, tangents):
    t = tangents[0]
    return None if t is None else t * ctx.moved
