"""The products of `torch.linalg`: `matmul` (the `@` of tensors), `multi_dot` (a chain of
matrix products, its first and last factors possibly vectors), `matrix_power` (A^n by repeated
squaring; A^-n is the inverse's), `vecdot` (dot products along a dim, broadcast) and
`diagonal` (`torch.diagonal` over the last two dims by default).

Each is composed of matmul, the inverse, multiplication and sums, ops with backward,
double-backward and forward-mode rules.
"""
from __future__ import annotations

import numpy as np

from .linalg_checks import check_float, with_zero_gradient
from .linalg_inverse import Inv

__all__ = ["diagonal", "matmul", "matrix_power", "multi_dot", "vecdot"]


def matmul(input, other):
    """`input @ other`, with matmul's broadcasting and its rules for 1-D operands."""
    return input @ other


def multi_dot(tensors):
    """tensors[0] @ tensors[1] @ ... : 2-D matrices, the first may be a (n,) row vector and
    the last a (n,) column vector (the result then loses that dim)."""
    op = "multi_dot()"
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"{op}: expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        where = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
        if (t.ndim not in (1, 2)) if where else t.ndim != 2:
            kind = f"the {where} tensor must be 1D or 2D" if where else \
                f"tensor {i} must be 2D"
            raise RuntimeError(f"{op}: {kind} but got {t.ndim}D")
    for i, (a, b) in enumerate(zip(tensors, tensors[1:])):
        if a.shape[-1] != b.shape[0]:
            raise RuntimeError(f"{op}: tensors {i} and {i + 1} with shapes {list(a.shape)} and "
                               f"{list(b.shape)} cannot be multiplied")
    out = tensors[0]
    for t in tensors[1:]:
        out = out @ t
    return out


def matrix_power(A, n):
    """A^n for square matrices A (*, m, m): the identity for n = 0, and for n < 0 the power of
    the inverse (A must then be a float tensor)."""
    op = "linalg.matrix_power"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{op}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"{op}(): argument 'n' must be int, not {type(n).__name__}")
    if n == 0:  # the identity, recorded with a zero gradient as PyTorch's
        eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
        return with_zero_gradient(np.array(eye), A)
    if n < 0:
        check_float(A._array, "linalg.inv")
        A, n = Inv.apply(A), -n
    result, square = None, A
    while n:  # binary powering: log2(n) squarings
        if n & 1:
            result = square if result is None else result @ square
        n >>= 1
        if n:
            square = square @ square
    return result


def vecdot(x, y, *, dim=-1):
    """The dot products of x and y along `dim` (the other dims broadcast)."""
    return (x * y).sum(dim)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """`torch.diagonal` over dims (-2, -1) by default: the diagonals of a batch of matrices."""
    return A.diagonal(offset, dim1, dim2)
