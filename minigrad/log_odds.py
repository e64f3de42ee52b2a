"""Logarithms with PyTorch's care at their edges: `logit` (the log-odds log(p / (1 - p)),
the inverse of sigmoid, with an optional clamp of p to [eps, 1 - eps]), `xlogy`
(x * log(y), 0 where x is 0 even where log(y) is -inf, as entropies and KL divergences
need), `xlog1py` (x * log1p(y), likewise) and `entr` (-x log x, 0 at 0, -inf below).
All are sloped ops, so their gradients can be differentiated again (logit with eps is
composed of clamp and log, so its gradient is 0 outside the clamp, as PyTorch's).
"""
from __future__ import annotations

import numpy as np

from .autograd import op as autograd_op
from .graph_rules import rule, saved_input
from .ops._sloped import Sloped, call, unary, with_numbers
from .precise import _floating

__all__ = ["entr", "logit", "xlog1py", "xlogy"]


def _logit(p):
    with np.errstate(divide="ignore", invalid="ignore"):  # inf at 1, NaN outside, no warning
        return np.log(p / (1 - p)).astype(p.dtype, copy=False)


def _nan_where(mask, x):
    """NaN where mask, x elsewhere."""
    if isinstance(x, autograd_op.Tensor):
        return x.masked_fill(mask, float("nan"))
    return np.where(mask, np.nan, x).astype(x.dtype, copy=False)


class Logit(Sloped):
    fn = staticmethod(_logit)
    # 1 / (p (1 - p)), NaN outside [0, 1] as PyTorch's (where the value is NaN too)
    slopes = staticmethod(lambda out, p: (_nan_where((p < 0) | (p > 1), 1 / (p * (1 - p))),))


def logit(input, eps=None):
    """log(p / (1 - p)), elementwise, with p = input clamped to [eps, 1 - eps] when eps is
    given (-inf at 0 and inf at 1 otherwise, NaN outside [0, 1])."""
    p = _floating(input)
    if eps is None:
        return Logit.apply(p)
    p = p.clamp(eps, 1.0 - eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p / (1 - p)).log()


def _xlogy(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log(y)).astype(np.result_type(x, y))


def _xlog1py(x, y):
    return np.where((x == 0) & ~np.isnan(y), 0.0, x * np.log1p(y)).astype(np.result_type(x, y))


def _entr(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, -x * np.log(np.where(x > 0, x, 1)),
                        np.where(x == 0, 0.0, np.where(np.isnan(x), x, -np.inf))).astype(x.dtype)


def _zero_where(mask, x):
    """0 where mask, x elsewhere, broadcast together (y's slope can be smaller than x's)."""
    if isinstance(x, autograd_op.Tensor):
        from .functional import where
        return where(mask, 0.0, x)
    return np.where(mask, 0.0, x).astype(x.dtype, copy=False)


def _toward_x(g, x, y, log, edge):
    """PyTorch's gradient of xlogy (log1p: xlog1py) toward x: xlogy(g, y), which is 0 where
    g is 0 (unless y is NaN) even where log(y) is not finite, and 0 where x is 0 and
    y <= edge (where the value is 0 and log(y) is -inf or NaN)."""
    if isinstance(g, autograd_op.Tensor):
        from .functional import where
        along = where((g == 0) & ~y.isnan(), 0.0, g * call(log, y))
        return where((x == 0) & (y <= edge), 0.0, along)
    along = np.where((g == 0) & ~np.isnan(y), 0.0, g * call(log, y))
    return np.where((x == 0) & (y <= edge), 0.0, along).astype(g.dtype, copy=False)


def _log_product_backward(log, edge):
    """backward and tensor-level rule of x log(y) (log1p: x log1p(y)), both inputs tensors."""
    def backward(ctx, g):
        _, x, y = ctx.saved
        need = ctx.needs_input_grad
        with np.errstate(all="ignore"):
            return (_toward_x(g, x, y, log, edge) if need[0] else None,
                    g * x / (y if log == "log" else 1 + y) if need[1] else None)

    def tensor_rule(ctx, g):
        _, x, y = ctx.saved
        x, y = saved_input(ctx, 0, x), saved_input(ctx, 1, y)
        need = ctx.needs_input_grad
        with np.errstate(all="ignore"):
            return (_toward_x(g, x, y, log, edge) if need[0] else None,
                    g * x / (y if log == "log" else 1 + y) if need[1] else None)
    return staticmethod(backward), tensor_rule


class Xlogy(Sloped):
    fn = staticmethod(_xlogy)
    # d/dx = log(y), 0 where x is 0 and log(y) is -inf or NaN (y <= 0), as PyTorch's; d/dy = x / y
    slopes = staticmethod(lambda out, x, y: (_zero_where((x == 0) & (y <= 0), call("log", y)),
                                             x / y))


Xlogy.backward, _xlogy_rule = _log_product_backward("log", 0)
rule(Xlogy)(_xlogy_rule)


class XlogyOfNumber(Xlogy):
    # with a number as other, PyTorch's gradient is log(other) everywhere, at input 0 too
    slopes = staticmethod(lambda out, x, y: (call("log", y), x / y))
    backward = staticmethod(Sloped.backward)


class Xlog1py(Sloped):
    fn = staticmethod(_xlog1py)
    slopes = staticmethod(lambda out, x, y: (_zero_where((x == 0) & (y <= -1), call("log1p", y)),
                                             x / (1 + y)))


Xlog1py.backward, _xlog1py_rule = _log_product_backward("log1p", -1)
rule(Xlog1py)(_xlog1py_rule)


class Xlog1pyOfNumber(Xlog1py):
    slopes = staticmethod(lambda out, x, y: (call("log1p", y), x / (1 + y)))
    backward = staticmethod(Sloped.backward)


class Entr(Sloped):
    fn = staticmethod(_entr)
    # -(1 + log x): inf at 0, NaN below, as PyTorch's
    slopes = staticmethod(lambda out, x: (-(call("log", x) + 1),))


def xlogy(input, other):
    """input * log(other), elementwise and broadcast, 0 where input is 0 (unless other is
    NaN); either may be a number (not both). Integer tensors give the default float dtype."""
    from .tensor_operators import binary
    op = Xlogy if isinstance(other, autograd_op.Tensor) else XlogyOfNumber
    return binary(op, "xlogy", *with_numbers("xlogy", input, other), floats=True)


def xlog1py(input, other):
    """input * log1p(other), elementwise and broadcast, 0 where input is 0 (unless other is
    NaN); either may be a number (not both)."""
    from .tensor_operators import binary
    op = Xlog1py if isinstance(other, autograd_op.Tensor) else Xlog1pyOfNumber
    return binary(op, "xlog1py", *with_numbers("xlog1py", input, other), floats=True)


def entr(input):
    """-x log x, elementwise: 0 at 0, -inf for x < 0 (the entropy's summand)."""
    return unary(Entr, "entr", input)
