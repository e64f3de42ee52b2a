"""Running scans along a dim beyond cumsum and cumprod: `cummax` and `cummin` (the running
extreme and where it was reached) and `logcumsumexp` (running log-sum-exp).

cummax's values are the input gathered at the running indices, so the gradient goes to the
element each output came from, as PyTorch's. Ties go to the later element and a NaN, once met,
stays the running value (with its index), as in PyTorch.

logcumsumexp is NumPy's `logaddexp.accumulate`, which never overflows. Its gradient,
d out_i / d x_j = exp(x_j - out_i) for j <= i, is summed from the end as PyTorch sums it: the
incoming gradient split into its positive and negative parts, each accumulated in log space."""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .ops.shape import normalize_dim
from .tensor import Tensor

__all__ = ["cummax", "cummin", "logcumsumexp"]


def _dim(input, dim, op):
    """dim as a non-negative int (0 for a 0-d tensor, which accepts 0 and -1)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be Tensor, not {type(input).__name__}")
    return normalize_dim(dim, max(input.ndim, 1), op) if input.ndim else 0


def _running_index(a, d, later):
    """Per position along dim d, the index of the running extreme: `later(v, best)` says
    where a new element v takes over; a NaN always does, and once met is never replaced."""
    a = np.moveaxis(a, d, -1)
    index = np.zeros(a.shape, np.int64)
    if a.shape[-1] == 0:
        return np.moveaxis(index, -1, d)
    best, at = a[..., 0].copy(), np.zeros(a.shape[:-1], np.int64)
    for i in range(1, a.shape[-1]):
        v = a[..., i]
        with np.errstate(invalid="ignore"):
            take = np.isnan(v) | (~np.isnan(best) & later(v, best)) if a.dtype.kind == "f" \
                else later(v, best)
        best, at = np.where(take, v, best), np.where(take, i, at)
        index[..., i] = at
    return np.moveaxis(index, -1, d)


def _extreme(input, dim, op, later, pair):
    d = _dim(input, dim, op)
    if input.ndim == 0:
        return pair(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    index = _running_index(input._array, d, later)
    return pair(input.gather(d, index), Tensor._wrap(index))


def cummax(input, dim):
    """(values, indices): the running maximum along dim and the index where it was reached."""
    return _extreme(input, dim, "cummax", np.greater_equal, return_types.cummax)


def cummin(input, dim):
    """(values, indices): the running minimum along dim and the index where it was reached."""
    return _extreme(input, dim, "cummin", np.less_equal, return_types.cummin)


def _log_parts(g, lowest):
    """log|g| where g > 0 and where g < 0, the lowest float elsewhere (not -inf, whose
    differences would be NaN)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        log_abs = np.log(np.abs(g))
    return [np.where(s * g > 0, log_abs, lowest) for s in (1, -1)]


def _accumulate(z, d, reverse=False):
    """logaddexp accumulated along dim d (from the end with `reverse`)."""
    if reverse:
        return np.flip(np.logaddexp.accumulate(np.flip(z, d), axis=d), d)
    return np.logaddexp.accumulate(z, axis=d)


class LogCumSumExp(Op):
    @staticmethod
    def forward(ctx, a, dim=0):
        ctx.dim = dim
        out = np.logaddexp.accumulate(a, axis=dim) if a.ndim else a.copy()
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved
        if a.ndim == 0:
            return g
        with np.errstate(invalid="ignore", over="ignore"):
            up, down = (np.exp(_accumulate(p - out, ctx.dim, reverse=True) + a)
                        for p in _log_parts(g, np.finfo(g.dtype).min))
            return up - down


@rule(LogCumSumExp)
def _logcumsumexp(ctx, g):
    """backward's sum with differentiable ops (logcumsumexp itself among them)."""
    a, out = ctx.saved
    if a.ndim == 0:
        return g
    x, y, d = saved_input(ctx, 0, a), saved_output(ctx, out), ctx.dim
    lowest = float(np.finfo(g.dtype).min)
    log_abs = g.abs().log()
    parts = [log_abs.masked_fill(~(sign * g > 0), lowest) for sign in (1, -1)]
    up, down = ((logcumsumexp((p - y).flip(d), d).flip(d) + x).exp() for p in parts)
    return up - down


@jvp_rule(LogCumSumExp)
def _logcumsumexp_jvp(ctx, out, tangents):
    """out_i's tangent, the sum over j <= i of t_j exp(x_j - out_i), in log space as backward."""
    a, _ = ctx.saved
    t = np.broadcast_to(tangents[0], out.shape).astype(out.dtype)
    if a.ndim == 0:
        return t
    with np.errstate(invalid="ignore", over="ignore"):
        up, down = (np.exp(_accumulate(p + a, ctx.dim) - out)
                    for p in _log_parts(t, np.finfo(out.dtype).min))
        return up - down


def logcumsumexp(input, dim):
    """log(exp(x_0) + ... + exp(x_i)) along dim, without overflow, for float tensors."""
    d = _dim(input, dim, "logcumsumexp")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"logcumsumexp: not implemented for {input.dtype} tensors "
                                  f"(convert with .float())")
    return LogCumSumExp.apply(input, dim=d)
