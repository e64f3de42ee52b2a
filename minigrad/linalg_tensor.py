"""The tensor forms of the inverse and of linear systems: `linalg.tensorinv` and
`linalg.tensorsolve`, which read a tensor as the matrix of its leading dims by its trailing
ones and call `inv` and `solve` on it, so their gradients are those ops' (every order).
"""
from __future__ import annotations

import math

from .linalg_inverse import inv, solve

__all__ = ["tensorinv", "tensorsolve"]


def tensorinv(A, ind=2):
    """X of shape A.shape[ind:] + A.shape[:ind] with tensordot(X, A, ind) the identity, for
    A whose leading `ind` dims hold as many elements as its other dims."""
    if not isinstance(ind, int) or ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows} (linalg.tensorinv "
                           f"of shape {tuple(A.shape)}, ind={ind})")
    return inv(A.reshape(rows, cols)).reshape(tuple(A.shape[ind:]) + tuple(A.shape[:ind]))


def tensorsolve(A, other, dims=None):
    """X of shape A.shape[B.ndim:] with tensordot(A, X, X.ndim) = B, after moving the dims
    `dims` of A to its end (B is `other`, PyTorch's name for the argument)."""
    B = other
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        rest = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*rest, *dims)
    result_shape = tuple(A.shape[B.ndim:])
    cols, rows = math.prod(result_shape), B.numel()
    if cols != rows:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == prod(self.shape[:other.ndim]), but got {cols} != {rows} "
                           f"(linalg.tensorsolve of A {tuple(A.shape)} and B {tuple(B.shape)})")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(result_shape)
