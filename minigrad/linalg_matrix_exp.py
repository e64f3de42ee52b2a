"""The matrix exponential: `linalg.matrix_exp` (with `torch.matrix_exp`), exp(A) = sum A^k / k!
of each square matrix, batched over leading dims, in the input's dtype.

It is computed by scaling and squaring (Higham, "The scaling and squaring method for the
matrix exponential revisited", 2005): A is halved s times until its 1-norm is at most
theta_13, exp(A / 2^s) is its [13/13] Pade approximant, squared s times. PyTorch uses a
Taylor form of degree up to 18 instead; both are accurate to the dtype's rounding.

The gradient is the adjoint of the Frechet derivative, L(A^T, g), which is the upper right
block of exp([[A^T, g], [0, A^T]]) (Najfeld and Havel; PyTorch computes it the same way). The
tensor rule builds that block from tensors and exponentiates it with this same op, so the
gradient can be differentiated again; forward mode is the block exp([[A, dA], [0, A]]).
A complex A (first derivatives) takes A^H for A^T, as PyTorch's.
"""
from __future__ import annotations

import numpy as np

from .autograd.op import Op
from .graph_rules import constant, rule, saved_input
from .jvp_rules import jvp_rule
from .linalg_checks import check_square
from .linalg_forms import mH

__all__ = ["matrix_exp"]

_THETA_13 = 5.371920351148152  # the largest 1-norm at which [13/13] Pade is exact to 2^-53
_PADE_13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
            1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0,
            33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0)


def expm(a: np.ndarray) -> np.ndarray:
    """exp(A) (*, n, n) of a (*, n, n), each matrix scaled by its own power of 2."""
    n = a.shape[-1]
    if a.size == 0:
        return a.copy()
    norm = np.abs(a).sum(-2).max(-1)  # the 1-norm, (*)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.ceil(np.log2(norm / _THETA_13))
    s = np.where(np.isfinite(s) & (s > 0), s, 0).astype(np.int64)  # inf and NaN stay as they are
    x = a * np.exp2(-s).astype(a.dtype)[..., None, None]
    b, eye = _PADE_13, np.eye(n, dtype=a.dtype)
    x2 = x @ x
    x4 = x2 @ x2
    x6 = x4 @ x2
    u = x @ (x6 @ (b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2
             + b[1] * eye)
    v = x6 @ (b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    out = np.linalg.solve(v - u, v + u)
    for j in range(int(s.max(initial=0))):
        squared = out @ out
        out = np.where((j < s)[..., None, None], squared, out)
    return out.astype(a.dtype, copy=False)


def _block(a, b):
    """[[a, b], [0, a]] (*, 2n, 2n) from a, b (*, n, n), batch dims broadcast."""
    shape = np.broadcast_shapes(a.shape, b.shape)
    a, b = np.broadcast_to(a, shape), np.broadcast_to(b, shape)
    return np.concatenate([np.concatenate([a, b], -1),
                           np.concatenate([np.zeros_like(a), a], -1)], -2)


class MatrixExp(Op):
    """(*, n, n) -> (*, n, n): exp of each matrix."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        check_square(a, "linalg.matrix_exp", complex=True)
        ctx.save_for_backward(a)
        return expm(a)

    @staticmethod
    def backward(ctx, g):
        a = ctx.saved[0]
        n = a.shape[-1]
        return expm(_block(mH(a), g))[..., :n, n:]


@rule(MatrixExp)
def _matrix_exp_rule(ctx, g):
    from .functional import cat
    a = ctx.saved[0]
    n = a.shape[-1]
    at = saved_input(ctx, 0, a).transpose(-2, -1)
    zeros = constant(np.zeros(a.shape, a.dtype))
    block = cat([cat([at, g], -1), cat([zeros, at], -1)], -2)
    return MatrixExp.apply(block)[..., :n, n:]


@jvp_rule(MatrixExp)
def _matrix_exp_jvp(ctx, out, tangents):
    a = ctx.saved[0]
    n = a.shape[-1]
    return expm(_block(a, np.asarray(tangents[0], a.dtype)))[..., :n, n:]


def matrix_exp(A):
    """exp(A) (*, n, n) of each square matrix of A (*, n, n)."""
    return MatrixExp.apply(A)
