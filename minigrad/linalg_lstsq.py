"""Least squares: `linalg.lstsq`, X minimising ||AX - B|| (of least norm where A is
rank-deficient), batched with broadcast batch dims, with PyTorch's named result (solution,
residuals, rank, singular_values) and what each of its CPU drivers fills in.

The solution is A^+ B with A's singular values cut at rcond * s_max (rcond defaults to
eps(dtype) * max(m, n)): the pseudo-inverse of `linalg_pinv.py`, so its gradient is
PyTorch's (which differentiates lstsq as A^+ B too): gB = A^+^T g and gA the pseudo-inverse's
gradient of g B^T. LAPACK's drivers find the same X by other factorizations (gelsy by QR
with column pivoting), so values agree to rounding, and the rank agrees except for singular
values within rounding of the cut. As in PyTorch, the solution and the residuals
(computed as |AX - B|^2, by differentiable ops) have gradients; rank and singular_values
have none.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .linalg_checks import LinAlgError, check_float, torch_dtype_name
from .linalg_pinv import Pinv, tolerance

__all__ = ["lstsq"]

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check(A, B, driver):
    op = "torch.linalg.lstsq"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    check_float(A._array, "linalg.lstsq")
    if A.dtype != B.dtype:
        raise RuntimeError(f"{op}: Expected input and other to have the same dtype, but got "
                           f"input's dtype {torch_dtype_name(A.dtype)} and other's dtype "
                           f"{torch_dtype_name(B.dtype)}")
    if not (A.ndim >= B.ndim and A.ndim - B.ndim <= 1):
        raise RuntimeError(f"{op}: input.dim() must be greater or equal to other.dim() and "
                           f"(input.dim() - other.dim()) <= 1 (input of shape "
                           f"{tuple(A.shape)}, other of shape {tuple(B.shape)})")
    vector = B.ndim == A.ndim - 1
    if A.shape[-2] != B.shape[-1 if vector else -2]:
        raise RuntimeError(f"{op}: input.size(-2) should match other.size(-2) (input of shape "
                           f"{tuple(A.shape)}, other of shape {tuple(B.shape)})")
    if driver not in _DRIVERS:
        raise RuntimeError(f"{op}: parameter `driver` should be one of "
                           f"({', '.join(_DRIVERS)})")
    try:
        np.broadcast_shapes(A.shape[:-2], B.shape[:-1 if vector else -2])
    except ValueError:
        raise RuntimeError(f"{op}: the batch dims of input {tuple(A.shape)} and other "
                           f"{tuple(B.shape)} do not broadcast") from None
    return vector


def lstsq(A, b, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) for A (*, m, n) and B (*, m, k) (or a
    vector B (*, m) when B has one dim fewer than A): solution (*, n, k) (or (*, n));
    residuals, the squared residual of each column (*, k) ((*, 1) for a vector), for every
    driver but the default 'gelsy' when m > n and every matrix has full rank (else empty);
    rank (*) int64 but for 'gels'; singular_values (*, min(m, n)) for 'gelsd' and 'gelss'
    (else empty). B is `b`, PyTorch's name for the argument."""
    from .tensor import Tensor
    B = b
    driver = "gelsy" if driver is None else driver
    vector = _check(A, B, driver)
    m, n = A.shape[-2:]
    a = A._array
    if rcond is None:
        rcond = np.finfo(a.dtype).eps * max(m, n)
    values = np.linalg.svd(a, compute_uv=False) if a.size else \
        np.zeros(a.shape[:-2] + (0,), a.dtype)
    ranks = (values > tolerance(a, values, None, rcond, "linalg.lstsq")).sum(-1)
    if driver == "gels" and (ranks < min(m, n)).any():
        raise LinAlgError(f"torch.linalg.lstsq: The least squares solution could not be "
                          f"computed because the input matrix does not have full rank (A of "
                          f"shape {tuple(A.shape)}, rank {int(ranks.min())}; driver 'gels').")
    rhs = B.unsqueeze(-1) if vector else B
    solution = Pinv.apply(A, rtol=0.0 if driver == "gels" else rcond) @ rhs
    empty = np.zeros((0,), a.dtype)
    residuals = Tensor._wrap(empty)
    if driver != "gelsy" and m > n and (ranks == n).all():
        residuals = ((A @ solution - rhs) ** 2).sum(-2)  # (*, 1) for a vector
    rank = np.zeros((0,), np.int64) if driver == "gels" else ranks.astype(np.int64)
    singular = values if driver in ("gelsd", "gelss") else empty
    return return_types.linalg_lstsq(solution.squeeze(-1) if vector else solution,
                                     residuals, Tensor._wrap(rank),
                                     Tensor._wrap(singular))
