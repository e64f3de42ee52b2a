"""The singular value decomposition: `linalg.svd` (A = U diag(S) Vh) and `linalg.svdvals`, by
NumPy's LAPACK (gesdd, as PyTorch's CPU kernels: the same signs of the vectors), and through
them the spectral and nuclear norms of `matrix_norm`.

Gradients (Townsend, "Differentiating the singular value decomposition"), for the reduced
factors U (m, k), S (k), V (n, k), k = min(m, n), F_ij = 1 / (s_j^2 - s_i^2) off the diagonal:
  gA = U [(F o (U^T gU - gU^T U)) S + diag(gS) + S (F o (V^T gV - gV^T V))] V^T
       + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T).
Equal singular values make the vectors' gradient infinite, as in PyTorch. The singular values
alone have the gradient U diag(gS) V^T, which is defined everywhere; for the full factors
(full_matrices=True) the columns beyond k get none, as in PyTorch. The formula is written
once for arrays and tensors, so its tensor form gives every higher order.
Complex A (first derivatives): the conjugate transposes for the transposes, plus
i Im(diag(U^H gU)) / S on the diagonal of the bracket, as PyTorch's; the phase of each pair of
singular vectors is arbitrary, so only a loss that does not depend on it has a gradient
that means anything (PyTorch's caveat too).
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_matrix, check_phase_free
from .linalg_forms import OnArrays, OnTensors, flat_matrices, mH, mT

__all__ = ["svd", "svdvals"]


def _gradient(u, s, v, gu, gs, gv, on):
    """gA from the reduced factors u (*, m, k), s (*, k), v (*, n, k) and their gradients."""
    k = s.shape[-1]
    eye = on.constant(np.eye(k, dtype=u.dtype))
    row, col = s[..., None, :], s[..., :, None]                # s_j along rows, s_i down
    off = on.constant(1 - np.eye(k, dtype=u.dtype))
    f = off / (row * row - col * col + eye)                    # F, 0 on the diagonal
    inner = gs[..., None, :] * eye
    ut_gu, vt_gv = on.mH(u) @ gu, on.mH(v) @ gv
    inner = inner + (f * (ut_gu - on.mH(ut_gu))) * row + col * (f * (vt_gv - on.mH(vt_gv)))
    if u.dtype.kind == "c":  # arrays only: create_graph through complex is refused before
        inner = inner + 1j * np.diagonal(ut_gu, 0, -2, -1).imag[..., None, :] * eye / row
    ga = u @ inner @ on.mH(v)
    if u.shape[-2] > k:
        ga = ga + ((gu - u @ ut_gu) / row) @ on.mH(v)
    if v.shape[-2] > k:
        ga = ga + u @ on.mH((gv - v @ vt_gv) / row)
    return ga


def _factors(a, full):
    u, s, vh = np.linalg.svd(a, full_matrices=full)
    return u, s, vh


def _pack(u, s, vh):
    lead = s.shape[:-1]
    return np.concatenate([flat_matrices(u), s, flat_matrices(vh)], -1)


def _unpack(packed, shapes):
    """U, S, Vh from SVD's output (or its gradient), as views or slices."""
    (us, ss, vs), lead = shapes, tuple(packed.shape[:-1])
    nu, ns = us[-2] * us[-1], ss[-1]
    return (packed[..., :nu].reshape(lead + tuple(us[-2:])), packed[..., nu:nu + ns],
            packed[..., nu + ns:].reshape(lead + tuple(vs[-2:])))


class SVD(Op):
    """(*, m, n) -> U (*, m, k'), S (*, k), Vh (*, k', n), flattened side by side; k' = k
    for the reduced factors, m and n for the full ones (S real, packed as complex beside
    complex factors)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, full=False):
        u, s, vh = _factors(a, full)
        ctx.shapes, ctx.k = (u.shape, s.shape, vh.shape), s.shape[-1]
        ctx.save_for_backward(u, s, vh)
        return _pack(u, s, vh)

    @staticmethod
    def backward(ctx, g):
        u, s, vh = ctx.saved
        gu, gs, gvh = _unpack(g, ctx.shapes)
        k = ctx.k
        if u.dtype.kind == "c":
            phases = (np.diagonal(mH(u[..., :k]) @ gu[..., :k], 0, -2, -1)
                      + np.diagonal(vh[..., :k, :] @ mH(gvh[..., :k, :]), 0, -2, -1))
            check_phase_free(phases.imag, "svd_backward", "singular vectors",
                             "phase term, making it ill-defined")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _gradient(u[..., :k], s, mH(vh[..., :k, :]), gu[..., :k], gs,
                             mH(gvh[..., :k, :]), OnArrays)


@rule(SVD)
def _svd_rule(ctx, g):
    u, s, vh = ctx.saved
    ut, st, vht = _unpack(saved_output(ctx, _pack(u, s, vh)), ctx.shapes)
    gu, gs, gvh = _unpack(g, ctx.shapes)
    k = ctx.k
    return _gradient(ut[..., :k], st, vht[..., :k, :].transpose(-2, -1), gu[..., :k], gs,
                     gvh[..., :k, :].transpose(-2, -1), OnTensors)


@jvp_rule(SVD)
def _svd_jvp(ctx, out, tangents):
    """With P = U^T dA V: dS = diag(P), dU = U (F o (P S + S P^T)) + (I - U U^T) dA V S^-1,
    dV = V (F o (S P + P^T S)) + (I - V V^T) dA^T U S^-1 (the vectors beyond k: none)."""
    u, s, vh = ctx.saved
    k = ctx.k
    ur, v = u[..., :k], mT(vh[..., :k, :])
    ta = np.asarray(tangents[0])
    p = mT(ur) @ ta @ v
    row, col = s[..., None, :], s[..., :, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (1 - np.eye(k)) / (row * row - col * col + np.eye(k))
        du = ur @ (f * (p * row + col * mT(p))) + (ta @ v - ur @ p) / row
        dv = v @ (f * (col * p + mT(p) * row)) + (mT(ta) @ ur - v @ mT(p)) / row
    tu, tvh = np.zeros(u.shape, u.dtype), np.zeros(vh.shape, vh.dtype)
    tu[..., :k], tvh[..., :k, :] = du, mT(dv)
    return _pack(tu, np.diagonal(p, 0, -2, -1), tvh).astype(out.dtype, copy=False)


class SvdVals(Op):
    """(*, m, n) -> S (*, k): the singular values, in descending order."""

    @staticmethod
    def forward(ctx, a):
        u, s, vh = _factors(a, False)
        ctx.save_for_backward(u, vh, a)
        return s

    @staticmethod
    def backward(ctx, g):
        u, vh, _ = ctx.saved
        return (u * g[..., None, :]) @ vh


@rule(SvdVals)
def _svdvals_rule(ctx, g):
    u, _, vh = svd(saved_input(ctx, 0, ctx.saved[2]), full_matrices=False)  # vectors that
    # are functions of A, so that the second order flows through them
    return (u * g[..., None, :]) @ vh


@jvp_rule(SvdVals)
def _svdvals_jvp(ctx, out, tangents):
    u, vh, _ = ctx.saved
    return np.diagonal(mT(u) @ tangents[0] @ mT(vh), 0, -2, -1).astype(out.dtype)


def svd(A, full_matrices=True, *, driver=None):
    """(U, S, Vh) with A = U diag(S) Vh for A (*, m, n): S (*, k) descending, k = min(m, n);
    U (*, m, m) and Vh (*, n, n) when full_matrices, else (*, m, k) and (*, k, n)."""
    _check_driver(driver, "linalg.svd")
    check_matrix(A._array, "linalg.svd", complex=True)
    packed = SVD.apply(A, full=full_matrices)
    m, n = A.shape[-2:]
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    u, s, vh = _unpack(packed, ((m, ku), (k,), (kv, n)))
    return return_types.linalg_svd(u, s.real, vh)  # real of real: itself


def _check_driver(driver, op):
    if driver is not None:
        raise RuntimeError(f"torch.{op}: keyword argument `driver=` is only supported on CUDA "
                           f"inputs with cuSOLVER backend.")


def svdvals(A, *, driver=None):
    """The singular values of A (*, m, n), (*, min(m, n)), in descending order."""
    _check_driver(driver, "linalg.svd")  # PyTorch names svd here too
    check_matrix(A._array, "linalg.svdvals", complex=True)
    return SvdVals.apply(A)
