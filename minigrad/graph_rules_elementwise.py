"""Tensor-level rules of the elementwise ops: each gradient is the local derivative times the
incoming gradient, as in `ops.elementwise`, with the derivative built from differentiable ops.

Masks (where relu passed, which side of a maximum won) are constants: their derivative is
zero almost everywhere, as PyTorch takes it.
"""
from __future__ import annotations

import math

import numpy as np

from . import ops
from .autograd.op import Op
from .kernels.reference import erf as _erf
from .graph_rules import constant, rule, saved_input, saved_output


def _operand(ctx, i, a, like):
    """Saved operand i; a Python number (`x ** 2`) becomes a constant of `like`'s dtype."""
    if ctx.next_nodes[i] is None and not isinstance(a, np.ndarray):
        return constant(np.asarray(a, dtype=like.dtype))
    return saved_input(ctx, i, a)


@rule(ops.Add)
def _add(ctx, g):
    return g, g


@rule(ops.Sub)
def _sub(ctx, g):
    return g, -g


@rule(ops.Neg)
def _neg(ctx, g):
    return -g


@rule(ops.Cast)
def _cast(ctx, g):
    return g


@rule(ops.Mul)
def _mul(ctx, g):
    a, b = ctx.saved
    return (None if b is None else g * _operand(ctx, 1, b, g),
            None if a is None else g * _operand(ctx, 0, a, g))


@rule(ops.Div)
def _div(ctx, g):
    a, b = ctx.saved
    need = ctx.needs_input_grad
    A, B = _operand(ctx, 0, a, g), _operand(ctx, 1, b, g)
    return (g / B if need[0] else None), (-g * A / (B * B) if need[1] else None)


@rule(ops.Pow)
def _pow(ctx, g):
    a, b, out = ctx.saved
    need = ctx.needs_input_grad
    A, B = _operand(ctx, 0, a, g), _operand(ctx, 1, b, g)
    ga = g * B * A ** (B - 1) if need[0] else None
    gb = None
    if need[1]:  # a^b log a, taken as 0 where a <= 0 (the first-order rule's convention)
        positive = np.asarray(a) > 0
        zero = constant(np.zeros((), g.dtype))
        safe = ops.Where.apply(positive, A, constant(np.ones((), g.dtype)))
        gb = g * ops.Where.apply(positive, saved_output(ctx, out) * safe.log(), zero)
    return ga, gb


def _weights(ctx, g, wins):
    """Maximum and minimum: the winner takes the gradient, ties split it evenly."""
    a, b = ctx.saved
    wa = (wins(a, b) + 0.5 * (a == b)).astype(g.dtype)
    return g * constant(wa), g * constant(1 - wa)


@rule(ops.Maximum)
def _maximum(ctx, g):
    return _weights(ctx, g, np.greater)


@rule(ops.Minimum)
def _minimum(ctx, g):
    return _weights(ctx, g, np.less)


@rule(ops.Exp)
def _exp(ctx, g):
    return g * saved_output(ctx, ctx.saved[0])


@rule(ops.Log)
def _log(ctx, g):
    return g / saved_input(ctx, 0, ctx.saved[0])


@rule(ops.Sqrt)
def _sqrt(ctx, g):
    return g / (2 * saved_output(ctx, ctx.saved[0]))


@rule(ops.Abs)
def _abs(ctx, g):
    return g * constant(np.sign(ctx.saved[0]).astype(g.dtype))


class TanhValue(ops.Tanh):
    """tanh(x) where a fused node kept y = tanh(x) but not x, as an op of x: forward returns y
    (the input is a stand-in whose values are not read), backward and rules are tanh's, which
    need y only. A fused node's rule rebuilds its activations with it, exactly, from what the
    first-order backward keeps."""

    @staticmethod
    def forward(ctx, stand_in, y=None):
        ctx.save_for_backward(y)
        return y


class SigmoidValue(ops.Sigmoid):
    """sigmoid(x) from its kept output y, as `TanhValue` for tanh."""

    @staticmethod
    def forward(ctx, stand_in, y=None):
        ctx.save_for_backward(y)
        return y


@rule(ops.Tanh, TanhValue)
def _tanh(ctx, g):
    y = saved_output(ctx, ctx.saved[0])
    return g * (1 - y * y)


@rule(ops.Sigmoid, SigmoidValue)
def _sigmoid(ctx, g):
    y = saved_output(ctx, ctx.saved[0])
    return g * y * (1 - y)


@rule(ops.Silu)
def _silu(ctx, g):
    x = saved_input(ctx, 0, ctx.saved[0])
    s = x.sigmoid()
    return g * (s * (1 + x * (1 - s)))


@rule(ops.Relu)
def _relu(ctx, g):
    return g * constant((ctx.saved[0] > 0).astype(g.dtype))


@rule(ops.LeakyRelu)
def _leaky_relu(ctx, g):
    a = ctx.saved[0]
    return g * constant(np.where(a > 0, 1, ctx.slope).astype(g.dtype))


@rule(ops.Clamp)
def _clamp(ctx, g):
    return g * constant(ops.Clamp.inside(ctx.saved[0], ctx.bounds).astype(g.dtype))


@rule(ops.Sin)
def _sin(ctx, g):
    return g * saved_input(ctx, 0, ctx.saved[0]).cos()


@rule(ops.Cos)
def _cos(ctx, g):
    return -g * saved_input(ctx, 0, ctx.saved[0]).sin()


@rule(ops.Tan)
def _tan(ctx, g):
    y = saved_output(ctx, ctx.saved[0])
    return g * (1 + y * y)


@rule(ops.Floor, ops.Ceil, ops.Round, ops.Trunc, ops.Sign)
def _flat(ctx, g):
    return g * 0


@rule(ops.FloorDivide)
def _floor_divide(ctx, g):
    return g * 0, g * 0


@rule(ops.Remainder)
def _remainder(ctx, g):
    a, b = ctx.saved
    need = ctx.needs_input_grad
    return (g if need[0] else None), (-g * constant(np.floor_divide(a, b)) if need[1] else None)


@rule(ops.Where)
def _where(ctx, g):
    cond = ctx.saved[0]
    need = ctx.needs_input_grad
    zero = constant(np.zeros((), g.dtype))
    return (None, ops.Where.apply(cond, g, zero) if need[1] else None,
            ops.Where.apply(cond, zero, g) if need[2] else None)


@rule(ops.MaskedFill)
def _masked_fill(ctx, g):
    return g.masked_fill(constant(np.asarray(ctx.saved[0])), 0.0), None


# --- GELU: x * Phi(x), whose derivative Phi(x) + x * phi(x) needs Phi as an op ----------------

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _normal_pdf(x):
    return (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))


class NormalCdf(Op):
    """Phi(x), the standard normal CDF, elementwise: GELU's second derivative needs it."""

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return 0.5 * (1 + _erf(a / math.sqrt(2)))

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        return g * np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)


@rule(NormalCdf)
def _normal_cdf(ctx, g):
    return g * _normal_pdf(saved_input(ctx, 0, ctx.saved[0]))


@rule(ops.Gelu)
def _gelu(ctx, g):
    x = saved_input(ctx, 0, ctx.saved[0])
    if ctx.approximate == "tanh":
        t = ((x + x * x * x * 0.044715) * _SQRT_2_OVER_PI).tanh()
        dt = (1 - t * t) * _SQRT_2_OVER_PI * (1 + x * x * (3 * 0.044715))
        return g * ((1 + t) * 0.5 + x * dt * 0.5)
    return g * (NormalCdf.apply(x) + x * _normal_pdf(x))


__all__ = ["NormalCdf", "SigmoidValue", "TanhValue"]
