"""torch.special's classical orthogonal polynomials of degree n at x, elementwise and broadcast
(x or n may be a number, not both): Chebyshev's T, U, V, W and their shifted forms on [0, 1]
(`shifted_chebyshev_polynomial_t`... at 2x - 1), the physicists' and probabilists' Hermite
H and He, Laguerre's L and Legendre's P.

They follow PyTorch's kernels, vectorised, so that the two agree to rounding and at the
edges:
- the degree is n truncated to an integer (a float n too: 3.7 is 3); NaN, infinite and
  out-of-range degrees become negative, as C's cast makes them, and a negative degree gives 0;
- the fixed values at the interval's ends (|x| = 1; x = 0 or 1 for the shifted forms; 1 at
  x = 0 for Laguerre's), before anything else;
- Chebyshev's at high degree inside the interval by their trigonometric forms (T_n(cos t) =
  cos(n t), U_n = sin((n+1) t) / sin t, V_n = cos((n+1/2) t) / cos(t/2), W_n = sin((n+1/2) t)
  / sin(t/2)) from the degree PyTorch switches at (above 6 for T and the shifted forms, 4 for
  the shifted W, 8 for U, V and W);
- otherwise the three-term recurrence, n - 1 steps from the degree-1 polynomial (one NumPy
  step for all the elements at once, so a degree in the millions inside the interval, where
  no value overflows to NaN to end it early, takes seconds); Hermite's degree above 512 (128
  for float32) is NaN, as PyTorch's limit.
Computed in float64 and rounded to the operands' dtype (integers give the default float);
float16 is refused as PyTorch's CPU kernels refuse it.

As in PyTorch, the results never require grad: it defines no derivative for these.
"""
from __future__ import annotations

import numpy as np

from . import dtypes
from .autograd import op as autograd_op
from .error_functions import _no_half
from .errors import size_mismatch

__all__ = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
           "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
           "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
           "shifted_chebyshev_polynomial_w"]


def _degrees(n):
    """n as C's cast to int64 makes it: truncated; NaN, inf and out of range negative."""
    if n.dtype.kind in "biu":
        return n.astype(np.int64)
    ok = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    return np.where(ok, np.trunc(np.where(ok, n, 0.0)), -1.0).astype(np.int64)


class _Cases:
    """The result filled case by case, the first case that holds for an element deciding it."""

    def __init__(self, shape):
        self.out = np.full(shape, np.nan)
        self.todo = np.ones(shape, bool)

    def settle(self, mask, value):
        chosen = self.todo & mask
        self.out[chosen] = np.broadcast_to(value, self.out.shape)[chosen]
        self.todo &= ~chosen


def _recur(cases, x, n, p, q, step):
    """Run r = step(j, x, p, q) for j = 1 .. n - 1 where still undecided (n >= 2), in step
    across the elements, dropping each at its own degree (or once it is NaN, which it stays)."""
    index = np.flatnonzero(cases.todo)
    x, n, p, q = (np.broadcast_to(v, cases.out.shape).ravel()[index] for v in (x, n, p, q))
    out, j = cases.out.reshape(-1), 1
    with np.errstate(all="ignore"):
        while index.size:
            live = (j < n) & ~np.isnan(q)
            if not live.all():  # most steps drop nothing: no copies then
                out[index[~live]] = q[~live]
                index, x, n, p, q = index[live], x[live], n[live], p[live], q[live]
            p, q = q, step(j, x, p, q)
            j += 1
    cases.todo[...] = False


def _chebyshev(kind, x, n):
    """Chebyshev's T, U, V or W (kind 0..3) of degree n at x (float64 and int64 arrays)."""
    cases, nf = _Cases(np.broadcast_shapes(x.shape, n.shape)), n.astype(np.float64)
    odd = np.where(n % 2 == 0, 1.0, -1.0)
    end = np.abs(x) == 1.0
    cases.settle(n < 0, 0.0)
    at_minus_one = (odd, (nf + 1) * odd, (2 * nf + 1) * odd, odd)[kind]
    at_one = (1.0, nf + 1, 1.0, 2 * nf + 1)[kind]
    cases.settle(end, np.where(x > 0, at_one, at_minus_one))
    with np.errstate(all="ignore"):
        t = np.arccos(x)
        fallback = (None, None, at_minus_one, np.where(x > 0, at_one, odd))[kind]
        trig = _TRIG[kind](t, x, nf, fallback)
    cases.settle((n > (6 if kind == 0 else 8)) & (np.abs(x) < 1.0), trig)
    first = x * 2.0 - 1.0 if kind == 2 else x * 2.0 + 1.0 if kind == 3 else x * (1.0 + kind)
    cases.settle(n == 0, 1.0)
    cases.settle(n == 1, first)
    _recur(cases, x, n, np.ones_like(first), first, lambda j, x, p, q: (x + x) * q - p)
    return cases.out


# The trigonometric forms at x = cos t; `fallback` is PyTorch's value where the half angle's
# sine (V) or cosine (W) rounds to 1, at the interval's ends.
def _trig_t(t, x, nf, fallback):
    return np.cos(nf * t)


def _trig_u(t, x, nf, fallback):
    s = np.sin(t)
    return np.where(s != 0.0, np.sin((nf + 1) * t) / s, (nf + 1) * np.cos((nf + 1) * t) / x)


def _trig_v(t, x, nf, fallback):
    return np.where(np.sin(t / 2) != 1.0, np.cos((nf + 0.5) * t) / np.cos(t / 2), fallback)


def _trig_w(t, x, nf, fallback):
    return np.where(np.cos(t / 2) != 1.0, np.sin((nf + 0.5) * t) / np.sin(t / 2), fallback)


_TRIG = (_trig_t, _trig_u, _trig_v, _trig_w)


def _shifted_chebyshev(kind, x, n):
    """The shifted Chebyshev T*, U*, V* or W* (kind 0..3): the kind's polynomial at 2x - 1,
    with PyTorch's ends at x = 0 and 1 and its own switch to the trigonometric forms."""
    cases, nf, y = _Cases(np.broadcast_shapes(x.shape, n.shape)), n.astype(np.float64), x * 2 - 1
    odd = np.where(n % 2 == 0, 1.0, -1.0)
    at_one = (1.0, nf + 1, 1.0, 2 * nf + 1)[kind]
    at_zero = (odd, (nf + 1) * odd, (2 * nf + 1) * odd, odd)[kind]
    cases.settle(n < 0, 0.0)
    cases.settle(x == 1.0, at_one)
    cases.settle(x == 0.0, at_zero)
    with np.errstate(all="ignore"):
        t = np.arccos(y)
        # where the half-angle test fails, PyTorch's V* and W* give their values at 0
        trig = _TRIG[kind](t, y, nf, at_zero)
    cases.settle((n > (4 if kind == 3 else 6)) & (np.abs(y) < 1.0), trig)
    first = (y, y + y, y + y - 1.0, y + y + 1.0)[kind]
    cases.settle(n == 0, 1.0)
    cases.settle(n == 1, first)
    _recur(cases, y, n, np.ones_like(first), first, lambda j, y, p, q: (y + y) * q - p)
    return cases.out


def _hermite(probabilists, x, n, limit):
    cases = _Cases(np.broadcast_shapes(x.shape, n.shape))
    first = x if probabilists else x + x
    cases.settle(n < 0, 0.0)
    cases.settle(n == 0, 1.0)
    cases.settle(n == 1, first)
    cases.settle(n > limit, np.nan)
    if probabilists:
        _recur(cases, x, n, np.ones_like(x), first, lambda j, x, p, q: x * q - j * p)
    else:
        _recur(cases, x, n, np.ones_like(x), first, lambda j, x, p, q: (x + x) * q - 2 * j * p)
    return cases.out


def _laguerre(x, n):
    cases = _Cases(np.broadcast_shapes(x.shape, n.shape))
    cases.settle(n < 0, 0.0)
    cases.settle(x == 0.0, 1.0)
    cases.settle(n == 0, 1.0)
    cases.settle(n == 1, 1.0 - x)
    _recur(cases, x, n, np.ones_like(x), 1.0 - x,
           lambda j, x, p, q: ((2 * j + (1.0 - x)) * q - j * p) / (j + 1))
    return cases.out


def _legendre(x, n):
    cases = _Cases(np.broadcast_shapes(x.shape, n.shape))
    cases.settle(n < 0, 0.0)
    cases.settle(np.abs(x) == 1.0, np.where((x > 0) | (n % 2 == 0), 1.0, -1.0))
    cases.settle(n == 0, 1.0)
    cases.settle(n == 1, x)
    _recur(cases, x, n, np.ones_like(x), x,
           lambda j, x, p, q: ((2 * j + 1) * x * q - j * p) / (j + 1))
    return cases.out


def _polynomial(name, compute, input, n):
    """compute(x float64, n int64, dtype) on the broadcast operands, as a tensor of their
    dtype that does not require grad."""
    if not isinstance(input, autograd_op.Tensor) and not isinstance(n, autograd_op.Tensor):
        raise TypeError(f"special_{name}() received an invalid combination of arguments - got "
                        f"({type(input).__name__}, {type(n).__name__}), but expected one of: "
                        f"(Tensor x, Tensor n), (Number x, Tensor n), (Tensor x, Number n)")
    dtype = dtypes.computation_dtype((input, n), name, True)
    _no_half(name, np.empty(0, dtype))
    x_array, n_array = (v.detach()._array if isinstance(v, autograd_op.Tensor) else np.asarray(v)
                        for v in (input, n))
    try:
        np.broadcast_shapes(x_array.shape, n_array.shape)
    except ValueError:
        raise RuntimeError(_mismatch(x_array.shape, n_array.shape)) from None
    out = compute(x_array.astype(np.float64), _degrees(n_array), dtype)
    with np.errstate(over="ignore"):  # beyond float32's range: inf, as PyTorch's
        return autograd_op.Tensor._wrap(np.asarray(out.astype(dtype, copy=False)))


def _mismatch(a, b):
    """PyTorch's broadcasting error, at the first dim (from the right) that differs."""
    return size_mismatch(a, b) or f"shapes {a} and {b} cannot be broadcast together"


def _public(name, compute, doc):
    """The torch.special function `name`(x, n) computed by `compute(x, n, dtype)` (x is the
    name PyTorch gives its argument)."""
    def polynomial(x, n):
        return _polynomial(name, compute, x, n)
    polynomial.__name__ = polynomial.__qualname__ = name
    polynomial.__doc__ = doc + ", elementwise and broadcast (x or n may be a number)."
    return polynomial


def _limit(dtype):
    """Hermite's highest degree that PyTorch computes in dtype."""
    return 128 if dtype == np.float32 else 512


chebyshev_polynomial_t = _public("chebyshev_polynomial_t", lambda x, n, _: _chebyshev(0, x, n),
                                 "Chebyshev's polynomial of the first kind T_n(x)")
chebyshev_polynomial_u = _public("chebyshev_polynomial_u", lambda x, n, _: _chebyshev(1, x, n),
                                 "Chebyshev's polynomial of the second kind U_n(x)")
chebyshev_polynomial_v = _public("chebyshev_polynomial_v", lambda x, n, _: _chebyshev(2, x, n),
                                 "Chebyshev's polynomial of the third kind V_n(x)")
chebyshev_polynomial_w = _public("chebyshev_polynomial_w", lambda x, n, _: _chebyshev(3, x, n),
                                 "Chebyshev's polynomial of the fourth kind W_n(x)")
shifted_chebyshev_polynomial_t = _public(
    "shifted_chebyshev_polynomial_t", lambda x, n, _: _shifted_chebyshev(0, x, n),
    "T*_n(x) = T_n(2x - 1)")
shifted_chebyshev_polynomial_u = _public(
    "shifted_chebyshev_polynomial_u", lambda x, n, _: _shifted_chebyshev(1, x, n),
    "U*_n(x) = U_n(2x - 1)")
shifted_chebyshev_polynomial_v = _public(
    "shifted_chebyshev_polynomial_v", lambda x, n, _: _shifted_chebyshev(2, x, n),
    "V*_n(x) = V_n(2x - 1)")
shifted_chebyshev_polynomial_w = _public(
    "shifted_chebyshev_polynomial_w", lambda x, n, _: _shifted_chebyshev(3, x, n),
    "W*_n(x) = W_n(2x - 1)")
hermite_polynomial_h = _public("hermite_polynomial_h",
                               lambda x, n, dtype: _hermite(False, x, n, _limit(dtype)),
                               "The physicists' Hermite polynomial H_n(x)")
hermite_polynomial_he = _public("hermite_polynomial_he",
                                lambda x, n, dtype: _hermite(True, x, n, _limit(dtype)),
                                "The probabilists' Hermite polynomial He_n(x)")
laguerre_polynomial_l = _public("laguerre_polynomial_l", lambda x, n, _: _laguerre(x, n),
                                "Laguerre's polynomial L_n(x)")
legendre_polynomial_p = _public("legendre_polynomial_p", lambda x, n, _: _legendre(x, n),
                                "Legendre's polynomial P_n(x)")
