"""Vector p-norms over dims: (sum |a|^p)^(1/p), with p = inf the largest |a|.

The gradient of the 2-norm is a / ||a||; where the norm is 0 that is 0/0, and PyTorch (hence
minigrad) passes back 0, a valid subgradient, so a zero vector never produces NaN.
"""
from __future__ import annotations

import math

import numpy as np

from ..autograd.op import Op
from ._util import expand_reduced, normalize_dims


class Norm(Op):
    @staticmethod
    def forward(ctx, a, p=2.0, dim=None, keepdim=False):
        if not np.issubdtype(a.dtype, np.floating):
            raise TypeError(f"norm: needs a floating-point tensor, got dtype {a.dtype}")
        p = float(p)
        if not p > 0:
            raise ValueError(f"norm: p must be positive or inf, got {p}")
        ctx.dims = normalize_dims(dim, a.ndim, "norm")
        ctx.p, ctx.keepdim = p, keepdim
        absa = np.abs(a)
        if p == math.inf:
            out = absa.max(axis=ctx.dims, keepdims=True) if a.size else np.zeros((), a.dtype)
        elif p == 2.0:
            out = np.sqrt((a * a).sum(axis=ctx.dims, keepdims=True))
        elif p == 1.0:
            out = absa.sum(axis=ctx.dims, keepdims=True)
        else:
            out = (absa ** p).sum(axis=ctx.dims, keepdims=True) ** (1 / p)
        out = out.astype(a.dtype, copy=False)
        ctx.save_for_backward(a, out)
        return out if keepdim else np.squeeze(out, axis=ctx.dims)

    @staticmethod
    def backward(ctx, g):
        a, out = ctx.saved
        g = expand_reduced(g, out.shape, ctx.dims, ctx.keepdim).reshape(out.shape)
        p = ctx.p
        safe = np.where(out == 0, 1, out)  # where the norm is 0 the gradient is 0
        if p == math.inf:
            hit = np.abs(a) == out
            local = np.sign(a) * hit / hit.sum(axis=ctx.dims, keepdims=True)
        elif p == 2.0:
            local = a / safe
        elif p == 1.0:
            local = np.sign(a)
        else:
            local = np.sign(a) * np.abs(a) ** (p - 1) / safe ** (p - 1)
        return (g * np.where(out == 0, 0, local)).astype(a.dtype, copy=False)
