"""Solving with a Cholesky factor: `cholesky_solve` (X = A^-1 B for A = L L^T, or U^T U when
`upper`, given the factor) and `cholesky_inverse` (A^-1), batched with broadcast batch dims,
by two triangular substitutions that read only the factor's triangle (LAPACK's potrs).

Their gradients are PyTorch's, which differentiate A = L L^T in the whole factor: with
gB = A^-1 g and C = gB X^T + X gB^T, gL = -C L (gU = -U C), so the gradient reaches the
factor's other triangle too, as in PyTorch. The tensor rule repeats the formula with this
op, so it can be differentiated again. Forward mode is dX = A^-1 (dB - dA X) with
dA = dL L^T + L dL^T (PyTorch's tangents of `cholesky_inverse` differ: see
tests/compat_notes.py).
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_float, torch_dtype_name
from .linalg_forms import mT
from .linalg_triangular import _substitute

__all__ = ["cholesky_inverse", "cholesky_solve"]


def _solve(factor, b, upper):
    """A^-1 b for A = L L^T (U^T U when `upper`)."""
    first = _substitute(mT(factor) if upper else factor, b, False, False)
    return _substitute(factor if upper else mT(factor), first, True, False)


class CholeskySolve(Op):
    """B (*, n, k) and the factor (*, n, n), batch dims broadcast -> X (*, n, k)."""

    @staticmethod
    def forward(ctx, b, factor, upper=False):
        ctx.upper = upper
        x = _solve(factor, b, upper)
        ctx.save_for_backward(factor, x)
        return x

    @staticmethod
    def backward(ctx, g):
        factor, x = ctx.saved
        gb = _solve(factor, g, ctx.upper)
        if not ctx.needs_input_grad[1]:
            return gb, None
        common = gb @ mT(x)
        common = common + mT(common)
        return gb, -(factor @ common if ctx.upper else common @ factor)


@rule(CholeskySolve)
def _cholesky_solve_rule(ctx, g):
    factor, x = ctx.saved
    ft = saved_input(ctx, 1, factor)
    gb = CholeskySolve.apply(g, ft, upper=ctx.upper)
    if not ctx.needs_input_grad[1]:
        return gb, None
    common = gb @ saved_output(ctx, x).transpose(-2, -1)
    common = common + common.transpose(-2, -1)
    return gb, -(ft @ common if ctx.upper else common @ ft)


@jvp_rule(CholeskySolve)
def _cholesky_solve_jvp(ctx, out, tangents):
    """dX = A^-1 (dB - dA X), dA = dL L^T + L dL^T (dU^T U + U^T dU)."""
    factor, x = ctx.saved
    tb, tf = tangents
    rhs = np.zeros(out.shape, out.dtype) if tb is None else np.broadcast_to(tb, out.shape)
    if tf is not None:
        part = (mT(tf) @ factor) if ctx.upper else (tf @ mT(factor))
        rhs = rhs - (part + mT(part)) @ x
    return _solve(factor, np.broadcast_to(rhs, out.shape), ctx.upper).astype(out.dtype)


def _check(op, factor, b=None):
    if factor.ndim < 2 or factor.shape[-1] != factor.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are of shape "
                           f"{tuple(factor.shape)}")
    check_float(factor._array, op)
    if b is None:
        return
    if b.ndim < 2:
        raise RuntimeError(f"{op}: b should have at least 2 dimensions, but has {b.ndim} "
                           f"dimensions instead")
    if b.dtype != factor.dtype:
        raise RuntimeError(f"{op}: Expected b and A to have the same dtype, but found b of type "
                           f"{torch_dtype_name(b.dtype)} and A of type "
                           f"{torch_dtype_name(factor.dtype)} instead.")
    if b.shape[-2] != factor.shape[-1]:
        raise RuntimeError(f"{op}: Incompatible matrix sizes for cholesky_solve: each A matrix "
                           f"is {factor.shape[-1]} by {factor.shape[-1]} but each b matrix is "
                           f"{b.shape[-2]} by {b.shape[-1]}")


def cholesky_solve(B, L, upper=False):
    """X (*, n, k) with A X = B, A = L L^T given its Cholesky factor L (*, n, n) (A = U^T U
    when `upper`); batch dims broadcast."""
    _check("cholesky_solve", L, B)
    return CholeskySolve.apply(B, L, upper=upper)


def cholesky_inverse(L, upper=False):
    """A^-1 (*, n, n) for A = L L^T (U^T U when `upper`) given its Cholesky factor."""
    from .tensor import Tensor
    _check("cholesky_inverse", L)
    eye = np.broadcast_to(np.eye(L.shape[-1], dtype=L.dtype), L.shape).copy()
    return CholeskySolve.apply(Tensor._wrap(eye), L, upper=upper)
