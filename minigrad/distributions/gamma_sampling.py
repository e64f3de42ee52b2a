"""Gamma(alpha, 1) samples whose gradient in alpha is the implicit reparameterisation one
(Figurnov, Mohamed and Mnih, 2018), as PyTorch's `_standard_gamma`.

A sample x = F^-1(u; alpha) of the regularised incomplete gamma function P(alpha, x) moves with
alpha at fixed u by dx/dalpha = -(dP/dalpha) / (dP/dx), and dP/dx = x^(alpha-1) e^-x /
Gamma(alpha) is the density. dP/dalpha has no closed form; two exact expansions give it:

- below alpha + 1, the series P = x^a e^-x sum_n x^n / Gamma(a + n + 1) differentiated term by
  term: dx/da = -x sum_n c_n (log x - digamma(a + n + 1)), c_0 = 1/a, c_n = c_(n-1) x / (a + n).
  Every term has the same sign there, so nothing cancels.
- from alpha + 1 up, the continued fraction of the upper tail Q = 1 - P = f(x) x K(a, x),
  K = 1 / (b_0 - a_1 / (b_1 - a_2 / ...)), b_n = x + 2n + 1 - a, a_n = n (n - a): then
  dx/da = dQ/da / f = x K (log x - digamma(a)) + x dK/da, with dK/da carried through the
  backward recurrence that evaluates K.

PyTorch approximates the same derivative (a series, a saddle-point expansion and a fitted
rational function); the two agree to its approximation's accuracy, and this one to rounding
with high-precision references (tests/test_distributions_gamma.py).
"""
from __future__ import annotations

import numpy as np

from minigrad import tensor
from minigrad.autograd.op import Op
from minigrad.gamma_functions import digamma_array
from minigrad.random import generator

__all__ = ["standard_gamma", "standard_gamma_grad"]


def _series(a, x):
    """dx/da below a + 1 (1-d float64 arrays): ratio x / (a + n) < 1, so the terms shrink."""
    terms = int(40 + 10 * np.sqrt(a.max(initial=0.0)))
    log_x = np.log(x)
    c = 1.0 / a
    psi = digamma_array(a) + 1.0 / a  # digamma(a + 1)
    total = c * (log_x - psi)
    for n in range(1, terms):
        c = c * x / (a + n)
        psi = psi + 1.0 / (a + n)
        total = total + c * (log_x - psi)
    return -x * total


def _continued_fraction(a, x):
    """dx/da from a + 1 up, K and dK/da by the backward recurrence of its continued fraction."""
    terms = int(40 + 4 * np.sqrt(a.max(initial=0.0)))
    t = x + 2 * terms + 1 - a          # t_N = b_N
    dt = -np.ones_like(x)
    for n in range(terms - 1, -1, -1):
        an1, dan1 = (n + 1) * (n + 1 - a), -(n + 1.0)  # a_(n+1) and its derivative
        t, dt = (x + 2 * n + 1 - a) - an1 / t, -1.0 - (dan1 * t - an1 * dt) / (t * t)
    k, dk = 1.0 / t, -dt / (t * t)
    return x * k * (np.log(x) - digamma_array(a)) + x * dk


def standard_gamma_grad(alpha, x):
    """dx/dalpha of Gamma(alpha, 1) samples x at fixed quantile, elementwise (NumPy arrays of
    one shape, computed in float64)."""
    a = np.asarray(alpha, np.float64).ravel()
    xs = np.maximum(np.asarray(x, np.float64).ravel(), np.finfo(np.float64).tiny)
    out = np.empty_like(xs)
    low = xs < a + 1
    if low.any():
        out[low] = _series(a[low], xs[low])
    if (~low).any():
        out[~low] = _continued_fraction(a[~low], xs[~low])
    return out.reshape(np.shape(x))


class StandardGamma(Op):
    """Gamma(alpha, 1) draws from minigrad's stream; backward by the implicit derivative."""

    @staticmethod
    def forward(ctx, alpha):
        # a 0-d alpha gives a Python float, hence the asarray
        x = np.asarray(generator().standard_gamma(alpha.astype(np.float64))).astype(alpha.dtype)
        x = np.maximum(x, np.finfo(alpha.dtype).tiny)  # an underflow to 0 has no log
        ctx.save_for_backward(alpha, x)
        return np.asarray(x)

    @staticmethod
    def backward(ctx, g):
        alpha, x = ctx.saved
        return (g * standard_gamma_grad(alpha, x).astype(alpha.dtype),)


def standard_gamma(alpha):
    """Gamma(alpha, 1) samples of alpha's shape, differentiable in alpha (a Tensor)."""
    return StandardGamma.apply(alpha if alpha.requires_grad else tensor(alpha.detach().numpy()))
