"""Matrix product with NumPy's `matmul` semantics (1-D, 2-D and batched, batch dims broadcast).

The forward and both gradients are three products, each taking the route that
`kernels.products.route` picks (its table says which):
    C = A @ B,   dA = dC @ B^T,   dB = A^T @ dC
Where batch dims were broadcast, a gradient keeps them and the engine sums them away.

A gradient takes its input's memory layout (PyTorch's "gradient layout contract"): dA is
written in the memory order of A, dB in that of B. When A is a permuted view (attention's
heads, (B, H, L, d_k) over (B, L, H, d_k) memory), dA then comes out in (B, L, H, d_k)
memory too, so the backward of the permute is contiguous and that of the reshape before it
is a view instead of a copy. The forward can be given such a layout as well (`like`).
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..errors import DTypeError, ShapeError, size_mismatch
from ..kernels.products import product, product_add, product_and_sum


def mm(a, b, like=None, out=None):
    """a @ b for operands of one dtype, in the memory order of `like` (an array of the
    result's ndim: its axes ordered by stride, as np.empty_like keeps them) or in C order;
    or into `out`, a C-contiguous array of the result's shape and dtype, if given."""
    if out is None and like is not None and not like.flags.c_contiguous:
        out = _out_like(like, a, b)
    return product(a, b, out)


def _out_like(like, a, b):
    """An empty result of a @ b in the memory order of `like`, or None for C order: the one
    place that picks a product's layout. It picks like's order only where the gemm calls can
    write it in place (rows or columns of each matrix contiguous; a (..., K) @ (K, N) product,
    done as one flat 2-D product, writes C order only): otherwise the kernel would compute in
    C order and copy, which costs more than it saves."""
    if a.ndim > 2 and b.ndim == 2:
        return None
    batch = a.shape[:-2]
    if batch != b.shape[:-2]:
        try:
            batch = np.broadcast_shapes(batch, b.shape[:-2])
        except ValueError:  # the product itself reports the shapes
            return None
    shape = batch + (a.shape[-2], b.shape[-1])
    if like.ndim != len(shape):
        return None
    out = np.empty_like(like, dtype=a.dtype, shape=shape)  # order 'K': like's axis order
    return out if out.itemsize in out.strides[-2:] else None


def addmm(bias, a, b, out=None):
    """bias + a @ b for 2-D a, b of one dtype (the linear op checks them): `kernels.addmm`
    (where the gemm itself may add the bias), into `out` as `mm`'s if given. A bias of
    another dtype or shape (broadcast, cast by NumPy's in-place rules) is `mm` and an
    in-place add."""
    if bias.dtype != a.dtype or bias.shape != b.shape[1:]:
        out = mm(a, b, out=out)
        out += bias
        return out
    return product_add(bias, a, b, out)


def mm_and_sum(a, b):
    """(a @ b, a.sum(axis=0)) for 2-D a, b of one dtype: `kernels.matmul_and_sum` (where a's
    rows may be summed as the gemm reads them)."""
    return product_and_sum(a, b)


def _swap(x):
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


def _shape_error(a, b):
    """The ShapeError naming what is wrong with the shapes of a @ b."""
    if a.ndim == 0 or b.ndim == 0:
        return ShapeError(f"matmul: both operands need at least 1 dim, got shapes {a.shape} "
                          f"and {b.shape} (both arguments to matmul need to be at least 1D)")
    k = b.shape[-2 if b.ndim > 1 else 0]
    if a.shape[-1] != k:
        return ShapeError(f"matmul: cannot multiply {a.shape} by {b.shape}: inner "
                          f"dimensions {a.shape[-1]} and {k} differ{_torch_words(a, b)}")
    return ShapeError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch dimensions "
                      f"{a.shape[:-2]} and {b.shape[:-2]} do not broadcast. "
                      f"{size_mismatch(a.shape[:-2], b.shape[:-2])}")


def _torch_words(a, b):
    """PyTorch's message for inner sizes that differ, which scripts search for: a matrix
    times a matrix names the operands as the (rows x cols) it multiplies."""
    if a.ndim == 1 and b.ndim == 1:
        return (f" (inconsistent tensor size, expected tensor [{a.size}] and src [{b.size}] to "
                f"have the same number of elements)")
    if b.ndim == 2:
        rows = a.size // a.shape[-1] if a.shape[-1] else 0
        return (f" (mat1 and mat2 shapes cannot be multiplied ({rows}x{a.shape[-1]} and "
                f"{b.shape[0]}x{b.shape[1]}))")
    return ""


class MatMul(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, b, like=None):
        """like: None, or an array whose memory order the result takes (see `mm`)."""
        if a.ndim == 0 or b.ndim == 0:
            raise _shape_error(a, b)
        if a.dtype != b.dtype:  # np.matmul would promote; PyTorch refuses, and so do we
            raise DTypeError(f"matmul: operands have different dtypes {a.dtype} and {b.dtype}; "
                             f"convert one with .float() or .double()")
        ctx.ndims = (a.ndim, b.ndim)
        # 1-D operands become matrices, as in NumPy, and the added axis is dropped afterwards
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        try:
            out = mm(a2, b2, like)
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
        if g.dtype.kind == "c":  # complex: dA = dC @ B^H, dB = A^H @ dC
            a, b = a.conj(), b.conj()
        if ctx.ndims[1] == 1:
            g = g[..., None]
        if ctx.ndims[0] == 1:
            g = g[..., None, :]
        need = ctx.needs_input_grad
        ga = gb = None
        if need[0]:
            ga = mm(g, _swap(b), like=a)
            if ctx.ndims[0] == 1:
                ga = ga[..., 0, :]  # drop the axis the forward added
        if need[1]:
            if b.ndim == 2 and a.ndim > 2:
                # a weight shared by every batch row: one big (K, N) @ (N, M) product
                gb = mm(_swap(a.reshape(-1, a.shape[-1])), g.reshape(-1, g.shape[-1]),
                        like=b)
            else:
                gb = mm(_swap(a), g, like=b)
            if ctx.ndims[1] == 1:
                gb = gb[..., 0]
        return ga, gb
