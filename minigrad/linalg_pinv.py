"""The pseudo-inverse and the numerical rank: `linalg.pinv` (with `torch.pinverse`) and
`linalg.matrix_rank`, batched over leading dims, by NumPy's LAPACK in the input's dtype.

Both cut the singular values (the eigenvalues' absolute values when `hermitian`, from the
lower triangle as `eigh` reads it) at PyTorch's tolerance max(atol, rtol * s_max), where rtol
defaults to eps(dtype) * max(m, n), or to 0 when a positive atol is given.

With X = A^+ (m, n) -> (n, m), on matrices of constant rank
  dX = -X dA X + X X^T dA^T (I - A X) + (I - X A) dA^T X^T X,
so the gradient is gA = -X^T g X^T + (I - A X) g^T X X^T + X^T X g^T (I - X A), PyTorch's
`pinv_backward`, written once for arrays and tensors, so its tensor form gives every order.
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .graph_rules import rule, saved_input, saved_output
from .jvp_rules import jvp_rule
from .linalg_checks import check_matrix, check_square, torch_dtype_name
from .linalg_forms import OnArrays, OnTensors, mT

__all__ = ["matrix_rank", "pinv", "pinverse", "tolerance"]


def _as_array(value, op, name):
    from .tensor import Tensor
    if isinstance(value, Tensor):
        value = value._array
    value = np.asarray(value)
    if value.dtype.kind == "c":
        raise RuntimeError(f"{op}: {name} tensor of complex type is not supported.")
    return value.astype(np.float64)


def tolerance(a, values, atol, rtol, op):
    """The cut (*, 1) of the singular values `values` (*, k) of a (*, m, n): PyTorch's
    max(atol, rtol * max(values)); atol and rtol are numbers or tensors broadcast over (*)."""
    if rtol is None:
        rtol = np.finfo(a.dtype).eps * max(a.shape[-2:])
        if atol is not None:
            rtol = np.where(_as_array(atol, op, "atol") > 0, 0.0, rtol)
    atol = np.zeros(()) if atol is None else _as_array(atol, op, "atol")
    rtol = _as_array(rtol, op, "rtol")
    top = values.max(-1, keepdims=True, initial=0.0)
    return np.maximum(atol[..., None], rtol[..., None] * top)


def _pinv(a, atol, rtol, hermitian):
    """A^+ (*, n, m) of a (*, m, n), its small singular values (or eigenvalues) cut."""
    op = "linalg.pinv"
    if hermitian:
        values, vectors = np.linalg.eigh(a)
        cut = tolerance(a, np.abs(values), atol, rtol, op)
        with np.errstate(divide="ignore"):
            inverse = np.where(np.abs(values) > cut, 1 / values, 0).astype(a.dtype)
        return (vectors * inverse[..., None, :]) @ mT(vectors)
    if a.size == 0:
        return np.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    cut = tolerance(a, s, atol, rtol, op)
    with np.errstate(divide="ignore"):
        inverse = np.where(s > cut, 1 / s, 0).astype(a.dtype)
    return (mT(vh) * inverse[..., None, :]) @ mT(u)


def _gradient(a, x, g, on):
    """gA of X = A^+ for A (*, m, n), X (*, n, m) and the gradient g of X."""
    gt, xt = on.mT(g), on.mT(x)
    ax, xa = a @ x, x @ a
    return (-(xt @ g @ xt) + (gt @ x @ xt - ax @ (gt @ x @ xt))
            + (xt @ x @ gt - ((xt @ x) @ gt) @ xa))


class Pinv(Op):
    """(*, m, n) -> (*, n, m): the pseudo-inverse of each matrix."""

    @staticmethod
    def forward(ctx, a, atol=None, rtol=None, hermitian=False):
        out = _pinv(a, atol, rtol, hermitian)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        a, x = ctx.saved
        return _gradient(a, x, g, OnArrays)


@rule(Pinv)
def _pinv_rule(ctx, g):
    a, x = ctx.saved
    return _gradient(saved_input(ctx, 0, a), saved_output(ctx, x), g, OnTensors)


@jvp_rule(Pinv)
def _pinv_jvp(ctx, out, tangents):
    a, x = ctx.saved
    ta = np.asarray(tangents[0])
    tt = mT(ta)
    eye_m, eye_n = np.eye(a.shape[-2]), np.eye(a.shape[-1])
    return (-(x @ ta @ x) + x @ mT(x) @ tt @ (eye_m - a @ x)
            + (eye_n - x @ a) @ tt @ mT(x) @ x).astype(out.dtype, copy=False)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The pseudo-inverse (*, n, m) of A (*, m, n): singular values at or below
    max(atol, rtol * s_max) count as 0. `rcond` is the older name of rtol; `hermitian`
    computes it from `eigh` (A symmetric, its lower triangle read)."""
    if rcond is not None:
        if rtol is not None or atol is not None:
            raise RuntimeError("linalg.pinv: rcond cannot be given with atol or rtol")
        rtol = rcond
    a = A._array
    if a.ndim < 2 or a.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"linalg.pinv({torch_dtype_name(a.dtype)}{list(a.shape)}): expected "
                           f"a tensor with 2 or more dimensions of float or double types")
    if hermitian:
        check_square(a, "linalg.eigh")  # the decomposition it uses, named as PyTorch does
    return Pinv.apply(A, atol=atol, rtol=rtol, hermitian=hermitian)


def pinverse(input, rcond=1e-15):
    """`torch.pinverse`: `linalg.pinv` with rtol `rcond`."""
    return pinv(input, rtol=rcond)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number (*) int64 of singular values of A (*, m, n) above max(atol, rtol * s_max)
    (of eigenvalues' absolute values when `hermitian`). `tol` is the older name of atol; A
    is `input`, PyTorch's name for the argument."""
    from .tensor import Tensor
    A = input
    op = "linalg.matrix_rank"
    if tol is not None:
        if rtol is not None or atol is not None:
            raise RuntimeError(f"{op}: tol cannot be given with atol or rtol")
        atol, rtol = tol, 0.0
    a = A._array
    check_matrix(a, op)
    if hermitian:
        check_square(a, "linalg.eigh")
        values = np.abs(np.linalg.eigvalsh(a))
    elif a.size == 0:
        values = np.zeros(a.shape[:-2] + (0,), a.dtype)
    else:
        values = np.linalg.svd(a, compute_uv=False)
    cut = tolerance(a, values, atol, rtol, op)
    return Tensor._wrap((values > cut).sum(-1).astype(np.int64))
