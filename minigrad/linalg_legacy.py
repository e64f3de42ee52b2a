"""PyTorch's older top-level linear-algebra names, which scripts still call, written with
`torch.linalg`'s functions (so their gradients are those functions'): `matrix_power`,
`cholesky`, `lu_unpack`, `lu_solve` (B first), `svd` (V rather than Vh, `some=`), `qr`
(`some=`), `orgqr`, `triangular_solve` (b first, returning the coefficient too) and
`chain_matmul`; `cholesky_solve` and `cholesky_inverse`, with a gradient of their own, are
in `linalg_cholesky_solve.py`. The ones PyTorch deprecates warn once per process, as
PyTorch's do.
"""
from __future__ import annotations

import warnings

import numpy as np

from . import return_types
from .linalg_cholesky_solve import cholesky_inverse, cholesky_solve
from .linalg_factor import cholesky as _cholesky
from .linalg_factor import qr as _qr
from .linalg_householder import householder_product
from .linalg_lu import lu_solve as _lu_solve
from .linalg_lu import permutations, unpack, _OnTensors
from .linalg_products import matrix_power, multi_dot
from .linalg_svd import svd as _svd
from .linalg_svd import svdvals
from .linalg_triangular import solve_triangular

__all__ = ["chain_matmul", "cholesky", "cholesky_inverse", "cholesky_solve", "lu_solve",
           "lu_unpack", "matrix_power", "orgqr", "qr", "svd", "triangular_solve"]

_warned = set()


def _deprecated(name, replacement):
    """PyTorch's warning, given once per process (PyTorch's TORCH_WARN_ONCE)."""
    if name not in _warned:
        _warned.add(name)
        warnings.warn(f"{name} is deprecated in favor of {replacement} and will be removed "
                      f"in a future PyTorch release (minigrad follows PyTorch's names).",
                      UserWarning, stacklevel=3)


def cholesky(input, upper=False):
    """`linalg.cholesky(input, upper=upper)` (deprecated in PyTorch)."""
    _deprecated("torch.cholesky", "torch.linalg.cholesky")
    return _cholesky(input, upper=upper)


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P (*, m, m), L (*, m, k), U (*, k, n)) from `linalg.lu_factor`'s LU and pivots; what
    is not unpacked is returned empty, as in PyTorch."""
    from .tensor import Tensor
    m = LU_data.shape[-2]
    empty = Tensor._wrap(np.zeros((0,), LU_data.dtype))
    low, up = unpack(LU_data, _OnTensors) if unpack_data else (empty, empty)
    p = Tensor._wrap(permutations(np.asarray(LU_pivots._array), m).astype(LU_data.dtype)) \
        if unpack_pivots else empty
    return return_types.lu_unpack(p, low, up)


def lu_solve(b, LU_data, LU_pivots):
    """`linalg.lu_solve(LU_data, LU_pivots, b)` (deprecated in PyTorch)."""
    _deprecated("torch.lu_solve", "torch.linalg.lu_solve")
    return _lu_solve(LU_data, LU_pivots, b)


def svd(input, some=True, compute_uv=True):
    """(U, S, V) with input = U diag(S) V^T: V, not `linalg.svd`'s Vh; `some` gives the
    reduced factors. Without `compute_uv`, U (*, m, m) and V (*, n, n) are zeros."""
    from .tensor import Tensor
    if not compute_uv:
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return return_types.svd(Tensor._wrap(np.zeros(batch + (m, m), input.dtype)),
                                svdvals(input),
                                Tensor._wrap(np.zeros(batch + (n, n), input.dtype)))
    U, S, Vh = _svd(input, full_matrices=not some)
    return return_types.svd(U, S, Vh.transpose(-2, -1))


def qr(input, some=True):
    """`linalg.qr(input, 'reduced' if some else 'complete')` (deprecated in PyTorch)."""
    _deprecated("torch.qr", "torch.linalg.qr")
    Q, R = _qr(input, "reduced" if some else "complete")
    return return_types.qr(Q, R)


def orgqr(input, tau):
    """`linalg.householder_product(input, tau)`."""
    return householder_product(input, tau)


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """(solution, cloned_coefficient): X with A X = b (A^T X = b when `transpose`) for a
    triangular A (*, n, n), and a copy of A in the broadcast batch shape (deprecated in
    PyTorch)."""
    _deprecated("torch.triangular_solve", "torch.linalg.solve_triangular")
    coefficient = A.transpose(-2, -1) if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose,
                                unitriangular=unitriangular)
    batch = tuple(solution.shape[:-2])  # the coefficient broadcast to the batch, as PyTorch's
    return return_types.triangular_solve(solution, A.expand(*batch, *A.shape[-2:]).clone())


def chain_matmul(*matrices):
    """`linalg.multi_dot(matrices)` (deprecated in PyTorch): one matrix is returned as it is."""
    _deprecated("torch.chain_matmul", "torch.linalg.multi_dot")
    if len(matrices) == 1:
        return matrices[0]
    return multi_dot(matrices)
