"""The modified Bessel functions of the first kind of orders 0 and 1, `i0` and `i1` (the Kaiser
window's and the von Mises distribution's normalisers), I0(x) = sum_k (x^2/4)^k / (k!)^2, and
their exponentially scaled forms `i0e` = exp(-|x|) I0(x) and `i1e` = exp(-|x|) I1(x), which do
not overflow. Each is a small `Op` whose backward is made of the others (I0' = I1,
I1' = I0 - I1/x, 1/2 at 0; i0e' = i1e - sign(x) i0e, i1e' = i0e - i1e (sign(x) + 1/x)), with
a tensor-level rule, so each can be differentiated any number of times, and a forward-mode
rule.

Without SciPy, both are computed here in float64 and rounded to the input's dtype:
- for |x| <= 20 by their power series, whose terms are all positive (no cancellation), summed
  innermost first (60 terms: at 20 the last is below 1e-25 of the sum);
- beyond, by the asymptotic expansion I_nu(x) ~ e^x / sqrt(2 pi x) sum_k (-1)^k a_k(nu) / x^k,
  a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k), whose terms shrink until k ~ 2x
  (30 terms: at 20 the last is below 1e-17), with e^x taken as e^(x/2) twice so that it
  overflows only where the result does (x > 713); the scaled forms leave e^x out there, and
  multiply the series by e^-|x|.
I0 is even and I1 odd. PyTorch's i0 overflows from 709.8 (tests/compat_notes.py).
"""
from __future__ import annotations

import math

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input
from .jvp_rules import by_backward, jvp_rule
from .precise import _floating
from .error_functions import _in_float64

__all__ = ["i0", "i0e", "i1", "i1e"]

_EDGE, _TERMS, _ASYMPTOTIC_TERMS = 20.0, 60, 30


def _series(order, a):
    """I_order(a) for 0 <= a <= _EDGE by the power series, order 0 or 1."""
    z = a * a / 4.0
    nested = np.ones_like(a)  # 1 + z/(1 (1+order)) (1 + z/(2 (2+order)) (1 + ...))
    for k in range(_TERMS, 0, -1):
        nested = 1.0 + z / (k * (k + order)) * nested
    return nested if order == 0 else a / 2.0 * nested


def _asymptotic(order, a, scaled=False):
    """I_order(a) (times e^-a when scaled) for a > _EDGE (inf and NaN included) by the
    asymptotic expansion."""
    mu = 4.0 * order * order
    total, term = np.ones_like(a), np.ones_like(a)
    for k in range(1, _ASYMPTOTIC_TERMS + 1):
        term = term * (-(mu - (2 * k - 1) ** 2) / (k * 8.0)) / a
        total = total + term
    if scaled:
        return total / np.sqrt(2.0 * math.pi * a)
    with np.errstate(over="ignore", invalid="ignore"):
        half = np.exp(a / 2.0)
        return half * (half / np.sqrt(2.0 * math.pi * a) * total)


def _bessel(order, x, scaled=False):
    """I_order of a float64 array (order 0 or 1), times e^-|x| when scaled."""
    a = np.abs(x)
    out = np.empty_like(a)
    small = a <= _EDGE
    out[small] = _series(order, a[small])
    if scaled:
        out[small] *= np.exp(-a[small])
    out[~small] = _asymptotic(order, a[~small], scaled)
    return out if order == 0 else np.copysign(out, x)


def i0_array(x):
    """I0 of a float64 array."""
    return _bessel(0, x)


def i1_array(x):
    """I1 of a float64 array."""
    return _bessel(1, x)


def i0e_array(x):
    """e^-|x| I0(x) of a float64 array."""
    return _bessel(0, x, scaled=True)


def i1e_array(x):
    """e^-|x| I1(x) of a float64 array."""
    return _bessel(1, x, scaled=True)


def _i0e_slope_array(a):
    """i0e'(a) = i1e(a) - sign(a) i0e(a)."""
    return i1e_array(a) - np.sign(a) * i0e_array(a)


def _i1e_slope_array(a):
    """i1e'(a) = i0e(a) - i1e(a) (sign(a) + 1/a), 1/2 at 0."""
    zero = a == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        safe = np.where(zero, 1.0, a)
        return np.where(zero, 0.5, i0e_array(a) - i1e_array(a) * (np.sign(a) + 1.0 / safe))


def _i1_slope_array(a):
    """I1'(a) = I0(a) - I1(a) / a, 1/2 at 0."""
    zero = a == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(zero, 0.5, i0_array(a) - i1_array(a) / np.where(zero, 1.0, a))


# --- ops -----------------------------------------------------------------------------------------

class I0(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(i0_array, a)

    @staticmethod
    def backward(ctx, g):
        return g * _in_float64(i1_array, ctx.saved[0])


class I1(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(i1_array, a)

    @staticmethod
    def backward(ctx, g):
        return g * _in_float64(_i1_slope_array, ctx.saved[0])


class I0e(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(i0e_array, a)

    @staticmethod
    def backward(ctx, g):
        return g * _in_float64(_i0e_slope_array, ctx.saved[0])


class I1e(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(i1e_array, a)

    @staticmethod
    def backward(ctx, g):
        return g * _in_float64(_i1e_slope_array, ctx.saved[0])


@rule(I0)
def _i0(ctx, g):
    return g * I1.apply(saved_input(ctx, 0, ctx.saved[0]))


@rule(I1)
def _i1(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    zero = a.detach() == 0
    safe = a.masked_fill(zero, 1.0)
    return g * (I0.apply(a) - I1.apply(a) / safe).masked_fill(zero, 0.5)


@rule(I0e)
def _i0e(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    return g * (I1e.apply(a) - a.detach().sign() * I0e.apply(a))


@rule(I1e)
def _i1e(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    zero = a.detach() == 0
    safe = a.masked_fill(zero, 1.0)
    slope = I0e.apply(a) - I1e.apply(a) * (a.detach().sign() + 1.0 / safe)
    return g * slope.masked_fill(zero, 0.5)


jvp_rule(I0, I1, I0e, I1e)(by_backward)


def i0(input):
    """I0(x), the modified Bessel function of the first kind of order 0, elementwise."""
    return I0.apply(_floating(input))


def i0e(input):
    """e^-|x| I0(x), the exponentially scaled I0, elementwise (does not overflow)."""
    return I0e.apply(_floating(input))


def i1(input):
    """I1(x), the modified Bessel function of the first kind of order 1, elementwise."""
    return I1.apply(_floating(input))


def i1e(input):
    """e^-|x| I1(x), the exponentially scaled I1, elementwise (does not overflow)."""
    return I1e.apply(_floating(input))
