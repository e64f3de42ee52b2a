"""Running sums along a dim, and the accumulation in PyTorch's types that running products
share (`running`). Element i of cumsum is a_0 + ... + a_i, so a_j feeds every output from j
on, and its gradient is the sum of the incoming gradient from j to the end: a cumsum of the
reversed gradient, reversed back."""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ._util import normalize_dim


class Cumsum(Op):
    complex_aware = True  # linear with real coefficients: no conjugate in its gradient

    @staticmethod
    def forward(ctx, a, dim=0, dtype=None):
        ctx.dim = normalize_dim(dim, a.ndim, "cumsum")
        if dtype is None and not np.issubdtype(a.dtype, np.inexact):
            dtype = np.int64  # bool and int sums widen to int64, as in PyTorch
        if a.ndim == 0:
            return np.asarray(a, dtype=dtype).copy()
        return running(np.cumsum, a, ctx.dim, dtype)

    @staticmethod
    def backward(ctx, g):
        if g.ndim == 0:
            return g
        rev = np.flip(g, ctx.dim)
        return np.flip(running(np.cumsum, rev, ctx.dim), ctx.dim)


def running(scan, a, axis, dtype=None):
    """np.cumsum or np.cumprod of `a` along `axis` into `dtype` (a's if None), in PyTorch's CPU
    accumulator type and rounded once per element: float32 runs in double (a float32 running
    sum of 0.1 ten times ends at 1.0), float16 in float32 (not double: a double sum rounded
    to float16 differs from PyTorch's in a few elements of a long scan)."""
    out = np.dtype(dtype or a.dtype)
    wider = {np.float32: np.float64, np.float16: np.float32}.get(out.type)
    if wider is not None:
        return scan(a, axis=axis, dtype=wider).astype(out)
    return scan(a, axis=axis, dtype=dtype)
