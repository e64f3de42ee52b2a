"""Matrix product with NumPy's `matmul` semantics (1-D, 2-D and batched, batch dims broadcast).

The forward and both gradients are three calls of one kernel, `kernels.matmul` (via `mm`):
    C = A @ B,   dA = dC @ B^T,   dB = A^T @ dC
Where batch dims were broadcast, a gradient keeps them and the engine sums them away.
"""
from __future__ import annotations

import numpy as np

from .. import kernels
from ..autograd import Function


def mm(a, b):
    """`kernels.matmul(a, b)` for inputs already checked. Below `kernels.PARALLEL_MIN_WORK`
    multiply-adds the kernels call `np.matmul` anyway; calling it here skips their checks,
    which cost several times a 4x4 product."""
    if _small(a, b):
        return np.matmul(a, b)
    return kernels.matmul(a, b)


def _small(a, b):
    return max(a.size * b.shape[-1], b.size * a.shape[-2]) < kernels.PARALLEL_MIN_WORK


def _serial(a, b):
    """Whether the 2-D product a @ b is small enough to be one call in the calling thread."""
    return a.size * b.shape[1] < kernels.SERIAL_MATMUL_MAX_WORK


def addmm(bias, a, b):
    """bias + a @ b for 2-D a, b: `kernels.addmm` (in OpenBLAS's blocks the gemm adds the
    bias). A product small enough for one call in this thread, or a bias of another dtype or
    shape (broadcast, cast by NumPy's in-place rules), is `mm` and an in-place add."""
    if _serial(a, b) or bias.dtype != a.dtype or bias.shape != b.shape[1:]:
        out = mm(a, b)
        out += bias
        return out
    return kernels.addmm(bias, a, b)


def mm_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for 2-D a, b: `kernels.matmul_and_sum` (in OpenBLAS's blocks a's
    rows are summed as the gemm reads them), or `mm` and NumPy's sum for a small product."""
    if _serial(a, b):
        return mm(a, b), a.sum(axis=0)
    return kernels.matmul_and_sum(a, b)


def _swap(x):
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


def _shape_error(a, b):
    """The ValueError naming what is wrong with the shapes of a @ b."""
    if a.ndim == 0 or b.ndim == 0:
        return ValueError(f"matmul: both operands need at least 1 dim, got shapes {a.shape} "
                          f"and {b.shape}")
    k = b.shape[-2 if b.ndim > 1 else 0]
    if a.shape[-1] != k:
        return ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: inner "
                          f"dimensions {a.shape[-1]} and {k} differ")
    return ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch dimensions "
                      f"{a.shape[:-2]} and {b.shape[:-2]} do not broadcast")


class MatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        if a.ndim == 0 or b.ndim == 0:
            raise _shape_error(a, b)
        if a.dtype != b.dtype:  # np.matmul would promote; PyTorch refuses, and so do we
            raise TypeError(f"matmul: operands have different dtypes {a.dtype} and {b.dtype}; "
                            f"convert one with .float() or .double()")
        ctx.ndims = (a.ndim, b.ndim)
        # 1-D operands become matrices, as in NumPy, and the added axis is dropped afterwards
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        try:
            out = mm(a2, b2)
        except ValueError:  # the shapes are checked only when the product fails
            raise _shape_error(a, b) from None
        ctx.save_for_backward(a2, b2)
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
            ga = mm(g, _swap(b))
            if ctx.ndims[0] == 1:
                ga = ga[..., 0, :]  # drop the axis the forward added
        if need[1]:
            if b.ndim == 2 and a.ndim > 2:
                # a weight shared by every batch row: one big (K, N) @ (N, M) product
                gb = mm(_swap(a.reshape(-1, a.shape[-1])), g.reshape(-1, g.shape[-1]))
            else:
                gb = mm(_swap(a), g)
            if ctx.ndims[1] == 1:
                gb = gb[..., 0]
        return ga, gb
