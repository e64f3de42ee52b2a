"""`Tensor.unfold(dimension, size, step)`: the windows of `size` elements, `step` apart,
along one dim, as a view (PyTorch's `UnfoldBackward`).

A (N, L) tensor unfolded along dim 1 is (N, W, size) with W = (L - size) // step + 1: the dim
becomes the window positions and a new last dim holds each window's elements. No element is
copied; windows that overlap (step < size) show one element several times, so such a view
is read-only, as an expanded tensor is.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..autograd.function import Function
from ._util import normalize_dim


class UnfoldDim(Function):
    @staticmethod
    def forward(ctx, a, dimension=0, size=1, step=1):
        if a.ndim == 0:  # PyTorch's 0-d tensor unfolds as one element along a dim of its own
            a = a.reshape(1)
            d = normalize_dim(dimension, 1, "unfold")
            out = UnfoldDim.forward(ctx, a, d, size, step)
            ctx.in_shape = ()
            return out.reshape(out.shape[:-1])
        d = normalize_dim(dimension, a.ndim, "unfold")
        if step <= 0:
            raise RuntimeError(f"unfold: step is {step} but must be > 0")
        if size < 0 or size > a.shape[d]:
            raise RuntimeError(f"unfold: maximum size for tensor at dimension {d} is "
                               f"{a.shape[d]} but size is {size}")
        ctx.in_shape, ctx.dim, ctx.size, ctx.step = a.shape, d, size, step
        w = sliding_window_view(a, size, axis=d, writeable=step >= size and a.flags.writeable)
        return w[(slice(None),) * d + (slice(None, None, step),)]

    @staticmethod
    def backward(ctx, g):
        if ctx.in_shape == ():
            return g.reshape(())
        d, size, step = ctx.dim, ctx.size, ctx.step
        shape = ctx.in_shape
        grad = np.zeros(shape, dtype=g.dtype)
        n = g.shape[d]  # window positions
        for k in range(size):  # element k of every window: positions k, k + step, ...
            at = (slice(None),) * d + (slice(k, k + (n - 1) * step + 1, step),)
            grad[at] += np.take(g, k, axis=-1)
        return grad
