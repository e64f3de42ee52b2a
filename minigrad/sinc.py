"""sin(x)/x in its two conventions: `sinc(x)` = sin(pi x) / (pi x), the normalised one of signal
processing (torch.sinc, torch.special.sinc), and `spherical_bessel_j0(x)` = sin(x) / x, both 1
at 0.

sinc is computed as PyTorch's is, in the input's dtype with pi x rounded there (so that
float32 sinc(1) is -2.8e-8, not 0, in both libraries), and is a sloped op whose derivative
(pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at 0, can be differentiated again: its own
derivative at 0 is sinc''(0) = -pi^2/3 (PyTorch's is NaN there, tests/compat_notes.py).
spherical_bessel_j0 is, as in PyTorch, not differentiable: its result never requires grad.
It is computed in float64 (by its Taylor series below |x| = 1/2, where sin(x)/x would lose
its last digits to rounding) and rounded to the input's dtype.
"""
from __future__ import annotations

import math

import numpy as np

from .autograd import op as autograd_op
from .error_functions import _in_float64, _no_half
from .ops._sloped import Sloped, call, unary, zero_where
from .precise import _floating

__all__ = ["sinc", "spherical_bessel_j0"]

_SECOND_AT_ZERO = -math.pi ** 2 / 3  # sinc(x) = 1 - (pi x)^2 / 6 + ...


def _sinc(x):
    y = (math.pi * x).astype(x.dtype, copy=False)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(x == 0, 1.0, np.sin(y) / np.where(x == 0, 1.0, y)).astype(x.dtype)


def _sinc_slope(x):
    zero = x == 0
    if isinstance(x, autograd_op.Tensor):  # the tensor-level rule: its slope at 0 is sinc''(0)
        from .functional import where
        safe = x.masked_fill(zero, 1.0)
        y = math.pi * safe
        return where(zero, _SECOND_AT_ZERO * x, (y * y.cos() - y.sin()) / (math.pi * safe * safe))
    y = math.pi * x
    with np.errstate(invalid="ignore", divide="ignore"):
        return zero_where(zero, (y * call("cos", y) - call("sin", y)) / (math.pi * x * x))


class Sinc(Sloped):
    fn = staticmethod(_sinc)
    slopes = staticmethod(lambda out, x: (_sinc_slope(x),))


def sinc(input):
    """sin(pi x) / (pi x), elementwise, 1 at 0."""
    return unary(Sinc, "sinc", input)


def _j0_array(x):
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    s = x[small] * x[small]
    term, total = np.ones_like(s), np.ones_like(s)
    for k in range(1, 9):  # (-x^2)^k / (2k + 1)!: the ninth is below 1e-22 at 1/2
        term = term * -s / ((2 * k) * (2 * k + 1))
        total = total + term
    out[small] = total
    big = x[~small]
    with np.errstate(invalid="ignore"):
        out[~small] = np.where(np.isinf(big), 0.0, np.sin(big) / big)
    return out


def spherical_bessel_j0(x):
    """sin(x) / x, elementwise, 1 at 0 and 0 at +-inf; its result does not require grad."""
    _no_half("spherical_bessel_j0", x)
    return autograd_op.Tensor._wrap(_in_float64(_j0_array, _floating(x)._array))
