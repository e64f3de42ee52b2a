"""The Vandermonde matrix: `linalg.vander`, the powers x^0, x^1, ..., x^(N-1) of each element
of x as a row, built by a cumulative product (as PyTorch builds it), so its gradient is
cumprod's and integer inputs stay integers; and the older `torch.vander`, of a vector, whose
powers run the other way unless `increasing=True` (NumPy's order).
"""
from __future__ import annotations

import numpy as np

__all__ = ["torch_vander", "vander"]


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


def torch_vander(x, N=None, increasing=False):
    """`torch.vander`: x (n,) -> (n, N), row i the powers x[i]^(N-1), ..., x[i]^0 (or
    x[i]^0, ..., x[i]^(N-1) with increasing); N defaults to n."""
    if x.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor. (vander of x of shape "
                           f"{tuple(x.shape)})")
    N = x.shape[0] if N is None else N
    if N < 0:
        raise RuntimeError(f"N must be non-negative. (vander of x of shape {tuple(x.shape)}, "
                           f"N={N})")
    if x.dtype.kind in "biu" and x.dtype != np.int64:
        x = x.long()   # (PyTorch's promotion: bool and the other integers give int64)
    if N <= 1:
        from .tensor import Tensor
        out = Tensor._wrap(np.ones((x.shape[0], N), x.dtype))
    else:
        out = vander(x, N)
    return out if increasing else out.flip(-1)
