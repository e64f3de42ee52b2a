"""Matrix product with NumPy's `matmul` semantics (1-D, 2-D and batched, batch dims broadcast).

The forward and both gradients are three calls of one kernel, `kernels.matmul`:
    C = A @ B,   dA = dC @ B^T,   dB = A^T @ dC
Where batch dims were broadcast, a gradient keeps them and the engine sums them away.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd import Function


def _swap(x):
    return np.swapaxes(x, -1, -2)


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise ValueError(f"matmul: both operands need at least 1 dim, got shapes "
                             f"{a.shape} and {b.shape}")
        if a.shape[-1] != b.shape[-2 if b.ndim > 1 else 0]:
            k = b.shape[-2 if b.ndim > 1 else 0]
            raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: inner "
                             f"dimensions {a.shape[-1]} and {k} differ")
        if a.ndim > 2 and b.ndim > 2:
            try:
                np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            except ValueError:
                raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch "
                                 f"dimensions {a.shape[:-2]} and {b.shape[:-2]} do not "
                                 f"broadcast") from None
        if a.dtype != b.dtype:
            raise TypeError(f"matmul: operands have different dtypes {a.dtype} and {b.dtype}; "
                            f"convert one with .float() or .double()")
        ctx.ndims = (a.ndim, b.ndim)
        # 1-D operands become matrices, as in NumPy, and the added axis is dropped afterwards
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        ctx.save_for_backward(a2, b2)
        out = kernels.matmul(a2, b2)
        if a.ndim == 1:
            out = out[..., 0, :]
        if b.ndim == 1:
            out = out[..., 0]
        return out

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved
        if ctx.ndims[1] == 1:
            g = g[..., None]
        if ctx.ndims[0] == 1:
            g = g[..., None, :]
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = kernels.matmul(g, _swap(b))
            if ctx.ndims[0] == 1:
                ga = ga[..., 0, :]  # drop the axis the forward added
        if need[1]:
            if b.ndim == 2 and a.ndim > 2:
                # a weight shared by every batch row: one big (K, N) @ (N, M) product
                gb = kernels.matmul(_swap(a.reshape(-1, a.shape[-1])), g.reshape(-1, g.shape[-1]))
            else:
                gb = kernels.matmul(_swap(a), g)
            if ctx.ndims[1] == 1:
                gb = gb[..., 0]
        return ga, gb
