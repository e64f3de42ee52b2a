"""The eigendecomposition of general square matrices: `linalg.eig` (A = V diag(L) V^-1, the
eigenvalues L and the columns of V complex, each column of unit norm, as LAPACK's geev gives
them, which PyTorch's CPU kernels call too) and `linalg.eigvals`, of real or complex input.

Gradients, PyTorch's (first derivatives), in its complex convention: with E_ij = l_j - l_i,
  gA = V^-H (diag(gL) + (V^H gV - V^H V Re(diag(V^H gV))) / conj(E)) V^H
(the division off the diagonal). Each eigenvector is fixed only up to a phase e^{i phi};
a loss that depends on it has no gradient, and the backward raises PyTorch's error, found by
Im(diag(V^H gV)) != 0. Equal eigenvalues make the vectors' gradient infinite; the
eigenvalues alone have gA = V^-H diag(gL) V^H. A real input gets the real part of gA.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .dtypes import complex_of
from .linalg_checks import check_phase_free, check_square
from .linalg_forms import mH, pack_eigen, split_eigen

__all__ = ["eig", "eigvals"]


def _decompose(a, op):
    check_square(a, op, complex=True)
    if not np.all(np.isfinite(a)):
        raise RuntimeError(f"{op}: input tensor should not contain infs or NaNs.")
    dtype = complex_of(a.dtype)
    values, vectors = np.linalg.eig(a)  # real when a is real and its spectrum is: made complex
    return values.astype(dtype, copy=False), vectors.astype(dtype, copy=False)


def _values_gradient(vectors, inner):
    """V^-H inner V^H, solved rather than inverted."""
    return np.linalg.solve(mH(vectors), inner @ mH(vectors))


class Eig(Op):
    """(*, n, n) -> L (*, n) and V (*, n, n), complex, flattened side by side: (*, n + n n)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        values, vectors = _decompose(a, "linalg.eig")
        ctx.n = a.shape[-1]
        ctx.save_for_backward(values, vectors)
        return pack_eigen(values, vectors)

    @staticmethod
    def backward(ctx, g):
        values, vectors = ctx.saved
        g_values, g_vectors = split_eigen(g, ctx.n)
        vh_gv = mH(vectors) @ g_vectors
        diag = np.diagonal(vh_gv, 0, -2, -1)
        check_phase_free(diag.imag, "linalg_eig_backward", "eigenvectors",
                         "quantity, so it is ill-defined")
        inner = vh_gv - mH(vectors) @ (vectors * diag.real[..., None, :])
        gaps = np.conj(values[..., None, :] - values[..., :, None])
        n = ctx.n
        eye = np.eye(n, dtype=bool)
        with np.errstate(divide="ignore", invalid="ignore"):
            inner = np.where(eye, 0, inner / np.where(eye, 1, gaps))
        inner = inner + g_values[..., None, :] * eye
        return _values_gradient(vectors, inner)


class EigVals(Op):
    """(*, n, n) -> L (*, n), complex: the eigenvalues alone, gA = V^-H diag(gL) V^H."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        values, vectors = _decompose(a, "linalg.eigvals")
        ctx.save_for_backward(vectors)
        return values

    @staticmethod
    def backward(ctx, g):
        vectors = ctx.saved[0]
        return _values_gradient(vectors, g[..., None, :] * np.eye(g.shape[-1], dtype=bool))


def eig(A):
    """(eigenvalues (*, n), eigenvectors (*, n, n) as unit-norm columns), both complex, of the
    square matrices A (*, n, n), real or complex: A V = V diag(L)."""
    values, vectors = split_eigen(Eig.apply(A), A.shape[-1])
    return return_types.linalg_eig(values, vectors)


def eigvals(A):
    """The eigenvalues (*, n), complex, of the square matrices A (*, n, n)."""
    return EigVals.apply(A)
