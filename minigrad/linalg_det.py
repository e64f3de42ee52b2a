"""Determinants: `linalg.det`, `linalg.slogdet` (the sign and the log of the absolute value,
which does not overflow) and `logdet`, batched over leading dims, by NumPy's LAPACK in the
input's dtype.

d det(A) = sum(C * dA), C the cofactor matrix (det(A) A^-T where A is invertible). The
cofactors are computed from the SVD A = U S V^T as det(U) det(V) U diag(prod_{j!=i} s_j) V^T,
which holds for a singular A too, so the gradient at a singular matrix is PyTorch's, not NaN.
d log|det A| = sum(A^-T * dA).

Complex matrices (first derivatives): det is holomorphic, its gradient g conj(C); the
cofactors of A = U S V^H are sign conj(U diag(prod_{j!=i} s_j) V^H). log|det A| changes by
Re tr(A^-1 dA) and the sign det / |det| by i sign Im tr(A^-1 dA), so slogdet's gradient is
(g_logabs - i Im(conj(g_sign) sign)) A^-H, PyTorch's.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .dtypes import real_of
from .linalg_checks import LinAlgError, check_square, with_zero_gradient
from .linalg_forms import mH
from .linalg_inverse import Inv

__all__ = ["det", "logdet", "slogdet"]


def cofactors(a: np.ndarray) -> np.ndarray:
    """The cofactor matrices C (*, n, n) of a (*, n, n), C = det(A) A^-T, also where det(A) = 0."""
    n = a.shape[-1]
    if n == 0 or a.size == 0:
        return np.zeros_like(a)
    u, s, vh = np.linalg.svd(a)
    ones = np.ones(s.shape[:-1] + (1,), s.dtype)
    left = np.cumprod(np.concatenate([ones, s[..., :-1]], -1), -1)         # prod_{j<i} s_j
    right = np.cumprod(np.concatenate([ones, s[..., :0:-1]], -1), -1)[..., ::-1]  # j > i
    sign = np.linalg.det(u) * np.linalg.det(vh)  # each +-1 (of modulus 1 if complex)
    core = (u * (left * right)[..., None, :]) @ vh
    return (sign[..., None, None] * np.conj(core) if a.dtype.kind == "c"
            else sign[..., None, None] * core).astype(a.dtype)


class Det(Op):
    """(*, n, n) -> (*): the determinant of each matrix."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        check_square(a, "linalg.det", complex=True)
        ctx.save_for_backward(a)
        return np.asarray(np.linalg.det(a), a.dtype)

    @staticmethod
    def backward(ctx, g):
        return np.asarray(g)[..., None, None] * np.conj(cofactors(ctx.saved[0]))


class LogAbsDet(Op):
    """(*, n, n) -> (*): log |det| of each matrix (-inf where singular)."""

    @staticmethod
    def forward(ctx, a):
        check_square(a, "linalg.slogdet", complex=True)
        out = np.linalg.slogdet(a)[1]
        ctx.save_for_backward(a)
        return np.asarray(out, real_of(a.dtype))

    @staticmethod
    def backward(ctx, g):
        return np.asarray(g)[..., None, None] * mH(_inverse(ctx.saved[0]))


class ComplexSignDet(Op):
    """(*, n, n) complex -> (*): det / |det| (0 where singular), slogdet's sign; it moves by
    i sign Im tr(A^-1 dA), so the gradient is -i Im(conj(g) sign) A^-H."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        sign = np.asarray(np.linalg.slogdet(a)[0], a.dtype)
        ctx.save_for_backward(a, sign)
        return sign

    @staticmethod
    def backward(ctx, g):
        a, sign = ctx.saved
        c = np.asarray(-1j * (np.conj(g) * sign).imag)
        return c[..., None, None] * mH(_inverse(a))


def _inverse(a):
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise LinAlgError("linalg.slogdet: the gradient of log|det A| is A^-T, and A is "
                          "singular") from None


class SingularCofactors(Op):
    """The cofactors of matrices some of which are singular, as the first derivative of det
    there; its own derivative (that of the adjugate at a singular matrix) is not implemented,
    so differentiating it raises an error naming det rather than giving a wrong number."""

    @staticmethod
    def forward(ctx, a):
        ctx.shape = a.shape
        return cofactors(a)

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError(f"linalg.det: second derivatives at a singular matrix are not "
                                  f"implemented (input of shape {ctx.shape})")


@rule(Det)
def _det_rule(ctx, g):
    a = ctx.saved[0]
    det = np.asarray(np.linalg.det(a), a.dtype)
    if not np.all(det):
        return g[..., None, None] * SingularCofactors.apply(saved_input(ctx, 0, a))
    out = saved_output(ctx, det)  # the cofactors are det(A) A^-T
    return (g * out)[..., None, None] * Inv.apply(saved_input(ctx, 0, a)).transpose(-2, -1)


@rule(SingularCofactors)
def _singular_cofactors_rule(ctx, g):
    return SingularCofactors.backward(ctx, g)


@rule(LogAbsDet)
def _logabsdet_rule(ctx, g):
    return g[..., None, None] * Inv.apply(saved_input(ctx, 0, ctx.saved[0])).transpose(-2, -1)


@jvp_rule(Det)
def _det_jvp(ctx, out, tangents):
    return (cofactors(ctx.saved[0]) * tangents[0]).sum((-2, -1)).astype(out.dtype)


@jvp_rule(SingularCofactors)
def _singular_cofactors_jvp(ctx, out, tangents):
    return SingularCofactors.backward(ctx, None)


@jvp_rule(LogAbsDet)
def _logabsdet_jvp(ctx, out, tangents):
    inverse_t = np.swapaxes(_inverse(ctx.saved[0]), -1, -2)
    return (inverse_t * tangents[0]).sum((-2, -1)).astype(out.dtype)


# --- the functions -------------------------------------------------------------------------------

def det(A):
    """The determinant of each square matrix of A (*, n, n), shape (*)."""
    return Det.apply(A)


def _signed_log(A):
    logabs = LogAbsDet.apply(A)  # checks A first
    if A.dtype.kind == "c":
        return ComplexSignDet.apply(A), logabs
    sign = np.asarray(np.linalg.slogdet(A._array)[0], A.dtype)
    return with_zero_gradient(sign, logabs), logabs


def slogdet(A):
    """(sign, logabsdet) of each square matrix of A (*, n, n): det = sign * exp(logabsdet);
    a singular matrix gives (0, -inf). The gradient flows through logabsdet."""
    return return_types.linalg_slogdet(*_signed_log(A))


def logdet(input):
    """log det of each square matrix: NaN where the determinant is negative, -inf where 0."""
    sign, logabs = _signed_log(input)
    with np.errstate(divide="ignore", invalid="ignore"):
        return logabs + type(sign)._wrap(np.log(sign._array))  # 0, NaN (sign -1) or -inf
