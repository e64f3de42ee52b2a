"""`Tensor.unfold(dimension, size, step)`: the windows of `size` elements, `step` apart,
along one dim, as a view (PyTorch's `UnfoldBackward0`).

A (N, L) tensor unfolded along dim 1 is (N, W, size) with W = (L - size) // step + 1: the dim
becomes the window positions and a new last dim holds each window's elements. No element is
copied; windows that overlap (step < size) show one element several times, so such a view
is read-only, as an expanded tensor is. Its gradient adds each window's gradient back where
the window was read (`FoldDim`); the two ops are each other's adjoints, so gradients of any
order flow through them (their tensor-level rules are in graph_rules_reduce_shape.py).
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..autograd.op import Op
from ._util import normalize_dim


class UnfoldDim(Op):
    complex_aware = True
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
        return fold(g, ctx.in_shape, ctx.dim if ctx.in_shape else 0, ctx.size, ctx.step)


def fold(g, shape, d, size, step):
    """The adjoint of unfolding an array of `shape` along dim d: each window's elements of g
    added back where they were read."""
    if shape == ():
        return g.reshape(())
    grad = np.zeros(shape, dtype=g.dtype)
    n = g.shape[d]  # window positions
    for k in range(size):  # element k of every window: positions k, k + step, ...
        at = (slice(None),) * d + (slice(k, k + (n - 1) * step + 1, step),)
        grad[at] += np.take(g, k, axis=-1)
    return grad


class FoldDim(Op):
    """`fold(g, ...)` as an op: the gradient of `UnfoldDim`, whose gradient is an unfold."""
    complex_aware = True

    @staticmethod
    def forward(ctx, g, shape=(), dimension=0, size=1, step=1):
        ctx.args = (dimension, size, step)
        return fold(g, shape, dimension, size, step)

    @staticmethod
    def backward(ctx, gg):
        d, size, step = ctx.args
        return np.array(UnfoldDim.forward(object.__new__(UnfoldDim), gg, d, size, step))
