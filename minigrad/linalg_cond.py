"""The condition number: `linalg.cond`, |A|_p |A^-1|_p of each matrix, composed of
`svdvals`, `matrix_norm`, `inv_ex` and element-wise ops, so its gradients are theirs, as
PyTorch's composite is.

As PyTorch: p None or 2 is s_max / s_min and -2 its inverse (any m x n, from the singular
values); 'nuc' is sum(s) sum(1/s); 'fro', 1, -1, inf, -inf use the inverse, taken as
infinite where A is singular (info > 0), with the NaN of 0 * inf read as inf. An empty
matrix's condition number is 0.
"""
from __future__ import annotations

import math

import numpy as np

from .linalg_checks import check_float
from .linalg_ex import inv_ex
from .linalg_norms import matrix_norm
from .linalg_svd import svdvals

__all__ = ["cond"]

_NORMS = (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf)


def cond(A, p=None):
    """The condition number (*) of each matrix of A (*, m, n) in the norm p (m = n unless p
    is None, 2 or -2)."""
    from .tensor import Tensor
    op = "linalg.cond"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: The input tensor must have at least 2 dimensions.")
    check_float(A._array, op)
    if p not in _NORMS:
        raise RuntimeError(f"{op} got an invalid norm type: {p}")
    m, n = A.shape[-2:]
    if p not in (None, 2, -2) and m != n:
        raise RuntimeError(f"{op}(ord={p}): A must be batches of square matrices, but they are "
                           f"{m} by {n} matrices")
    if A.numel() == 0:
        return Tensor._wrap(np.zeros(A.shape[:-2], A.dtype))
    if p in (None, 2, -2) or p == "nuc":
        s = svdvals(A)
        with np.errstate(divide="ignore", invalid="ignore"):
            if p == "nuc":
                return s.sum(-1) * s.reciprocal().sum(-1)
            return s[..., -1] / s[..., 0] if p == -2 else s[..., 0] / s[..., -1]
    inverse, info = inv_ex(A)
    if info._array.any():
        inverse = inverse.masked_fill(Tensor._wrap(info._array[..., None, None] > 0), math.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.nan_to_num(math.inf, math.inf, -math.inf)
