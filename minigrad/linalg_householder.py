"""The product of Householder reflections: `linalg.householder_product` (LAPACK's orgqr), the
first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, where v_i is column i of A
below its diagonal with a 1 on it (how `geqrf` stores Q). It is composed of matmul,
products and sums over the k reflections, so its gradients are theirs, of every order.
"""
from __future__ import annotations

import numpy as np

from .linalg_checks import check_float, torch_dtype_name, with_zero_gradient

__all__ = ["householder_product"]


def _check(A, tau):
    op = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{op}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1] (input of shape {tuple(A.shape)})")
    if tau.ndim < 1 or n < tau.shape[-1]:
        raise RuntimeError(f"{op}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1] (input of shape {tuple(A.shape)}, tau of shape "
                           f"{tuple(tau.shape)})")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{op}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{op}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if A.dtype != tau.dtype:
        raise RuntimeError(f"{op}: tau dtype {torch_dtype_name(tau.dtype)} does not match input "
                           f"dtype {torch_dtype_name(A.dtype)}")
    check_float(A._array, "linalg.householder_product")


def householder_product(A, tau):
    """A (*, m, n), m >= n, and tau (*, k), k <= n -> Q (*, m, n): the first n columns of
    H_1 ... H_k."""
    from .tensor import Tensor
    _check(A, tau)
    m, n = A.shape[-2:]
    k = tau.shape[-1]
    eye = np.eye(m, dtype=A.dtype)
    vectors = A.tril(-1) + Tensor._wrap(eye[:, :n])  # the v_i as columns
    q = np.broadcast_to(eye, tuple(A.shape[:-2]) + (m, m)).copy()
    if k == 0:  # no reflection: I's columns, recorded with a zero gradient as in PyTorch
        return with_zero_gradient(q[..., :, :n], A)
    q = Tensor._wrap(q)
    for i in range(k):  # Q H_i = Q - tau_i (Q v_i) v_i^T
        v = vectors[..., :, i:i + 1]
        q = q - ((q @ v) * tau[..., i:i + 1].unsqueeze(-1)) @ v.transpose(-2, -1)
    return q[..., :, :n]
