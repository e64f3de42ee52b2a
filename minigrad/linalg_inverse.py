"""The inverse of square matrices and the solution of linear systems: `linalg.inv` and
`linalg.solve` (with `torch.inverse` and `Tensor.inverse`), batched over leading dims,
computed by NumPy's LAPACK in the input's dtype.

With X = A^-1, dX = -X dA X, so the gradient of A is -X^T g X^T. With AX = B, the gradient
of B solves A^T gB = g and that of A is -gB X^T. Both are written again on tensors for
second derivatives, from the same ops, so gradients of any order follow. Complex matrices
take conjugate transposes in place of the transposes (first derivatives).
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import batch_failure, check_square, torch_dtype_name
from .linalg_forms import mH

__all__ = ["inv", "inverse", "solve"]


class Inv(Op):
    """(*, n, n) -> (*, n, n): the inverse of each matrix."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        check_square(a, "linalg.inv", complex=True)
        try:
            out = np.linalg.inv(a)
        except np.linalg.LinAlgError:
            raise batch_failure(a, np.linalg.inv, "linalg.inv", "The inversion could not be "
                                "completed because the input matrix is singular.") from None
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        x = mH(ctx.saved[0])
        return -(x @ g @ x)


class Solve(Op):
    """A (*, n, n) and B (*, n, k), batch dims broadcast: X (*, n, k) with AX = B."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, b):
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise batch_failure(a, np.linalg.inv, "torch.linalg.solve", "The solver failed "
                                "because the input matrix is singular.") from None
        ctx.save_for_backward(a, x)
        return x

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved
        gb = np.linalg.solve(mH(a), g)
        return (-(gb @ mH(x)) if ctx.needs_input_grad[0] else None), gb


@rule(Inv)
def _inv_rule(ctx, g):
    x = saved_output(ctx, ctx.saved[0]).transpose(-2, -1)
    return -(x @ g @ x)


@rule(Solve)
def _solve_rule(ctx, g):
    a, x = ctx.saved
    gb = Solve.apply(saved_input(ctx, 0, a).transpose(-2, -1), g)
    ga = -(gb @ saved_output(ctx, x).transpose(-2, -1)) if ctx.needs_input_grad[0] else None
    return ga, gb


@jvp_rule(Inv)
def _inv_jvp(ctx, out, tangents):
    return -(out @ tangents[0] @ out)


@jvp_rule(Solve)
def _solve_jvp(ctx, out, tangents):
    a, x = ctx.saved
    ta, tb = tangents
    rhs = (0 if tb is None else tb) - (0 if ta is None else ta @ x)
    return np.linalg.solve(a, np.broadcast_to(rhs, out.shape)).astype(out.dtype, copy=False)


# --- the functions -------------------------------------------------------------------------------

def inv(A):
    """The inverse of each square matrix of A (*, n, n); a singular one raises LinAlgError."""
    return Inv.apply(A)


def inverse(input):
    """`torch.inverse`: `linalg.inv`."""
    return Inv.apply(input)


def _vector_rhs(A, B):
    """Whether B is a (batch of) vector(s), as PyTorch decides: B 1-D, or B (*, n) with A
    (*, n, n) of the same batch shape."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True):
    """X with AX = B (left=True) or XA = B (left=False), for A (*, n, n) and B (*, n, k) or
    a vector B (n,) / (*, n); batch dims broadcast. A singular A raises LinAlgError."""
    from .tensor import Tensor
    if not isinstance(A, Tensor) or not isinstance(B, Tensor):
        raise TypeError(f"linalg.solve(): argument 'A' and 'B' must be Tensors, got "
                        f"{type(A).__name__} and {type(B).__name__}")
    check_square(A._array, "linalg.solve", complex=True)
    if A.dtype != B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {torch_dtype_name(A.dtype)} and B of type "
                           f"{torch_dtype_name(B.dtype)} instead")
    if B.ndim == 0:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    n = A.shape[-1]
    vector = _vector_rhs(A, B)
    given = (B.shape[-1], 1) if vector else tuple(B.shape[-2:])
    if B.ndim < 1 or given[0 if left else 1] != n or (vector and not left):  # as PyTorch: a
        # vector B is a column, which does not fit XA = B
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {given[0]}x{given[1]})")
    rhs = B.unsqueeze(-1) if vector else B
    if not left:  # XA = B is A^T X^T = B^T
        A, rhs = A.transpose(-2, -1), rhs.transpose(-2, -1)
    try:
        np.broadcast_shapes(A.shape[:-2], rhs.shape[:-2])
    except ValueError:
        raise RuntimeError(f"linalg.solve: the batch dims of A {tuple(A.shape)} and B "
                           f"{tuple(B.shape)} do not broadcast") from None
    X = Solve.apply(A, rhs)
    if vector:
        return X.squeeze(-1)
    return X if left else X.transpose(-2, -1)
