"""The forms that report failure instead of raising: `linalg.inv_ex`, `linalg.solve_ex` and
`linalg.cholesky_ex` return their result with `info` (*) int32, LAPACK's code per matrix:
0 where it succeeded; for inv_ex and solve_ex the 1-based index of the first zero pivot of
A's LU factorization (getrf's), for cholesky_ex the order of the first leading minor that is
not positive-definite (potrf's). With `check_errors=True` a failure raises LinAlgError.

Where every matrix succeeds, the result is `inv`, `solve` or `cholesky`, with their
gradients. Where one fails, PyTorch's values there are LAPACK's partial results; minigrad
gives those of its own computation (inverses and solutions by substitution through the
singular U, so inf and NaN as LAPACK's; the Cholesky factor computed up to the failing
column, as potf2 leaves it), and the result of such a batch has no gradient.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .linalg_checks import LinAlgError, check_square
from .linalg_factor import cholesky
from .linalg_inverse import inv, solve
from .linalg_lu import factor, lu_solve

__all__ = ["cholesky_ex", "inv_ex", "solve_ex"]


def _raise_first(info, op, what):
    """The LinAlgError naming the first failing matrix, as PyTorch's."""
    flat = info.reshape(-1)
    first = int(np.flatnonzero(flat)[0])
    where = f"(Batch element {first}): " if info.ndim else ""
    raise LinAlgError(f"{op}: {where}{what(int(flat[first]))}")


def _lu_info(A, op):
    from .tensor import Tensor
    check_square(A._array, op)
    lu, pivots, info = factor(A._array)
    return Tensor._wrap(lu), Tensor._wrap(pivots), info


def inv_ex(A, *, check_errors=False):
    """(inverse (*, n, n), info (*) int32) of A (*, n, n); info > 0 where A is singular."""
    from .tensor import Tensor
    op = "linalg.inv_ex"
    lu, pivots, info = _lu_info(A, op)
    if check_errors and info.any():
        _raise_first(info, op, lambda i: f"The diagonal element {i} is zero, the inversion "
                     f"could not be completed because the input matrix is singular.")
    if not info.any():
        return return_types.linalg_inv_ex(inv(A), Tensor._wrap(info))
    eye = Tensor._wrap(np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape))
    with np.errstate(all="ignore"):
        out = lu_solve(lu, pivots, eye).detach()
    return return_types.linalg_inv_ex(out, Tensor._wrap(info))


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info (*) int32) of `linalg.solve(A, B, left=left)`; info > 0 where A is
    singular."""
    from .tensor import Tensor
    op = "torch.linalg.solve_ex"
    lu, pivots, info = _lu_info(A, "linalg.solve_ex")
    if check_errors and info.any():
        _raise_first(info, op, lambda i: "The solver failed because the input matrix is "
                     "singular.")
    if not info.any():
        return return_types.linalg_solve_ex(solve(A, B, left=left), Tensor._wrap(info))
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    rhs = B.unsqueeze(-1) if vector else B
    with np.errstate(all="ignore"):
        out = lu_solve(lu, pivots, rhs, left=left).detach()
    return return_types.linalg_solve_ex(out.squeeze(-1) if vector else out, Tensor._wrap(info))


def _partial_cholesky(a):
    """(L, info) of a (*, n, n) by potf2's columns: where column j fails (a_jj - |L_j,:j|^2
    not positive) that value is left on the diagonal and the later columns untouched."""
    n = a.shape[-1]
    low = np.tril(a.reshape((-1, n, n))).copy()
    info = np.zeros(low.shape[0], np.int32)
    for j in range(n):
        active = info == 0
        d = low[:, j, j] - (low[:, j, :j] ** 2).sum(-1)
        failed = active & ~(d > 0)
        info[failed] = j + 1
        low[failed, j, j] = d[failed]
        rows = active & ~failed
        root = np.sqrt(np.where(rows, d, 1))
        done = (low[:, j + 1:, :j] @ low[:, j, :j, None])[..., 0]
        column = (low[:, j + 1:, j] - done) / root[:, None]
        low[rows, j, j] = root[rows]
        low[rows, j + 1:, j] = column[rows]
    return low.reshape(a.shape), info.reshape(a.shape[:-2])


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L (*, n, n), info (*) int32) of `linalg.cholesky(A, upper=upper)`; info > 0 where A is
    not positive-definite: the order of its first leading minor that is not."""
    from .tensor import Tensor
    op = "linalg.cholesky_ex"
    check_square(A._array, op)
    try:
        np.linalg.cholesky(A._array)
    except np.linalg.LinAlgError:
        low, info = _partial_cholesky(A._array)
        if check_errors:
            _raise_first(info, op, lambda i: f"The factorization could not be completed "
                         f"because the input is not positive-definite (the leading minor of "
                         f"order {i} is not positive-definite).")
        out = Tensor._wrap(low)
        return return_types.linalg_cholesky_ex(out.transpose(-2, -1) if upper else out,
                                               Tensor._wrap(info))
    info = np.zeros(A.shape[:-2], np.int32)
    return return_types.linalg_cholesky_ex(cholesky(A, upper=upper), Tensor._wrap(info))
