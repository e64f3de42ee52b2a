"""Logarithms with PyTorch's care at their edges: `logit` (the log-odds log(p / (1 - p)),
the inverse of sigmoid, with an optional clamp of p to [eps, 1 - eps]) and `xlogy`
(x * log(y), 0 where x is 0 even where log(y) is -inf, as entropies and KL divergences
need). logit is composed of differentiable ops (with eps its gradient is 0 outside the clamp,
as PyTorch's); xlogy is a sloped op, so its gradients can be differentiated again.
"""
from __future__ import annotations

import numpy as np

from .autograd import function
from .ops._sloped import Sloped, call, with_numbers
from .precise import _floating

__all__ = ["logit", "xlogy"]


def logit(input, eps=None):
    """log(p / (1 - p)), elementwise, with p = input clamped to [eps, 1 - eps] when eps is
    given (-inf at 0 and inf at 1 otherwise, NaN outside [0, 1])."""
    p = _floating(input)
    if eps is not None:
        p = p.clamp(eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):  # inf at 1, NaN outside, no warning
        return (p / (1 - p)).log()


def _xlogy(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y)).astype(np.result_type(x, y))


def _zero_where(mask, x):
    """0 where mask, x elsewhere, broadcast together (y's slope can be smaller than x's)."""
    if isinstance(x, function.Tensor):
        from .functional import where
        return where(mask, 0.0, x)
    return np.where(mask, 0.0, x).astype(x.dtype, copy=False)


class Xlogy(Sloped):
    fn = staticmethod(_xlogy)
    # d/dx = log(y) (0 where x is 0, as the value is), d/dy = x / y
    slopes = staticmethod(lambda out, x, y: (_zero_where(x == 0, call("log", y)), x / y))


class XlogyOfNumber(Xlogy):
    # with a number as other, PyTorch's gradient is log(other) everywhere, at input 0 too
    slopes = staticmethod(lambda out, x, y: (call("log", y), x / y))


def xlogy(input, other):
    """input * log(other), elementwise and broadcast, 0 where input is 0 (unless other is
    NaN); either may be a number (not both). Integer tensors give the default float dtype."""
    from .tensor_operators import binary
    op = Xlogy if isinstance(other, function.Tensor) else XlogyOfNumber
    return binary(op, "xlogy", *with_numbers("xlogy", input, other), floats=True)
