"""The standard normal distribution's functions of torch.special: `ndtr` (its CDF Phi),
`log_ndtr` (log Phi, finite far into the left tail, where Phi underflows), `ndtri` (Phi's
inverse) and `erfcx` (the scaled complementary error function exp(x^2) erfc(x), on which the
left tail's accuracy rests). Each is a `Sloped` op, so its gradient can be differentiated again.

They are computed in float64 from error_functions' erf and erfc and rounded to the input's
dtype, as PyTorch's are from the same identities:
- ndtr(x) = erfc(-x / sqrt 2) / 2;
- erfcx(x) = 1 / sqrt(pi) / (x + (1/2) / (x + 1 / (x + ...))) from 1 up (the continued
  fraction of erfc without its factor exp(-x^2)), exp(x^2) erfc(x) below, with exp(x^2) taken
  as exp(h^2) exp((x - h)(x + h)) for a short h;
- log_ndtr(x) = log(erfcx(-t) / 2) - t^2 with t = x / sqrt 2 below -1, log1p(-erfc(t) / 2)
  above;
- ndtri(p) = sqrt 2 erfinv(2p - 1) for p in [1/4, 3/4] (where 2p - 1 is exact); below, four
  Newton steps on log_ndtr(x) = log p from Winitzki's approximation (whose 1 - a and 1 + a are
  2p and 2 - 2p, exact), so that p = 1e-300 keeps its digits; above, -ndtri(1 - p).
Their gradients are phi(x) = exp(-x^2/2) / sqrt(2 pi) for ndtr, phi / Phi = sqrt(2/pi) /
erfcx(-x / sqrt 2) for log_ndtr (no 0/0 in the tail), sqrt(2 pi) exp(ndtri(p)^2 / 2) for
ndtri and 2x erfcx(x) - 2/sqrt(pi) for erfcx.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd import op as autograd_op
from .error_functions import _in_float64, _no_half, erfc_array, erfinv_array
from .ops._sloped import Sloped, call, unary

__all__ = ["erfcx", "log_ndtr", "ndtr", "ndtri"]

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_DEPTH = 200  # the continued fraction's depth, as error_functions' for erfc


# --- float64 arrays ------------------------------------------------------------------------------

def _exp_square(a):
    """exp(a^2) without the rounding of a^2 (h, a with 12 fractional bits, squares exactly;
    where exp(h^2) overflows it alone gives the inf, as in error_functions._exp_neg_square)."""
    h = np.round(a * 4096.0) / 4096.0
    with np.errstate(invalid="ignore", over="ignore"):
        rest = np.where(np.isinf(a) | (h * h > 1e4), 0.0, (a - h) * (a + h))
        return np.exp(h * h) * np.exp(rest)


def _erfcx_fraction(a):
    """exp(a^2) erfc(a) for a >= 1 (inf and NaN included)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        f = a.copy()
        for k in range(_DEPTH, 0, -1):
            f = a + (k / 2.0) / f
        return np.where(np.isinf(a), 0.0, 1.0 / math.sqrt(math.pi) / f)


def erfcx_array(x):
    """exp(x^2) erfc(x) of a float64 array (inf below about -26.6, where it overflows)."""
    out = np.empty_like(x)
    low = x < 1.0
    with np.errstate(over="ignore", invalid="ignore"):
        out[low] = _exp_square(x[low]) * erfc_array(x[low])
    out[~low] = _erfcx_fraction(x[~low])
    return out


def ndtr_array(x):
    return 0.5 * erfc_array(-x / _SQRT2)


def log_ndtr_array(x):
    t = x / _SQRT2
    out = np.empty_like(x)
    left = x < -1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        out[left] = np.log(erfcx_array(-t[left]) / 2.0) - t[left] * t[left]
        out[~left] = np.log1p(-erfc_array(t[~left]) / 2.0)
    return out


def _phi_over_cdf(x):
    """phi(x) / Phi(x), the derivative of log Phi, without 0/0 far to the left."""
    with np.errstate(divide="ignore", over="ignore"):
        return math.sqrt(2.0 / math.pi) / erfcx_array(-x / _SQRT2)


def _ndtri_lower(p):
    """Phi^-1(p) for 0 < p < 1/4: Winitzki's start, then Newton on log Phi(x) = log p."""
    w = -np.log((2.0 * p) * (2.0 - 2.0 * p))
    b = 2.0 / (math.pi * 0.147) - w / 2.0
    x = -_SQRT2 * np.sqrt((w / 0.147) / (np.sqrt(b * b + w / 0.147) + b))
    log_p = np.log(p)
    for _ in range(4):
        x = x - (log_ndtr_array(x) - log_p) / _phi_over_cdf(x)
    return x


def ndtri_array(p):
    """Phi^-1 of a float64 array: -inf at 0, inf at 1, NaN outside [0, 1]."""
    out = np.full_like(p, np.nan)
    mid = (p >= 0.25) & (p <= 0.75)
    out[mid] = _SQRT2 * erfinv_array(2.0 * p[mid] - 1.0)
    low = (p > 0.0) & (p < 0.25)
    out[low] = _ndtri_lower(p[low])
    high = (p > 0.75) & (p < 1.0)
    out[high] = -_ndtri_lower(1.0 - p[high])
    out[p == 0.0] = -np.inf
    out[p == 1.0] = np.inf
    return out


# --- ops -----------------------------------------------------------------------------------------

def _of(array_fn, tensor_fn, x):
    """array_fn of an array (backward), tensor_fn of a tensor (the tensor-level rule)."""
    if isinstance(x, autograd_op.Tensor):
        return tensor_fn(x)
    return _in_float64(array_fn, x)


class Ndtr(Sloped):
    fn = staticmethod(lambda a: _in_float64(ndtr_array, a))
    slopes = staticmethod(lambda out, x: (call("exp", -x * x / 2.0) / _SQRT_2PI,))


class LogNdtr(Sloped):
    fn = staticmethod(lambda a: _in_float64(log_ndtr_array, a))
    slopes = staticmethod(lambda out, x: (_of(_phi_over_cdf, lambda t: math.sqrt(
        2.0 / math.pi) / erfcx(-t / _SQRT2), x),))


class Ndtri(Sloped):
    uses_output = True
    fn = staticmethod(lambda a: _in_float64(ndtri_array, a))
    slopes = staticmethod(lambda out, p: (_SQRT_2PI * call("exp", out * out / 2.0),))


class Erfcx(Sloped):
    uses_output = True
    fn = staticmethod(lambda a: _in_float64(erfcx_array, a))
    slopes = staticmethod(lambda out, x: (2.0 * x * out - _TWO_OVER_SQRT_PI,))


# --- functions -----------------------------------------------------------------------------------

def ndtr(input):
    """The standard normal CDF Phi(x), elementwise."""
    return unary(Ndtr, "ndtr", input)


def log_ndtr(input):
    """log Phi(x), elementwise, finite where Phi(x) underflows (x < -38)."""
    _no_half("log_ndtr", input)
    return unary(LogNdtr, "log_ndtr", input)


def ndtri(input):
    """Phi^-1(p), the standard normal quantile, elementwise (-inf at 0, inf at 1, NaN
    outside [0, 1])."""
    _no_half("ndtri", input)
    return unary(Ndtri, "ndtri", input)


def erfcx(input):
    """exp(x^2) erfc(x), elementwise: erfc scaled so that it does not underflow for large x."""
    _no_half("erfcx", input)
    return unary(Erfcx, "erfcx", input)
