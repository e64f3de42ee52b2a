"""The Gaussian's integral and its inverse (`erf`, `erfc`, `erfinv`), and logarithms and powers
in bases 2 and 10 (`log2`, `log10`, `exp2`), each a small `Op` with its backward beside
its forward, a tensor-level rule (for `create_graph=True`) and a forward-mode rule.

NumPy has no erf, and minigrad takes no SciPy, so erf and erfc are computed here in float64
(and rounded to the input's dtype) from two classical expansions, to within 2e-15 relative
error (erf within 5e-16), which the tests check against PyTorch in float64:
- for |x| < 1, the series erf(x) = 2/sqrt(pi) exp(-x^2) sum_n (2x^2)^n x / (1 3 5 ... (2n+1)),
  whose terms are all positive (no cancellation), summed innermost first as
  x (1 + (2x^2/3)(1 + (2x^2/5)(1 + ...))) so that rounding errors shrink as they go out;
- for |x| >= 1, Laplace's continued fraction erfc(x) = exp(-x^2) / sqrt(pi) /
  (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...)))), evaluated from depth 200 upwards (at 1 it
  needs about that many levels, at 2 fifty);
and erf = 1 - erfc, erfc = 1 - erf on the other side of 1, where each is large.
exp(-x^2) is taken as exp(-h^2) exp(-(x - h)(x + h)) for a short h, since x^2 rounded would
cost digits at large x. erfinv starts from Winitzki's closed-form approximation (relative
error below 2e-3) and takes three Halley steps on erf (or on erfc near +-1, where 1 - |x| is
exact), each tripling the number of correct digits.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import by_backward, jvp_rule
from .ops._util import conj_slope
from .precise import _floating

__all__ = ["erf", "erfc", "erfinv", "exp2", "log10", "log2"]

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# the series (to _TERMS terms) below _EDGE, the fraction (from depth _DEPTH) above
_EDGE, _TERMS, _DEPTH = 1.0, 30, 200


# --- float64 arrays ------------------------------------------------------------------------------

def _exp_neg_square(a):
    """exp(-a^2) without the rounding of a^2: h, a with 12 fractional bits, squares exactly.
    Where exp(-h^2) is 0 (|a| > 27.3) it alone gives the 0: beyond 2^40, a - h is no longer
    below 1/4096 and exp(-rest) would overflow (0 * inf); inf - inf likewise."""
    h = np.round(a * 4096.0) / 4096.0
    with np.errstate(invalid="ignore", over="ignore"):
        rest = np.where(np.isinf(a) | (h * h > 1e4), 0.0, (a - h) * (a + h))
    return np.exp(-h * h) * np.exp(-rest)


def _erf_series(a):
    """erf(a) for 0 <= a < 2."""
    a2 = 2.0 * a * a
    nested = np.ones_like(a)  # 1 + (2a^2/3)(1 + (2a^2/5)(1 + ...)), innermost first
    for n in range(_TERMS, 0, -1):
        nested = 1.0 + (a2 / (2 * n + 1)) * nested
    return _TWO_OVER_SQRT_PI * _exp_neg_square(a) * (a * nested)


def _erfc_fraction(a):
    """erfc(a) for a >= 1.5 (NaN and inf included)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = a.copy()
        for k in range(_DEPTH, 0, -1):
            f = a + (k / 2.0) / f
        return _exp_neg_square(a) / math.sqrt(math.pi) / f


def _split(fn_small, fn_large, a, edge):
    """fn_small where a < edge, fn_large elsewhere (NaN goes to fn_large)."""
    out = np.empty_like(a)
    small = a < edge
    out[small] = fn_small(a[small])
    out[~small] = fn_large(a[~small])
    return out


def erf_array(x):
    """erf of a float64 array."""
    a = np.abs(x)
    return np.copysign(_split(_erf_series, lambda v: 1.0 - _erfc_fraction(v), a, _EDGE), x)


def erfc_array(x):
    """erfc of a float64 array: relatively accurate for large positive x, where it is tiny."""
    a = np.abs(x)
    upper = _split(lambda v: 1.0 - _erf_series(v), _erfc_fraction, a, _EDGE)
    return np.where(x < 0, 2.0 - upper, upper)


def erfinv_array(y):
    """erfinv of a float64 array: +-inf at +-1, NaN outside [-1, 1]."""
    a = np.abs(y)
    inside = a < 1.0
    a_in = np.where(inside, a, 0.0)
    w = -np.log((1.0 - a_in) * (1.0 + a_in))            # -log(1 - a^2)
    b = 2.0 / (math.pi * 0.147) - w / 2.0
    r = np.sqrt((w / 0.147) / (np.sqrt(b * b + w / 0.147) + b))  # Winitzki, no cancellation
    near_one = a_in > 0.5
    for _ in range(3):
        # Halley's step on g(r) = erf(r) - a, or erfc(r) - (1 - a) near 1: g'' = -2 r g'
        slope = _TWO_OVER_SQRT_PI * _exp_neg_square(r)
        g = np.where(near_one, (1.0 - a_in) - erfc_array(r), erf_array(r) - a_in)
        u = g / slope
        r = r - u / (1.0 + r * u)
    r = np.where(inside, r, np.where(a == 1.0, np.inf, np.nan))
    return np.copysign(r, y)


def _in_float64(fn, a):
    """fn computed in float64 and rounded to a's dtype."""
    return fn(a.astype(np.float64, copy=False)).astype(a.dtype, copy=False)


def _no_half(name, *tensors):
    """Refuse float16 where PyTorch's CPU kernel does (its newer special functions): the
    same NotImplementedError, so that code which relies on it behaves alike."""
    if any(getattr(t, "dtype", None) == np.float16 for t in tensors):
        raise NotImplementedError(f'"{name}_cpu" not implemented for \'Half\'')


# --- ops -----------------------------------------------------------------------------------------

class Erf(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(erf_array, a)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        return g * (_TWO_OVER_SQRT_PI * np.exp(-a * a))


class Erfc(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _in_float64(erfc_array, a)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        return g * (-_TWO_OVER_SQRT_PI * np.exp(-a * a))


class Erfinv(Op):
    @staticmethod
    def forward(ctx, a):
        out = _in_float64(erfinv_array, a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        y = ctx.saved[0]  # d erfinv(a) / da = sqrt(pi) / 2 exp(erfinv(a)^2)
        with np.errstate(over="ignore"):
            return g * (np.exp(y * y) / _TWO_OVER_SQRT_PI)


# log2, log10 and exp2 are holomorphic: complex input takes the derivative's conjugate

class Log2(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log2(a)

    @staticmethod
    def backward(ctx, g):
        return g / (conj_slope(ctx.saved[0]) * _LN2)


class Log10(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return np.log10(a)

    @staticmethod
    def backward(ctx, g):
        return g / (conj_slope(ctx.saved[0]) * _LN10)


class Exp2(Op):
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        out = np.exp2(a)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * (conj_slope(ctx.saved[0]) * _LN2)


# --- tensor-level and forward-mode rules ---------------------------------------------------------

@rule(Erf)
def _erf(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    return g * ((-a * a).exp() * _TWO_OVER_SQRT_PI)


@rule(Erfc)
def _erfc(ctx, g):
    a = saved_input(ctx, 0, ctx.saved[0])
    return g * ((-a * a).exp() * -_TWO_OVER_SQRT_PI)


@rule(Erfinv)
def _erfinv(ctx, g):
    y = saved_output(ctx, ctx.saved[0])
    return g * ((y * y).exp() / _TWO_OVER_SQRT_PI)


@rule(Log2)
def _log2(ctx, g):
    return g / (saved_input(ctx, 0, ctx.saved[0]) * _LN2)


@rule(Log10)
def _log10(ctx, g):
    return g / (saved_input(ctx, 0, ctx.saved[0]) * _LN10)


@rule(Exp2)
def _exp2(ctx, g):
    return g * (saved_output(ctx, ctx.saved[0]) * _LN2)


jvp_rule(Erf, Erfc, Erfinv, Log2, Log10, Exp2)(by_backward)


# --- functions -----------------------------------------------------------------------------------

def erf(input):
    """2/sqrt(pi) * integral of exp(-t^2) from 0 to x, elementwise (any shape)."""
    return Erf.apply(_floating(input))


def erfc(input):
    """1 - erf(x), elementwise, accurate where it is tiny (large x)."""
    return Erfc.apply(_floating(input))


def erfinv(input):
    """The inverse of erf on [-1, 1], elementwise: +-inf at +-1, NaN outside."""
    return Erfinv.apply(_floating(input))


def log2(input):
    """The base-2 logarithm, elementwise (exact at powers of 2)."""
    return Log2.apply(_floating(input))


def log10(input):
    """The base-10 logarithm, elementwise (exact at powers of 10)."""
    return Log10.apply(_floating(input))


def exp2(input):
    """2 ** x, elementwise."""
    return Exp2.apply(_floating(input))
