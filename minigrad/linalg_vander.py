"""The Vandermonde matrix: `linalg.vander`, the powers x^0, x^1, ..., x^(N-1) of each element
of x as a row, built by a cumulative product (as PyTorch builds it), so its gradient is
cumprod's and integer inputs stay integers.
"""
from __future__ import annotations

import numpy as np

__all__ = ["vander"]


def vander(x, N=None):
    """(*, n) -> (*, n, N): element [..., i, j] is x[..., i] ** j; N defaults to n."""
    from .functional import cat
    from .tensor import Tensor
    if x.dtype == np.bool_:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer "
                           "tensors, but got Bool")
    n = x.shape[-1] if x.ndim else 1
    N = n if N is None else N
    if N <= 1:
        raise RuntimeError(f"N must be greater than 1. (linalg.vander of x of shape "
                           f"{tuple(x.shape)}, N={N})")
    column = x.unsqueeze(-1)
    ones = Tensor._wrap(np.ones(tuple(column.shape), x.dtype))
    return cat([ones, column.expand(*column.shape[:-1], N - 1)], -1).cumprod(-1)
