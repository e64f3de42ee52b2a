"""QR in Householder form: `geqrf` (LAPACK's geqr2: R on and above the diagonal, the
reflections' vectors below it, their scales tau), `linalg.householder_product` (orgqr, with
`orgqr`: the first n columns of H_1 H_2 ... H_k, H_i = I - tau_i v_i v_i^T, where v_i is
column i of A below its diagonal with a 1 on it) and `ormqr` (Q or Q^T times a matrix,
from either side). The products are composed of matmul, products and sums over the k
reflections, so their gradients are theirs, of every order; `geqrf`, as in PyTorch, has none
(its backward raises NotImplementedError).
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule
from .jvp_rules import jvp_rule
from .linalg_checks import check_float, torch_dtype_name, with_zero_gradient

__all__ = ["geqrf", "householder_product", "ormqr"]


def _geqr2(a):
    """(a, tau) of LAPACK's geqr2 for a (*, m, n): column by column, dlarfg's reflection
    beta = -sign(alpha) |(alpha, x)|, tau = (beta - alpha) / beta, v = x / (alpha - beta),
    applied to the columns on its right; a column already zero below its diagonal gets
    tau = 0 (H = I)."""
    m, n = a.shape[-2:]
    k = min(m, n)
    out = a.reshape((int(np.prod(a.shape[:-2])), m, n)).copy()
    tau = np.zeros(out.shape[:1] + (k,), a.dtype)
    for i in range(k):
        alpha, x = out[:, i, i].copy(), out[:, i + 1:, i]
        xnorm = np.sqrt((x * x).sum(-1))
        active = xnorm != 0
        beta = np.where(active, -np.copysign(np.hypot(alpha, xnorm), alpha), alpha)
        safe = np.where(active, beta, 1)
        tau[:, i] = np.where(active, (beta - alpha) / safe, 0)
        x /= np.where(active, alpha - beta, 1)[:, None]
        out[:, i, i] = beta
        v = np.concatenate([np.ones((out.shape[0], 1), a.dtype), out[:, i + 1:, i]], -1)
        w = (v[:, :, None] * out[:, i:, i + 1:]).sum(1)
        out[:, i:, i + 1:] -= tau[:, i, None, None] * v[:, :, None] * w[:, None, :]
    return out.reshape(a.shape), tau.reshape(a.shape[:-2] + (k,))


class Geqrf(Op):
    """(*, m, n) -> a (*, m, n) and tau (*, k) flattened side by side; no derivative."""

    @staticmethod
    def forward(ctx, a):
        out, tau = _geqr2(a)
        return np.concatenate([out.reshape(a.shape[:-2] + (-1,)), tau], -1)

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


@rule(Geqrf)
def _geqrf_rule(ctx, g):
    return Geqrf.backward(ctx, g)


@jvp_rule(Geqrf)
def _geqrf_jvp(ctx, out, tangents):
    return Geqrf.backward(ctx, None)


def geqrf(input):
    """(a, tau): the QR factorization of input (*, m, n) as LAPACK stores it; Q is
    `householder_product(a, tau)` and R is a's upper triangle."""
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    check_float(input._array, "geqrf")
    m, n = input.shape[-2:]
    packed = Geqrf.apply(input)
    a = packed[..., :m * n].reshape(*input.shape)
    return return_types.geqrf(a, packed[..., m * n:])


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


def householder_product(input, tau):
    """A (*, m, n), m >= n, and tau (*, k), k <= n -> Q (*, m, n): the first n columns of
    H_1 ... H_k (A is `input`, PyTorch's name for the argument)."""
    from .tensor import Tensor
    A = input
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


def ormqr(input, tau, other, left=True, transpose=False):
    """Q other, Q^T other (`transpose`), or other Q, other Q^T (not `left`), for the Q (mn, mn)
    of the reflections in input (*, mn, k) and tau (*, k) (as from `geqrf`); other (*, m, n),
    mn = m when `left`, else n."""
    from .functional import cat
    from .tensor import Tensor
    op = "torch.ormqr"
    if input.ndim < 2 or other.ndim < 2:
        raise RuntimeError(f"{op}: input and other must have at least 2 dimensions (got "
                           f"{input.ndim} and {other.ndim})")
    mn = other.shape[-2 if left else -1]
    side = "other.shape[-2]" if left else "other.shape[-1]"
    if input.shape[-2] != mn:
        raise RuntimeError(f"{op}: {side} must be equal to input.shape[-2] (input of shape "
                           f"{tuple(input.shape)}, other of shape {tuple(other.shape)})")
    if tau.shape[-1] != min(mn, input.shape[-1]):
        raise RuntimeError(f"{op}: tau.shape[-1] must be equal to min({side}, input.shape[-1]) "
                           f"(tau of shape {tuple(tau.shape)}, input of shape "
                           f"{tuple(input.shape)})")
    batch, k = tuple(input.shape[:-2]), input.shape[-1]
    zeros = Tensor._wrap(np.zeros(batch + (mn, mn - k), input.dtype))
    no_tau = Tensor._wrap(np.zeros(tuple(tau.shape[:-1]) + (mn - tau.shape[-1],), tau.dtype))
    q = householder_product(cat([input, zeros], -1), cat([tau, no_tau], -1))  # (mn, mn)
    q = q.transpose(-2, -1) if transpose else q
    return q @ other if left else other @ q
