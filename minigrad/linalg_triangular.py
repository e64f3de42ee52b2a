"""Triangular systems: `linalg.solve_triangular`, X with AX = B (or XA = B) for a triangular A,
of which only the triangle named by `upper` is read (and not its diagonal, taken as ones, when
`unitriangular`).

The solution is found by substitution, one row at a time over the whole batch, as LAPACK's
trsm does, so a zero on the diagonal gives inf and NaN rather than an error, as in PyTorch.
The gradient of B solves the transposed system, A^T gB = g, and that of A is -gB X^T kept
to the triangle read (the other elements never entered the result).
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_square, torch_dtype_name
from .linalg_forms import mT

__all__ = ["solve_triangular"]


def _substitute(a, b, upper, unit):
    """X (*, n, k) with AX = B for triangular a (*, n, n), b (*, n, k), batch dims broadcast."""
    n = a.shape[-1]
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:]
    x = np.zeros(shape, np.result_type(a, b))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for i in (reversed(range(n)) if upper else range(n)):
            done = slice(i + 1, n) if upper else slice(0, i)
            row = b[..., i, :] - (a[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
            x[..., i, :] = row if unit else row / a[..., i, i, None]
    return x


def _triangle(g, upper, unit, on_tensors=False):
    """The part of a gradient (*, n, n) on the triangle of A that the solve reads."""
    k = (1 if upper else -1) if unit else 0
    if on_tensors:
        return g.triu(k) if upper else g.tril(k)
    return np.triu(g, k) if upper else np.tril(g, k)


class TriangularSolve(Op):
    """A (*, n, n) triangular and B (*, n, k), batch dims broadcast: X (*, n, k), AX = B."""

    @staticmethod
    def forward(ctx, a, b, upper=False, unit=False):
        ctx.upper, ctx.unit = upper, unit
        x = _substitute(a, b, upper, unit)
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved
        gb = _substitute(mT(a), g, not ctx.upper, ctx.unit)
        ga = _triangle(-(gb @ mT(x)), ctx.upper, ctx.unit) if ctx.needs_input_grad[0] else None
        return ga, gb


@rule(TriangularSolve)
def _triangular_solve_rule(ctx, g):
    a, x = ctx.saved
    gb = TriangularSolve.apply(saved_input(ctx, 0, a).transpose(-2, -1), g,
                               upper=not ctx.upper, unit=ctx.unit)
    if not ctx.needs_input_grad[0]:
        return None, gb
    product = -(gb @ saved_output(ctx, x).transpose(-2, -1))
    return _triangle(product, ctx.upper, ctx.unit, on_tensors=True), gb


@jvp_rule(TriangularSolve)
def _triangular_solve_jvp(ctx, out, tangents):
    a, x = ctx.saved
    ta, tb = tangents
    rhs = 0 if tb is None else tb
    if ta is not None:
        rhs = rhs - _triangle(ta, ctx.upper, ctx.unit) @ x
    return _substitute(a, np.broadcast_to(rhs, out.shape), ctx.upper, ctx.unit).astype(out.dtype)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with AX = B (left=True) or XA = B, A (*, n, n) triangular (its upper triangle if
    `upper`, else its lower; ones on its diagonal if `unitriangular`) and B (*, n, k) (or
    (*, k, n) for left=False), batch dims broadcast."""
    op = "linalg.solve_triangular"
    check_square(A._array, op)
    if B.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor B must have at least 2 dimensions.")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected A and B to have the same dtype, but found A of "
                           f"type {torch_dtype_name(A.dtype)} and B of type "
                           f"{torch_dtype_name(B.dtype)} instead")
    n = A.shape[-1]
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B.shape[-2]}x"
                           f"{B.shape[-1]})")
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of A {tuple(A.shape)} and B "
                           f"{tuple(B.shape)} do not broadcast") from None
    if left:
        return TriangularSolve.apply(A, B, upper=upper, unit=unitriangular)
    # XA = B is A^T X^T = B^T, and A^T is triangular the other way
    return TriangularSolve.apply(A.transpose(-2, -1), B.transpose(-2, -1), upper=not upper,
                                 unit=unitriangular).transpose(-2, -1)
