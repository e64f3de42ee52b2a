"""The regularised incomplete gamma functions of torch.special: `gammainc(a, x)` = P(a, x) =
gamma(a, x) / Gamma(a), the lower one (the gamma and chi-squared distributions' CDF), and
`gammaincc(a, x)` = Q(a, x) = 1 - P(a, x), the upper one; elementwise and broadcast.

Computed in float64 and rounded to the operands' dtype, each where it converges fast and
without cancellation, the other as 1 minus it:
- for x < a + 1, P by its series x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)),
  whose terms are positive;
- for x >= a + 1, Q by Legendre's continued fraction x^a e^-x / Gamma(a) / (x + 1 - a -
  1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))), evaluated by the modified Lentz
  method;
with the prefactor x^a e^-x / Gamma(a) taken as exp(a log x - x - lgamma(a)) (its rounding
costs about a * 2^-53 relatively, as in PyTorch's for a below 200). As in PyTorch: NaN for
a < 0 or x < 0, where either is NaN and at (0, 0) and (inf, inf); P(0, x) = 1 for x > 0,
P(a, 0) = 0 for a > 0, P(a, inf) = 1 and P(inf, x) = 0. Both operands must be tensors of a
floating dtype after promotion (float16 included), as in PyTorch.

Their gradient in x is +-x^(a - 1) e^-x / Gamma(a); PyTorch has none in a, so backward
raises where a requires grad.
"""
from __future__ import annotations

import numpy as np

from . import dtypes, kernels
from .autograd.op import Op
from .graph_rules import rule, saved_input

__all__ = ["gammainc", "gammaincc"]

_EPS, _TINY, _TERMS = 2.0 ** -53, 1e-300, 2000


def _log_prefactor(a, x):
    """log(x^a e^-x / Gamma(a))."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return a * np.log(x) - x - kernels.lgamma(a)


def _lower_series(a, x):
    """P(a, x) for x < a + 1."""
    term, total, n = np.ones_like(a), np.ones_like(a), a.copy()
    live = np.ones(a.shape, bool)
    for _ in range(_TERMS):
        if not live.any():
            break
        n = n + 1.0
        term = np.where(live, term * x / n, term)
        total = np.where(live, total + term, total)
        live &= term > total * _EPS
    return np.exp(_log_prefactor(a, x)) / a * total


def _upper_fraction(a, x):
    """Q(a, x) for x >= a + 1, by the modified Lentz method."""
    b = x + 1.0 - a
    c = np.full_like(a, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    live = np.ones(a.shape, bool)
    for i in range(1, _TERMS):
        if not live.any():
            break
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = np.where(np.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        step = d * c
        h = np.where(live, h * step, h)
        live &= np.abs(step - 1.0) > _EPS
    return np.exp(_log_prefactor(a, x)) * h


def gammainc_array(a, x, upper=False):
    """P(a, x), or Q(a, x) when upper, of two float64 arrays of one shape."""
    p = np.full(a.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a >= 0) & (x >= 0)
        p[ok & (x == 0) & (a > 0)] = 0.0
        p[ok & (a == 0) & (x > 0)] = 1.0
        p[ok & (x == np.inf) & (a < np.inf)] = 1.0
        p[ok & (a == np.inf) & (x < np.inf)] = 0.0
        inside = ok & (a > 0) & (x > 0) & np.isfinite(x) & np.isfinite(a)
        low = inside & (x < a + 1)
        high = inside & ~low
        p[low] = _lower_series(a[low], x[low])
        q_high = _upper_fraction(a[high], x[high])
        if not upper:
            p[high] = 1.0 - q_high
            return p
        q = np.array(1.0 - p)  # (an array for 0-d p too, where 1 - p is a scalar)
        q[high] = q_high
    return q


def _values(a, x, upper):
    shape = np.broadcast_shapes(a.shape, x.shape)
    av, xv = (np.broadcast_to(v, shape).astype(np.float64) for v in (a, x))
    return gammainc_array(av, xv, upper).astype(np.result_type(a, x), copy=False)


def _slope(a, x):
    """d P(a, x) / dx = x^(a - 1) e^-x / Gamma(a), as a float64 array."""
    a, x = (np.asarray(v, np.float64) for v in (a, x))
    with np.errstate(all="ignore"):
        return np.exp(_log_prefactor(a, x) - np.log(x))


class Gammainc(Op):
    @staticmethod
    def forward(ctx, a, x, upper=False):
        ctx.save_for_backward(a, x)
        ctx.upper = upper
        return _values(a, x, upper)

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        slope = _slope(a, x).astype(g.dtype, copy=False)
        return None, g * (-slope if ctx.upper else slope)


@rule(Gammainc)
def _gammainc_rule(ctx, g):
    if ctx.needs_input_grad[0]:
        raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
    a, x = (saved_input(ctx, i, v) for i, v in enumerate(ctx.saved))
    from .gamma_functions import lgamma
    slope = (a * x.log() - x - lgamma(a) - x.log()).exp()
    return None, g * (-slope if ctx.upper else slope)


def _apply(name, input, other, upper):
    from .autograd.op import Tensor
    from .linalg_checks import torch_dtype_name
    from .tensor_operators import binary
    for arg, value in (("input", input), ("other", other)):
        if not isinstance(value, Tensor):
            raise TypeError(f"special_{'gammaincc' if upper else 'gammainc'}(): argument "
                            f"'{arg}' must be Tensor, not {type(value).__name__}")
    dtype = dtypes.computation_dtype((input, other), name)
    if dtype.kind != "f":  # as PyTorch's kernel, which takes floating dtypes only
        raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                  f"'{torch_dtype_name(dtype)}'")
    return binary(_Upper if upper else Gammainc, name, input, other)


class _Upper(Gammainc):
    @staticmethod
    def forward(ctx, a, x):
        return Gammainc.forward(ctx, a, x, upper=True)


rule(_Upper)(_gammainc_rule)


def gammainc(input, other):
    """P(a, x), the regularised lower incomplete gamma function, elementwise and broadcast
    (input is a, other is x)."""
    return _apply("igamma", input, other, upper=False)


def gammaincc(input, other):
    """Q(a, x) = 1 - P(a, x), the regularised upper incomplete gamma function, elementwise
    and broadcast (input is a, other is x)."""
    return _apply("igammac", input, other, upper=True)
