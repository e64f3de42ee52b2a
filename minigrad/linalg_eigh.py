"""The eigendecomposition of symmetric matrices: `linalg.eigh` (A = V diag(L) V^T, the
eigenvalues L ascending, V orthogonal) and `linalg.eigvalsh`, by NumPy's LAPACK (syevd, as
PyTorch's CPU kernels), reading the triangle `UPLO` names.

With F_ij = 1 / (l_j - l_i) off the diagonal, a symmetric dA moves L by diag(V^T dA V) and V
by V (F o (V^T dA V)), so the gradient is gA = sym(V (diag(gL) + F o (V^T gV)) V^T),
sym(X) = (X + X^T) / 2 (PyTorch's: the gradient of a symmetric input is symmetric). Equal
eigenvalues make the vectors' gradient infinite, as in PyTorch; the eigenvalues alone have
the gradient V diag(gL) V^T, defined everywhere. The formula is written once for arrays and
tensors, so its tensor form gives every higher order. A complex Hermitian A (first
derivatives) takes V^H for V^T and (X + X^H) / 2 for sym: the eigenvalues stay real, and the
result is PyTorch's V (diag(gL) + F o (V^H gV - (V^H gV)^H) / 2) V^H.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_phase_free, check_square
from .linalg_forms import OnArrays, OnTensors, mH, pack_eigen, split_eigen

__all__ = ["eigh", "eigvalsh"]


def _gaps(values, on):
    """F (*, n, n): 1 / (l_j - l_i) off the diagonal, 0 on it."""
    n = values.shape[-1]
    eye = on.constant(np.eye(n, dtype=values.dtype))
    return on.constant(1 - np.eye(n, dtype=values.dtype)) / (
        values[..., None, :] - values[..., :, None] + eye)


def _gradient(values, vectors, g_values, g_vectors, on):
    eye = on.constant(np.eye(values.shape[-1], dtype=values.dtype))
    inner = g_values[..., None, :] * eye + _gaps(values, on) * (on.mH(vectors) @ g_vectors)
    g = vectors @ inner @ on.mH(vectors)
    return (g + on.mH(g)) * 0.5


def _check(a, op, uplo):
    check_square(a, op, complex=True)
    if uplo not in ("L", "U"):
        raise RuntimeError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {uplo}")


class Eigh(Op):
    """(*, n, n) symmetric -> L (*, n) and V (*, n, n) flattened side by side: (*, n + n n)
    (complex, L as its real part, for a Hermitian A)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, uplo="L"):
        _check(a, "linalg.eigh", uplo)
        values, vectors = np.linalg.eigh(a, UPLO=uplo)
        ctx.n = a.shape[-1]
        ctx.save_for_backward(values, vectors)
        return pack_eigen(values, vectors)

    @staticmethod
    def backward(ctx, g):
        values, vectors = ctx.saved
        g_values, g_vectors = split_eigen(g, ctx.n)
        if vectors.dtype.kind == "c":
            check_phase_free(np.diagonal(mH(vectors) @ g_vectors, 0, -2, -1).imag,
                             "linalg_eigh_backward", "eigenvectors",
                             "quantity, so it is ill-defined")
        with np.errstate(divide="ignore", invalid="ignore"):
            return _gradient(values, vectors, g_values, g_vectors, OnArrays)


@rule(Eigh)
def _eigh_rule(ctx, g):
    values, vectors = ctx.saved
    packed = pack_eigen(values, vectors)
    return _gradient(*split_eigen(saved_output(ctx, packed), ctx.n), *split_eigen(g, ctx.n),
                     OnTensors)


@jvp_rule(Eigh)
def _eigh_jvp(ctx, out, tangents):
    values, vectors = ctx.saved
    p = mH(vectors) @ tangents[0] @ vectors
    with np.errstate(divide="ignore", invalid="ignore"):
        t_vectors = vectors @ (_gaps(values, OnArrays) * p)
    t_values = np.diagonal(p, 0, -2, -1)
    return pack_eigen(t_values, t_vectors).astype(out.dtype, copy=False)


class EigvalsH(Op):
    """(*, n, n) symmetric -> its eigenvalues (*, n), ascending."""

    @staticmethod
    def forward(ctx, a, uplo="L"):
        _check(a, "linalg.eigvalsh", uplo)
        values, vectors = np.linalg.eigh(a, UPLO=uplo)
        ctx.uplo = uplo
        ctx.save_for_backward(vectors, a)
        return values

    @staticmethod
    def backward(ctx, g):
        vectors = ctx.saved[0]
        return (vectors * g[..., None, :]) @ mH(vectors)


@rule(EigvalsH)
def _eigvalsh_rule(ctx, g):
    vectors = eigh(saved_input(ctx, 0, ctx.saved[1]), ctx.uplo).eigenvectors  # functions of
    # A, so that the second order flows through them
    return (vectors * g[..., None, :]) @ vectors.transpose(-2, -1)


@jvp_rule(EigvalsH)
def _eigvalsh_jvp(ctx, out, tangents):
    vectors = ctx.saved[0]
    return np.diagonal(mH(vectors) @ tangents[0] @ vectors, 0, -2, -1).astype(out.dtype)


def eigh(A, UPLO="L"):
    """(eigenvalues (*, n) ascending, eigenvectors (*, n, n) as columns) of the symmetric
    matrices A (*, n, n), of which only the lower (UPLO='L') or upper triangle is read."""
    values, vectors = split_eigen(Eigh.apply(A, uplo=UPLO), A.shape[-1])
    return return_types.linalg_eigh(values.real, vectors)  # real of real: itself


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (*, n), ascending, of the symmetric matrices A (*, n, n)."""
    return EigvalsH.apply(A, uplo=UPLO)
