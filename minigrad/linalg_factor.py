"""Factorizations: `linalg.cholesky` (A = L L^T, A symmetric positive-definite, from its lower
triangle as LAPACK reads it) and `linalg.qr` (A = QR, Q with orthonormal columns, R upper
triangular; LAPACK's Householder signs, as PyTorch's), batched over leading dims.

Gradients (the formulas PyTorch uses, from Murray's and Walter & Lehmann's derivations):
- cholesky: gA = sym(L^-T phi(L^T gL) L^-1), phi the lower triangle with its diagonal halved,
  sym(X) = (X + X^T) / 2 (the gradient of a symmetric input is symmetric);
- qr, m >= n: gA = (gQ + Q copyltu(M)) R^-T, M = R gR^T - gQ^T Q, copyltu(M) M's lower
  triangle mirrored onto its upper; m < n: A = [X | Y] with X = QU (square) and Y = QV, so
  gY = Q gV and gX is the square formula with gQ + Y gV^T.

Complex matrices (first derivatives), as PyTorch's: A Hermitian positive-definite for
cholesky, conjugate transposes for the transposes, and QR's M mirrored as
tril(M, -1) + tril(M, -1)^H + Re(diag(M)).

One Op returns one array, so `QR` returns Q and R flattened side by side along the last
axis; `qr` cuts them apart with indexing, which is differentiable.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import constant, rule, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import batch_failure, check_matrix, check_square
from .linalg_forms import OnArrays, OnTensors, flat_matrices, mH, mT
from .linalg_inverse import Inv

__all__ = ["cholesky", "qr"]


def _halved_lower(n, dtype):
    """The mask that keeps a lower triangle with its diagonal halved: phi(X) = X * mask."""
    return (np.tril(np.ones((n, n))) - 0.5 * np.eye(n)).astype(dtype)


class Cholesky(Op):
    """(*, n, n) -> L (*, n, n), lower triangular with a positive diagonal, A = L L^T (L L^H
    for a Hermitian A)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        check_square(a, "linalg.cholesky", complex=True)
        try:
            out = np.linalg.cholesky(a)
        except np.linalg.LinAlgError:
            raise batch_failure(a, np.linalg.cholesky, "linalg.cholesky", "The factorization "
                                "could not be completed because the input is not "
                                "positive-definite.") from None
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        low = ctx.saved[0]
        inverse = np.linalg.inv(low)
        s = mH(inverse) @ ((mH(low) @ g) * _halved_lower(low.shape[-1], low.dtype)) @ inverse
        return (s + mH(s)) * 0.5


@rule(Cholesky)
def _cholesky_rule(ctx, g):
    low = saved_output(ctx, ctx.saved[0])
    inverse = Inv.apply(low)
    mask = constant(_halved_lower(low.shape[-1], low.dtype))
    s = inverse.transpose(-2, -1) @ ((low.transpose(-2, -1) @ g) * mask) @ inverse
    return (s + s.transpose(-2, -1)) * 0.5


@jvp_rule(Cholesky)
def _cholesky_jvp(ctx, out, tangents):
    inverse = np.linalg.inv(out)  # dL = L phi(L^-1 dA L^-T)
    return out @ ((inverse @ tangents[0] @ mT(inverse)) * _halved_lower(out.shape[-1], out.dtype))


def cholesky(A, *, upper=False):
    """L (*, n, n) with A = L L^T for symmetric positive-definite A (only its lower triangle is
    read); upper=True returns L^T. A matrix that is not positive-definite raises LinAlgError."""
    low = Cholesky.apply(A)
    return low.mH if upper else low


# --- QR ------------------------------------------------------------------------------------------

class _OnArrays(OnArrays):
    """The further operations of QR's gradient (`_qr_gradient`), on arrays."""
    tril, real = staticmethod(np.tril), staticmethod(np.real)
    inv = staticmethod(np.linalg.inv)

    @staticmethod
    def cat(parts):
        return np.concatenate(parts, -1)


class _OnTensors(OnTensors):
    """The same on Tensors."""
    tril = staticmethod(lambda t, k: t.tril(k))
    real = staticmethod(lambda t: t.real)
    inv = staticmethod(Inv.apply)

    @staticmethod
    def cat(parts):
        from .functional import cat
        return cat(parts, -1)


def _square_gradient(q, r, gq, gr, on):
    """gA of A = QR for A (*, m, n), m >= n (R square): (gQ + Q copyltu(M)) R^-T."""
    m = r @ on.mH(gr) - on.mH(gq) @ q
    low = on.tril(m, -1)
    eye = on.constant(np.eye(m.shape[-1], dtype=q.dtype))
    return (gq + q @ (low + on.mH(low) + on.real(m) * eye)) @ on.mH(on.inv(r))


def _qr_gradient(q, r, gq, gr, on):
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        return _square_gradient(q, r, gq, gr, on)
    v, gv = r[..., m:], gr[..., m:]  # A = [X | Y], Y = QV
    gx = _square_gradient(q, r[..., :m], gq + (q @ v) @ on.mH(gv), gr[..., :m], on)
    return on.cat([gx, q @ gv])


def _split(packed, shapes):
    """Q and R from QR's output (or its gradient): (*, m k + k n) -> (*, m, k), (*, k, n)."""
    qs, rs = shapes
    nq, lead = qs[-1] * qs[-2], tuple(packed.shape[:-1])
    return (packed[..., :nq].reshape(lead + tuple(qs[-2:])),
            packed[..., nq:].reshape(lead + tuple(rs[-2:])))


class QR(Op):
    """(*, m, n) -> Q (*, m, k) and R (*, k, n), k = min(m, n) ('reduced') or m ('complete';
    'r' computes no Q: k = 0 columns of it), flattened side by side: (*, m k + k n)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, mode="reduced"):
        if mode == "r":
            r = np.linalg.qr(a, mode="r")
            q = np.zeros(a.shape[:-1] + (0,), a.dtype)
        else:
            q, r = np.linalg.qr(a, mode=mode)
        ctx.shapes, ctx.mode = (q.shape, r.shape), mode
        ctx.save_for_backward(q, r)
        lead = a.shape[:-2]
        return np.concatenate([flat_matrices(q), flat_matrices(r)], -1)

    @staticmethod
    def backward(ctx, g):
        q, r = ctx.saved
        _check_differentiable(ctx, q, r)
        return _qr_gradient(q, r, *_split(g, ctx.shapes), _OnArrays)


def _check_differentiable(ctx, q, r):
    if ctx.mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                           "when mode='r'. Please use linalg.qr(A, mode='reduced') if you are "
                           "going to differentiate through linalg.qr.")
    if ctx.mode == "complete" and q.shape[-2] > r.shape[-1]:
        raise RuntimeError(f"The QR decomposition is not differentiable when mode='complete' "
                           f"and nrows > ncols (A of {q.shape[-2]} rows and {r.shape[-1]} "
                           f"columns).")


@rule(QR)
def _qr_rule(ctx, g):
    q, r = ctx.saved
    _check_differentiable(ctx, q, r)
    lead = q.shape[:-2]
    packed = np.concatenate([flat_matrices(q), flat_matrices(r)], -1)
    qt, rt = _split(saved_output(ctx, packed), ctx.shapes)
    return _qr_gradient(qt, rt, *_split(g, ctx.shapes), _OnTensors)


def _square_tangents(q, r, ta):
    """(dQ, dR) of A = QR, m >= n, from dA: with X = Q^T dA R^-1 and its skew part
    W = tril(X, -1) - tril(X, -1)^T, dR = (X - W) R and dQ = dA R^-1 - Q (X - W)."""
    r_inv = np.linalg.inv(r)
    x = mT(q) @ ta @ r_inv
    low = np.tril(x, -1)
    upper = x - low + mT(low)
    return ta @ r_inv - q @ upper, upper @ r


@jvp_rule(QR)
def _qr_jvp(ctx, out, tangents):
    q, r = ctx.saved
    _check_differentiable(ctx, q, r)
    ta = np.asarray(tangents[0])
    m, n = q.shape[-2], r.shape[-1]
    if m >= n:
        tq, tr = _square_tangents(q, r, ta)
    else:  # A = [X | Y] with X = QU and Y = QV: dV = Q^T (dY - dQ V)
        tq, tu = _square_tangents(q, r[..., :m], ta[..., :m])
        tr = np.concatenate([tu, mT(q) @ (ta[..., m:] - tq @ r[..., m:])], -1)
    lead = out.shape[:-1]
    return np.concatenate([flat_matrices(tq), flat_matrices(tr)], -1)


def qr(A, mode="reduced"):
    """(Q, R) with A = QR for A (*, m, n): Q (*, m, k) with orthonormal columns and R (*, k, n)
    upper triangular, k = min(m, n) for mode 'reduced', m for 'complete'; mode 'r' returns an
    empty Q and R alone (not differentiable)."""
    from .tensor import Tensor
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    check_matrix(A._array, "linalg.qr", complex=True)
    packed = QR.apply(A, mode=mode)
    m, n = A.shape[-2:]
    k = m if mode == "complete" else (0 if mode == "r" else min(m, n))
    rows = m if mode == "complete" else min(m, n)
    q, r = _split(packed, ((m, k), (rows, n)))
    if mode == "r":
        q = Tensor._wrap(np.zeros((0,), A.dtype))
    return return_types.linalg_qr(q, r)
