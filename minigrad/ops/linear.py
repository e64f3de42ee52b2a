"""The linear layer's op, y = x W^T + b, as one node: the layer a Transformer calls most.

Written from smaller ops it would be a transpose, a batched product and a broadcast add, each
with its own node and temporaries; one node with a hand-derived backward does the same math.
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op
from ..errors import ShapeError
from .matmul import addmm, mm, mm_and_sum


class Linear(Op):
    """y = x W^T + b for x of shape (..., D_in), W (D_out, D_in), b (D_out,).

    The leading dims are flattened into one (N, D_in) matrix, so every product is one big
    matmul rather than a batch of small ones.
    """

    @staticmethod
    def forward(ctx, x, weight, bias=None):
        shape, w_shape = x.shape, weight.shape
        if shape[-1] != w_shape[1]:
            raise ShapeError(f"linear: input of shape {shape} has {shape[-1]} features but "
                             f"the weight of shape {w_shape} expects {w_shape[1]} (mat1 and "
                             f"mat2 shapes cannot be multiplied ({x.size // max(shape[-1], 1)}x"
                             f"{shape[-1]} and {w_shape[1]}x{w_shape[0]}))")
        if bias is not None and bias.ndim and bias.shape[-1] not in (1, w_shape[0]):
            raise ShapeError(f"linear: bias of shape {bias.shape} does not fit the "
                             f"{w_shape[0]} outputs of the weight of shape {w_shape}")
        if x.dtype != weight.dtype or (bias is not None and bias.dtype != x.dtype):
            raise RuntimeError(f"linear: expected input, weight and bias to have the same "
                               f"dtype, but got input {x.dtype}, weight {weight.dtype}"
                               f"{'' if bias is None else f', bias {bias.dtype}'}")
        # x itself is saved, not the (N, D_in) view: the version check then finds its tensor
        # at once instead of searching the operands for the owner of a view's memory
        ctx.save_for_backward(x, weight)
        ctx.lead = shape[:-1]
        x2 = x.reshape(-1, shape[-1])
        if len(shape) == 2:
            # with a bias, a large product adds it in its own pass (BLAS's beta = 1)
            return mm(x2, weight.T) if bias is None else addmm(bias, x2, weight.T)
        # the product written into the result's own (..., D_out) array through a flat view of
        # it: a view returned would cost Op.apply a search for whose memory it shows
        y = np.empty(ctx.lead + w_shape[:1], x.dtype)
        flat = y.reshape(-1, w_shape[0])
        if bias is None:
            mm(x2, weight.T, out=flat)
        else:
            addmm(bias, x2, weight.T, out=flat)
        return y

    @staticmethod
    def backward(ctx, g):
        x, weight = ctx.saved
        x2 = x.reshape(-1, x.shape[-1])
        g2 = g.reshape(-1, weight.shape[0])
        need = ctx.needs_input_grad
        gx = gb = None
        if need[0] and len(need) > 2 and need[2]:
            # the bias gradient (column sums of g) taken as the dX product reads g's rows
            gx, gb = mm_and_sum(g2, weight)
        elif need[0]:
            gx = mm(g2, weight)
        elif len(need) > 2 and need[2]:
            gb = g2.sum(axis=0)
        if gx is not None:
            gx = gx.reshape(ctx.lead + (weight.shape[1],))
        gw = mm(g2.T, x2) if need[1] else None
        return gx, gw, gb
