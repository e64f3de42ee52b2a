"""The logarithm of the gamma function and its derivatives: `lgamma` (log |Gamma(x)|),
`digamma` (its derivative, psi) and `polygamma(n, x)` (psi's n-th derivative), and the
multivariate log-gamma `multigammaln(a, p)` (the Wishart distribution's normaliser), composed
of lgamma. Each is a small
`Op` whose backward is the next function of the family (lgamma' = digamma, digamma' =
polygamma(1, .), polygamma(n, .)' = polygamma(n + 1, .)), with a tensor-level rule, so they can
be differentiated any number of times, and a forward-mode rule.

minigrad takes no SciPy, so they are computed here in float64 and rounded to the input's dtype:
- lgamma element by element in compiled code (kernels.lgamma, within 1e-13 of the C
  library's, which PyTorch calls), +inf at the poles 0, -1, -2, ... as PyTorch's;
- digamma by its recurrence psi(x) = psi(x + 1) - 1/x up to x >= 10, then the asymptotic
  series psi(y) = log y - 1/(2y) - sum_k B_2k / (2k y^2k) (Bernoulli numbers to B_14, whose
  term is below 1e-16 there), and for x < 0 the reflection psi(x) = psi(1 - x) - pi / tan(pi x)
  with x's fraction inside the tangent (exact, where pi x rounded would cost digits);
- polygamma(n, x) for n >= 1 as (-1)^(n+1) n! zeta(n + 1, x), with Hurwitz's zeta summed
  term by term up to x + k >= 10 + n and completed by Euler-Maclaurin's formula (to B_14).
At digamma's poles the value is NaN (-inf at +0, +inf at -0), at polygamma's +-inf, as in
PyTorch; tests/compat_notes.py lists where PyTorch's differ (its trigamma keeps about 10 digits,
its polygamma(n >= 2, inf) is NaN and its polygamma(1, x) at negative integers finite).
"""
from __future__ import annotations

import math

import numpy as np

from . import kernels
from .autograd.op import Op
from .graph_rules import rule, saved_input
from .jvp_rules import jvp_rule
from .precise import _floating
from .error_functions import _in_float64

__all__ = ["digamma", "lgamma", "multigammaln", "polygamma"]

# B_2, B_4, ..., B_14
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
_SHIFT = 10.0  # the recurrences shift x up to here, where the asymptotic series converge


# --- float64 arrays ------------------------------------------------------------------------------

def _digamma_positive(x):
    """psi(x) for x > 0 (inf and NaN pass through the series)."""
    y, acc = x.copy(), np.zeros_like(x)
    for _ in range(int(_SHIFT)):
        low = y < _SHIFT
        acc[low] -= 1.0 / y[low]
        y[low] += 1.0
    inv2 = 1.0 / (y * y)
    series = np.zeros_like(y)
    for k in range(len(_BERNOULLI), 0, -1):  # innermost (smallest) term first
        series = (series + _BERNOULLI[k - 1] / (2 * k)) * inv2
    with np.errstate(invalid="ignore"):
        return acc + np.log(y) - 0.5 / y - series


def digamma_array(x):
    """psi(x) of a float64 array."""
    out = np.full_like(x, np.nan)
    pos = x > 0
    out[pos] = _digamma_positive(x[pos])
    neg = (x < 0) & (x != np.floor(x)) & np.isfinite(x)
    v = x[neg]
    out[neg] = _digamma_positive(1.0 - v) - math.pi / np.tan(math.pi * (v - np.trunc(v)))
    zero = x == 0
    out[zero] = np.copysign(np.inf, -x[zero])
    return out


def _hurwitz_zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for an integer s >= 2 and a float64 array q."""
    out = np.full_like(q, np.nan)
    pole = (q <= 0) & (q == np.floor(q))
    out[pole] = np.inf
    ok = np.isfinite(q) & ~pole
    out[q == np.inf] = 0.0
    y, acc = q[ok].copy(), np.zeros(int(ok.sum()))
    edge = _SHIFT + s
    low = y < edge
    while low.any():
        acc[low] += y[low] ** -s
        y[low] += 1.0
        low = y < edge
    # Euler-Maclaurin: y^(1-s)/(s-1) + y^-s/2 + sum_j B_2j/(2j)! s(s+1)...(s+2j-2) y^(-s-2j+1)
    tail = y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising, power, factorial = float(s), y ** (-s - 1), 2.0
    for j, b in enumerate(_BERNOULLI, 1):
        tail = tail + b / factorial * rising * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        power = power / (y * y)
        factorial *= (2 * j + 1) * (2 * j + 2)
    out[ok] = acc + tail
    return out


def polygamma_array(n, x):
    """The n-th derivative of psi of a float64 array (digamma for n = 0)."""
    if n == 0:
        return digamma_array(x)
    with np.errstate(over="ignore"):
        return (-1.0) ** (n + 1) * math.factorial(n) * _hurwitz_zeta(n + 1, x)


# --- ops -----------------------------------------------------------------------------------------

class Polygamma(Op):
    """psi's n-th derivative, with n = -1 for lgamma (whose derivative psi is)."""

    @staticmethod
    def forward(ctx, a, n):
        ctx.save_for_backward(a)
        ctx.n = n
        if n < 0:
            return _in_float64(kernels.lgamma, a)
        return _in_float64(lambda x: polygamma_array(n, x), a)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        return g * _in_float64(lambda x: polygamma_array(ctx.n + 1, x), a)


@rule(Polygamma)
def _polygamma(ctx, g):
    return g * Polygamma.apply(saved_input(ctx, 0, ctx.saved[0]), n=ctx.n + 1)


@jvp_rule(Polygamma)
def _polygamma_jvp(ctx, out, tangents):
    t = tangents[0].astype(out.dtype, copy=False)
    return ctx.backward(ctx, t if t.shape == out.shape else np.broadcast_to(t, out.shape))


# --- functions -----------------------------------------------------------------------------------

def lgamma(input):
    """log |Gamma(x)|, elementwise (+inf at 0, -1, -2, ...)."""
    return Polygamma.apply(_floating(input), n=-1)


def digamma(input):
    """psi(x) = d lgamma(x) / dx, elementwise (NaN at -1, -2, ...; -inf at 0)."""
    return Polygamma.apply(_floating(input), n=0)


def polygamma(n, input):
    """The n-th derivative of digamma, elementwise, for an integer n >= 0."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"polygamma(n, x) does not support negative n. (got n = {n})")
    return Polygamma.apply(_floating(input), n=int(n))


def multigammaln(input, p):
    """log Gamma_p(a) = p (p - 1) / 4 log(pi) + sum_{j < p} lgamma(a - j / 2), elementwise,
    for an integer p >= 1."""
    if not isinstance(p, (int, np.integer)) or isinstance(p, bool):
        raise TypeError(f"multigammaln(): argument 'p' must be int, not {type(p).__name__}")
    if p < 1:
        raise RuntimeError(f"multigammaln: p has to be greater than or equal to 1 (got p = {p})")
    if input.dtype == np.bool_:
        raise RuntimeError("multigammaln: the input tensor may not be a boolean tensor")
    a = _floating(input)
    # summed as PyTorch's, from lgamma(a - (p - 1)/2) up to lgamma(a)
    total = sum((lgamma(a - (p - 1 - j) / 2.0) for j in range(1, p)), lgamma(a - (p - 1) / 2.0))
    return total + p * (p - 1) / 4.0 * math.log(math.pi)
