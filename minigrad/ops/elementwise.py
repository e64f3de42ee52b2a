"""Elementwise ops. Each gradient is the local derivative times the incoming gradient. Where
the forward broadcast an input, its gradient comes back in the output's shape and the engine
sums it over the broadcast axes (`_fit` in autograd/engine.py); None marks a gradient nobody
needs."""
from __future__ import annotations

import math

import numba
import numpy as np

from ..autograd.function import Function


def _ufunc(nargs):
    """Compile a scalar function with Numba into a NumPy ufunc for float32 and float64: one pass
    over memory where a NumPy expression makes a temporary per operation. The plain ufunc is
    returned, not Numba's dispatcher, whose extra Python layer costs more than a small call."""
    sigs = [f"{t}({', '.join([t] * nargs)})" for t in ("float32", "float64")]
    return lambda fn: numba.vectorize(sigs, cache=True)(fn).ufunc


@_ufunc(2)
def tanh_backward(y, g):
    """g * (1 - y^2): d tanh(x) / dx in terms of y = tanh(x)."""
    return g * (1 - y * y)


@_ufunc(2)
def sigmoid_backward(y, g):
    """g * y * (1 - y): d sigmoid(x) / dx in terms of y = sigmoid(x)."""
    return g * y * (1 - y)


@_ufunc(2)
def relu_backward(y, g):
    """g where y = relu(x) is > 0, else 0: one pass, no boolean temporary."""
    return g if y > 0 else 0


class Add(Function):
    @staticmethod
    def forward(ctx, a, b):
        return np.add(a, b)

    @staticmethod
    def backward(ctx, g):
        return g, g


class Sub(Function):
    @staticmethod
    def forward(ctx, a, b):
        return np.subtract(a, b)

    @staticmethod
    def backward(ctx, g):
        return g, (-g if ctx.needs_input_grad[1] else None)


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        # each operand is needed only for its partner's gradient: x * weight where x wants no
        # gradient keeps weight alone (and nothing under no_grad). A None input node means no
        # gradient wanted (`needs_input_grad`, read without building its tuple: Mul is hot)
        node_a, node_b = ctx.next_nodes
        ctx.save_for_backward(a if node_b is not None else None, b if node_a is not None else None)
        return np.multiply(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        return (None if b is None else g * b), (None if a is None else g * a)


class Div(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.divide(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        need = ctx.needs_input_grad
        return (g / b if need[0] else None), (-g * a / (b * b) if need[1] else None)


class Pow(Function):
    @staticmethod
    def forward(ctx, a, b):
        out = np.power(a, b)
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, b, out = ctx.saved
        need = ctx.needs_input_grad
        with np.errstate(divide="ignore", invalid="ignore"):
            # PyTorch's kinks: d(a^0)/da is 0 even at a == 0 (not 0 * 0^-1 = nan); d(a^b)/db
            # = a^b log a is 0 where a == 0 and b >= 0, and nan for a negative base
            ga = g * np.where(b == 0, 0, b * np.power(a, b - 1)) if need[0] else None
            gb = (g * np.where((a == 0) & (b >= 0), 0, out * np.log(a, dtype=out.dtype))
                  if need[1] else None)
        return ga, gb


class Maximum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.maximum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        # ties split the gradient evenly, as PyTorch does
        wa = ((a > b) + 0.5 * (a == b)).astype(g.dtype)
        return g * wa, g * (1 - wa)


class Minimum(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return np.minimum(a, b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        wa = ((a < b) + 0.5 * (a == b)).astype(g.dtype)
        return g * wa, g * (1 - wa)


class Neg(Function):
    @staticmethod
    def forward(ctx, a):
        return np.negative(a)

    @staticmethod
    def backward(ctx, g):
        return -g


class Exp(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.exp(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved[0]


class Log(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log(a)

    @staticmethod
    def backward(ctx, g):
        return g / ctx.saved[0]


class Sqrt(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.sqrt(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g / (2 * ctx.saved[0])


class Abs(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.abs(a)

    @staticmethod
    def backward(ctx, g):
        return g * np.sign(ctx.saved[0])


class Tanh(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.tanh(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return tanh_backward(ctx.saved[0], g)


def sigmoid(a):
    """1 / (1 + exp(-a)) of an array. exp only ever sees -|a|, so it never overflows, and
    below 0 the form exp(a) / (1 + exp(a)) keeps the precision of tiny values."""
    e = np.exp(-np.abs(a))
    return np.where(a >= 0, 1, e) / (1 + e)


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, a):
        out = sigmoid(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return sigmoid_backward(ctx.saved[0], g)


class Relu(Function):
    @staticmethod
    def forward(ctx, a):
        out = np.maximum(a, 0)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return relu_backward(ctx.saved[0], g)


class LeakyRelu(Function):
    """x where x > 0, else negative_slope * x. The gradient at 0 is the slope, as in PyTorch
    (a `maximum(x, slope * x)` would split the tie and give (1 + slope) / 2)."""

    @staticmethod
    def forward(ctx, a, negative_slope=0.01):
        ctx.save_for_backward(a)
        ctx.slope = float(negative_slope)  # a Python float keeps a's dtype; np.float64 would not
        return np.where(a > 0, a, a * ctx.slope)

    @staticmethod
    def backward(ctx, g):
        return np.where(ctx.saved[0] > 0, g, g * ctx.slope)


@_ufunc(1)
def _erf(x):  # NumPy has no erf; Numba compiles the C library's
    return math.erf(x)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


class Gelu(Function):
    """x * Phi(x); `approximate="tanh"` uses 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""

    @staticmethod
    def forward(ctx, a, approximate="none"):
        ctx.approximate = approximate
        ctx.save_for_backward(a)
        if approximate == "tanh":
            return 0.5 * a * (1 + np.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a ** 3)))
        if approximate != "none":
            raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
        return 0.5 * a * (1 + _erf(a / math.sqrt(2)))

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        if ctx.approximate == "tanh":
            t = np.tanh(_SQRT_2_OVER_PI * (a + 0.044715 * a ** 3))
            dt = (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * a * a)
            return g * (0.5 * (1 + t) + 0.5 * a * dt)
        cdf = 0.5 * (1 + _erf(a / math.sqrt(2)))
        pdf = np.exp(-0.5 * a * a) / math.sqrt(2 * math.pi)
        return g * (cdf + a * pdf)


class Clamp(Function):
    @staticmethod
    def forward(ctx, a, min=None, max=None):
        ctx.save_for_backward(a)
        ctx.bounds = (min, max)
        return np.clip(a, min, max)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        lo, hi = ctx.bounds
        inside = np.ones(a.shape, dtype=bool)
        if lo is not None:
            inside &= a >= lo
        if hi is not None:
            inside &= a <= hi
        return g * inside


class Cast(Function):
    """Change dtype; the engine casts the gradient back to the input's dtype."""

    @staticmethod
    def forward(ctx, a, dtype=None):
        return a.astype(dtype)

    @staticmethod
    def backward(ctx, g):
        return g


class Where(Function):
    """`where(cond, a, b)`: a where cond is True, else b; gradients flow to the chosen side."""

    @staticmethod
    def forward(ctx, cond, a, b):
        ctx.save_for_backward(cond)
        return np.where(cond, a, b)

    @staticmethod
    def backward(ctx, g):
        cond = ctx.saved[0]
        need = ctx.needs_input_grad
        zero = np.zeros((), g.dtype)
        return (None, np.where(cond, g, zero) if need[1] else None,
                np.where(cond, zero, g) if need[2] else None)


class MaskedFill(Function):
    """Replace elements where `mask` is True by `value`; those elements get no gradient."""

    @staticmethod
    def forward(ctx, a, mask, value=0.0):
        if not np.issubdtype(np.asarray(mask).dtype, np.bool_):
            raise TypeError(f"masked_fill: mask must be a bool tensor, got {np.asarray(mask).dtype}")
        try:
            out = np.where(mask, np.asarray(value, dtype=a.dtype), a)
        except ValueError:
            raise ValueError(f"masked_fill: mask of shape {np.shape(mask)} does not broadcast "
                             f"to the tensor's shape {a.shape}") from None
        if out.shape != a.shape:
            raise ValueError(f"masked_fill: mask of shape {np.shape(mask)} does not broadcast "
                             f"to the tensor's shape {a.shape}")
        ctx.save_for_backward(mask)
        return out

    @staticmethod
    def backward(ctx, g):
        return np.where(ctx.saved[0], np.zeros((), g.dtype), g), None
