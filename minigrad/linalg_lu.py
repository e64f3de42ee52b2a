"""The LU factorization with partial pivoting: `linalg.lu_factor` (LU packed in one matrix and
LAPACK's 1-based pivots), `linalg.lu_factor_ex` (with `info`), `linalg.lu` (P, L, U) and
`linalg.lu_solve`, batched over leading dims, for A (*, m, n), k = min(m, n): A = P L U with
L (*, m, k) unit lower triangular and U (*, k, n) upper triangular.

The factorization is LAPACK's getf2 written out over the whole batch, one column at a time:
the pivot is the first entry of largest magnitude (as idamax chooses), so P is PyTorch's; a
zero pivot is left unscaled and reported in `info` (its 1-based column), as getrf does.

Gradients (PyTorch's `linalg_lu_backward`), with gL and gU the gradients of L and U:
- m = n: gA = P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T;
- m < n, U = [U1 | U2]: gA = P L^-T [(tril(L^T gL - gU2 U2^T, -1) + triu(gU1 U1^T)) U1^-T
  | gU2];
- m > n, L = [L1; L2]: gA = P [L1^-T (tril(L1^T gL1, -1) + triu(gU U^T - L2^T gL2)); gL2] U^-T.
They are written once for arrays and tensors (triangular solves by `linalg_triangular.py`),
so the tensor form gives every order. `lu_solve` is composed of triangular solves.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_matrix, torch_dtype_name
from .linalg_forms import OnArrays, OnTensors, mT
from .linalg_triangular import TriangularSolve, _substitute

__all__ = ["lu", "lu_factor", "lu_factor_ex", "lu_solve", "permutations", "unpack"]


def factor(a: np.ndarray):
    """(LU (*, m, n), pivots (*, k) int32 1-based, info (*) int32) of a (*, m, n)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu = a.reshape((int(np.prod(batch)), m, n)).copy()
    pivots = np.zeros((lu.shape[0], k), np.int32)
    info = np.zeros(lu.shape[0], np.int32)
    rows = np.arange(lu.shape[0])
    for j in range(k):
        p = j + np.argmax(np.abs(lu[:, j:, j]), -1)
        pivots[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j], lu[rows, p] = lu[rows, p], top
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = np.where((info == 0) & zero, j + 1, info)
        scale = np.where(zero, 1, pivot)  # a zero pivot's column is zero below it: left so
        lu[:, j + 1:, j] /= scale[:, None]
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return lu.reshape(a.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def permutations(pivots: np.ndarray, m: int) -> np.ndarray:
    """P (*, m, m) from 1-based pivots (*, k): A = P L U, row i of A is row perm[i] of L U."""
    perm = np.broadcast_to(np.arange(m), pivots.shape[:-1] + (m,)).copy()
    count = int(np.prod(pivots.shape[:-1]))
    flat, piv = perm.reshape(count, m), pivots.reshape(count, pivots.shape[-1]) - 1
    rows = np.arange(flat.shape[0])
    for j in range(piv.shape[-1]):
        top = flat[rows, j].copy()
        flat[rows, j], flat[rows, piv[:, j]] = flat[rows, piv[:, j]], top
    # perm[i] is the row of A that became row i; P has a one at (perm[i], i)
    out = np.zeros(pivots.shape[:-1] + (m, m))
    np.put_along_axis(out, perm[..., None, :], 1.0, -2)
    return out


class _OnArrays(OnArrays):
    tril = staticmethod(np.tril)
    triu = staticmethod(np.triu)

    @staticmethod
    def solve(a, b, upper, left=True, unit=False):
        if left:
            return _substitute(a, b, upper, unit)
        return mT(_substitute(mT(a), mT(b), not upper, unit))

    @staticmethod
    def cat(parts, dim):
        return np.concatenate(parts, dim)


class _OnTensors(OnTensors):
    tril = staticmethod(lambda t, k=0: t.tril(k))
    triu = staticmethod(lambda t, k=0: t.triu(k))

    @staticmethod
    def solve(a, b, upper, left=True, unit=False):
        if left:
            return TriangularSolve.apply(a, b, upper=upper, unit=unit)
        return TriangularSolve.apply(a.transpose(-2, -1), b.transpose(-2, -1), upper=not upper,
                                     unit=unit).transpose(-2, -1)

    @staticmethod
    def cat(parts, dim):
        from .functional import cat
        return cat(parts, dim)


def unpack(lu, on):
    """L (*, m, k) unit lower triangular and U (*, k, n) from the packed LU (*, m, n)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    eye = on.constant(np.eye(m, k, dtype=lu.dtype))
    return on.tril(lu[..., :, :k], -1) + eye, on.triu(lu[..., :k, :])


def _gradient(p, low, up, g_low, g_up, on):
    """gA of A = P L U from L (*, m, k), U (*, k, n) and their gradients; P (*, m, m)."""
    m, n = low.shape[-2], up.shape[-1]
    lt, ut = on.mT(low), on.mT(up)
    if m == n:
        inner = on.tril(lt @ g_low, -1) + on.triu(g_up @ ut)
        inner = on.solve(ut, inner, upper=False, left=False)
        return p @ on.solve(lt, inner, upper=True, unit=True)
    if m < n:  # A = [L U1 | L U2]
        u1, u2, g_u1, g_u2 = up[..., :m], up[..., m:], g_up[..., :m], g_up[..., m:]
        inner = on.tril(lt @ g_low - g_u2 @ on.mT(u2), -1) + on.triu(g_u1 @ on.mT(u1))
        inner = on.cat([on.solve(on.mT(u1), inner, upper=False, left=False), g_u2], -1)
        return p @ on.solve(lt, inner, upper=True, unit=True)
    l1t, l2 = on.mT(low[..., :n, :]), low[..., n:, :]  # A = [L1 U; L2 U]
    g_l1, g_l2 = g_low[..., :n, :], g_low[..., n:, :]
    inner = on.tril(l1t @ g_l1, -1) + on.triu(g_up @ ut - on.mT(l2) @ g_l2)
    inner = on.cat([on.solve(l1t, inner, upper=True, unit=True), g_l2], -2)
    return p @ on.solve(ut, inner, upper=False, left=False)


class LUFactor(Op):
    """(*, m, n) -> LU (*, m, n): L below the diagonal (its ones implied), U on and above."""

    @staticmethod
    def forward(ctx, a, factored=None):
        lu, ctx.pivots, _ = factor(a) if factored is None else factored
        ctx.save_for_backward(lu)
        return lu

    @staticmethod
    def backward(ctx, g):
        lu = ctx.saved[0]
        k = min(lu.shape[-2:])
        low, up = unpack(lu, _OnArrays)
        p = permutations(ctx.pivots, lu.shape[-2]).astype(lu.dtype)
        return _gradient(p, low, up, g[..., :, :k], g[..., :k, :], _OnArrays)


@rule(LUFactor)
def _lu_factor_rule(ctx, g):
    lu = saved_output(ctx, ctx.saved[0])
    k = min(lu.shape[-2:])
    low, up = unpack(lu, _OnTensors)
    p = OnTensors.constant(permutations(ctx.pivots, lu.shape[-2]).astype(lu.dtype))
    return _gradient(p, low, up, g[..., :, :k], g[..., :k, :], _OnTensors)


@jvp_rule(LUFactor)
def _lu_factor_jvp(ctx, out, tangents):
    """With X = L1^-1 (P^T dA)_11 U1^-1 (the leading k x k blocks): dL1 = L1 tril(X, -1) and
    dU1 = triu(X) U1; then dL2 = ((P^T dA)_2 - L2 dU) U^-1 (tall) or
    dU2 = L^-1 ((P^T dA)_2 - dL U2) (wide)."""
    lu = ctx.saved[0]
    m, n = lu.shape[-2:]
    k, on = min(m, n), _OnArrays
    low, up = unpack(lu, on)
    ta = mT(permutations(ctx.pivots, m)) @ np.asarray(tangents[0])
    l1, u1 = low[..., :k, :], up[..., :, :k]
    x = on.solve(l1, on.solve(u1, ta[..., :k, :k], upper=True, left=False), upper=False,
                 unit=True)
    d_low, d_up = l1 @ np.tril(x, -1), np.triu(x) @ u1
    if m > n:
        tail = on.solve(up, ta[..., n:, :] - low[..., n:, :] @ d_up, upper=True, left=False)
        d_low = np.concatenate([d_low, tail], -2)
    elif m < n:
        tail = on.solve(low, ta[..., :, m:] - d_low @ up[..., :, m:], upper=False, unit=True)
        d_up = np.concatenate([d_up, tail], -1)
    tangent = np.zeros(out.shape, out.dtype)
    tangent[..., :, :k] += np.tril(d_low, -1)
    tangent[..., :k, :] += np.triu(d_up)
    return tangent


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """(LU (*, m, n), pivots (*, k) int32, info (*) int32) with A = P L U; info > 0 names the
    1-based column of the first zero pivot (U singular), and raises when `check_errors`."""
    return _lu_factor_ex(A, pivot, check_errors, "linalg.lu_factor_ex")


def _lu_factor_ex(A, pivot, check_errors, op):
    from .tensor import Tensor
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting is not implemented on the CPU (A of "
                           f"shape {tuple(A.shape)})")
    check_matrix(A._array, op)
    factored = factor(A._array)
    lu = LUFactor.apply(A, factored=factored)
    _, pivots, info = factored
    if check_errors and info.any():
        where = ""
        if info.ndim:
            first = int(np.flatnonzero(info.reshape(-1))[0])
            where, info_first = f"(Batch element {first}): ", int(info.reshape(-1)[first])
        else:
            info_first = int(info)
        raise RuntimeError(f"torch.{op}: {where}U[{info_first},{info_first}] is zero and using "
                           f"it on lu_solve would result in a division by zero. If you still "
                           f"want to perform the factorization, consider calling linalg.lu(A, "
                           f"pivot) or linalg.lu_factor_ex(A, pivot)")
    return return_types.linalg_lu_factor_ex(lu, Tensor._wrap(pivots), Tensor._wrap(info))


def lu_factor(A, *, pivot=True):
    """(LU (*, m, n), pivots (*, k) int32) with A = P L U, L's strict lower part and U packed
    in LU. A zero pivot (a singular U) raises a RuntimeError, as in PyTorch; `lu_factor_ex`
    and `lu` return such factors."""
    lu, pivots, _ = _lu_factor_ex(A, pivot, True, "linalg.lu_factor")
    return return_types.linalg_lu_factor(lu, pivots)


def lu(A, *, pivot=True):
    """(P (*, m, m), L (*, m, k), U (*, k, n)) with A = P L U, k = min(m, n)."""
    from .tensor import Tensor
    lu_, pivots, _ = _lu_factor_ex(A, pivot, False, "linalg.lu")
    low, up = unpack(lu_, _OnTensors)
    p = permutations(pivots._array, A.shape[-2]).astype(A.dtype)
    return return_types.linalg_lu(Tensor._wrap(p), low, up)


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with AX = B (left) or XA = B, or with A^T in place of A (`adjoint`), for A = P L U
    given by lu_factor: LU (*, n, n), pivots (*, n), B (*, n, k) (or (*, k, n) when not
    left); batch dims broadcast."""
    op = "linalg.lu_solve"
    check_matrix(LU._array, op)
    n = LU.shape[-1]
    if LU.shape[-2] != n:
        raise RuntimeError(f"{op}: Expected LU to be square, but got {LU.shape[-2]} by {n}")
    if B.ndim < 2:
        raise RuntimeError(f"{op}: Expected B to have at least 2 dimensions, but it has "
                           f"{B.ndim}")
    if LU.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected LU and B to have the same dtype, but found LU of "
                           f"type {torch_dtype_name(LU.dtype)} and B of type "
                           f"{torch_dtype_name(B.dtype)} instead")
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"{op}: Incompatible shapes of A and B for the equation "
                           f"{'AX' if left else 'XA'} = B ({n}x{n} and {B.shape[-2]}x"
                           f"{B.shape[-1]})")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"{op}: Expected pivots of shape {tuple(LU.shape[:-1])}, got "
                           f"{tuple(pivots.shape)}")
    from .tensor import Tensor
    low, up = unpack(LU, _OnTensors)
    p = Tensor._wrap(permutations(np.asarray(pivots._array), n).astype(LU.dtype))
    pt = p.transpose(-2, -1)
    if not left:  # XA = B is A^T X^T = B^T
        return lu_solve(LU, pivots, B.transpose(-2, -1), adjoint=not adjoint).transpose(-2, -1)
    if adjoint:  # A^T = U^T L^T P^T: X = P L^-T U^-T B
        y = _OnTensors.solve(up.transpose(-2, -1), B, upper=False)
        return p @ _OnTensors.solve(low.transpose(-2, -1), y, upper=True, unit=True)
    y = _OnTensors.solve(low, pt @ B, upper=False, unit=True)
    return _OnTensors.solve(up, y, upper=True)
