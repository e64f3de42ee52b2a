"""The feed-forward network of a training Transformer layer as one op, run in blocks of rows.

linear2(dropout(relu(linear1(x)))) makes a hidden layer four times as wide as x: (1280, 512)
float32 on the toy model, 2.6 MB, more than the 1 MB L2 cache of a core here. Run as separate
ops, each product and the fused ReLU + dropout read that hidden layer back from L3 or memory,
forward and backward. `FeedForward` runs the whole chain one block of rows at a time, so
that a block's hidden rows (about 256 KB) are written and read again while still in L2:
forward, a block's x @ W1^T + b1, ReLU + dropout, then its rows of the output; backward, a
block's g @ W2, the dropout mask, then its rows of dx, each weight gradient summed over the
blocks. Not in PyTorch (whose Transformer layers have fast paths of their own).

The numbers: the forward makes the calls of the separate ops on a block of rows each (the
dropout mask of each element is the one `dropout` gives it: a hash of its index in the whole
hidden layer), and the backward's gradients of x are the separate ops' row by row; the
weight and bias gradients sum the same terms in another order (by blocks), so they differ
from the separate ops' by float rounding. It is used by the Transformer layers in training
(`feed_forward`, with the same seed the separate dropout would draw).
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd import Function
from minigrad.graph_rules import rule, saved_input
from minigrad.jvp_rules import jvp_rule
from minigrad.kernels import dropout_kernels as _dp
from minigrad.kernels import dropout_ops as _dops
from minigrad.kernels import policy
from minigrad.kernels import reference as _ref
from minigrad.ops import matmul as _matmul
from minigrad.random import next_seed

from . import functional as F

# Elements of the hidden layer per block (128 K: 512 KB of float32, 256 rows of the toy
# model's 512); 64 K (128 rows) was no faster
BLOCK_ELEMENTS = 1 << 17


def block_rows(n, f):
    """Rows per block of an (n, f) hidden layer: a fixed function of the shape (so the numbers
    never depend on the thread count), at least 8."""
    return min(n, max(8, BLOCK_ELEMENTS // max(f, 1)))


def _relu_dropout_rows(pre, p, seed, start, out, mask=None):
    """out = dropout(relu(pre), p, seed) for rows of a hidden layer whose first element is
    element `start` of the whole: each element keeps the mask bit of its index in the whole.
    On the "numpy" backend, `mask` holds those rows of the reference's mask of the whole."""
    if mask is not None:
        return np.multiply(np.maximum(pre, 0), mask, out=out)
    key, threshold, scale = _dops._mask_args(p, seed, pre.dtype)
    key = np.uint64((int(key) + start * _ref.GAMMA) & ((1 << 64) - 1))  # index `start` on
    _dops._run(_dp.RELU_DROPOUT, pre.reshape(-1), pre.reshape(-1), out.reshape(-1), key,
               threshold, scale)
    return out


class FeedForward(Function):
    """y = dropout(relu(x W1^T + b1), p) W2^T + b2 as one op, in blocks of rows (see above).

    x (..., D); w1 (F, D), b1 (F,); w2 (D, F), b2 (D,); y (..., D). The dropout mask is
    `dropout(., p, seed)`'s on the (N, F) hidden layer, N the product of x's leading dims.
    """

    @staticmethod
    def forward(ctx, x, w1, b1, w2, b2, p=0.0, seed=0):
        lead, d = x.shape[:-1], x.shape[-1]
        f = w1.shape[0]
        if w1.shape != (f, d) or b1.shape != (f,) or w2.shape != (d, f) or b2.shape != (d,):
            raise ValueError(f"feed_forward: input {x.shape}, weights {w1.shape} and "
                             f"{w2.shape}, biases {b1.shape} and {b2.shape} do not fit "
                             f"(expected (F, {d}), (F,), ({d}, F), ({d},))")
        if len({a.dtype for a in (x, w1, b1, w2, b2)}) != 1:
            raise TypeError(f"feed_forward: the input and parameters must share one dtype, got "
                            f"{[str(a.dtype) for a in (x, w1, b1, w2, b2)]}")
        x2 = x.reshape(-1, d)
        n = x2.shape[0]
        h = np.empty((n, f), x.dtype)
        y = np.empty((n, d), x.dtype)
        r = block_rows(n, f)
        mask = (_ref.dropout_mask((n, f), p, seed, x.dtype) if p and policy.numpy_backend()
                else None)
        for i in range(0, n, r):
            pre = kernels.addmm(b1, x2[i:i + r], w1.T)
            hb = (np.maximum(pre, 0, out=h[i:i + r]) if not p else
                  _relu_dropout_rows(pre, p, seed, i * f, h[i:i + r],
                                     None if mask is None else mask[i:i + r]))
            y[i:i + r] = kernels.addmm(b2, hb, w2.T)
        ctx.p, ctx.seed, ctx.rows = p, seed, r
        ctx.save_for_backward(x, w1, b1, w2, b2, h)
        return y.reshape(lead + (d,))

    @staticmethod
    def backward(ctx, g):
        x, w1, _, w2, _, h = ctx.saved
        d = x.shape[-1]
        x2, g2 = x.reshape(-1, d), g.reshape(-1, d)
        n, r = x2.shape[0], ctx.rows
        need = ctx.needs_input_grad
        gx = np.empty(x2.shape, x.dtype) if need[0] else None
        gw1 = gb1 = gw2 = gb2 = None
        for i in range(0, n, r):
            gb, hb, xb = g2[i:i + r], h[i:i + r], x2[i:i + r]
            gh, sb2 = kernels.matmul_and_sum(gb, w2)
            gh = (kernels.relu_dropout_backward(hb, gh, ctx.p) if ctx.p else
                  np.multiply(gh, hb > 0, out=gh))
            if gx is not None:
                gx[i:i + r], sb1 = kernels.matmul_and_sum(gh, w1)
            else:
                sb1 = gh.sum(axis=0)
            pw2, pw1 = _matmul.product(gb.T, hb), _matmul.product(gh.T, xb)
            if gw1 is None:
                gw1, gb1, gw2, gb2 = pw1, sb1, pw2, sb2
            else:
                gw1 += pw1
                gb1 += sb1
                gw2 += pw2
                gb2 += sb2
        return (None if gx is None else gx.reshape(x.shape)), gw1, gb1, gw2, gb2


def _separate(x, w1, b1, w2, b2, p, seed):
    """FeedForward by the separate differentiable ops (its rules below use them)."""
    from minigrad import ops
    h = F.linear(x, w1, b1)
    h = ops.ReluDropout.apply(h, p=p, seed=seed) if p else F.relu(h)
    return F.linear(h, w2, b2)


def feed_forward(x, linear1, linear2, p, training=True):
    """linear2(dropout(relu(linear1(x)), p)) as FeedForward, drawing the seed where the
    separate dropout would: the same numbers as the separate layers (see above)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"feed_forward: p must be in [0, 1), got {p}")
    p = p if training else 0.0
    return FeedForward.apply(x, linear1.weight, linear1.bias, linear2.weight, linear2.bias,
                             p=p, seed=next_seed() if p > 0.0 else 0)


@rule(FeedForward)
def _feed_forward_rule(ctx, g):
    """The separate ops' own rules, through a second trace of them on the saved inputs."""
    from minigrad.autograd import grad
    from minigrad.grad_mode import enable_grad
    ins = [saved_input(ctx, i, a) for i, a in enumerate(ctx.saved[:-1])]
    with enable_grad():
        out = _separate(*ins, ctx.p, ctx.seed)
        wanted = [t for t in ins if t.requires_grad]
        got = iter(grad(out, wanted, g, create_graph=True, allow_unused=True) if wanted else ())
    return tuple(next(got) if t.requires_grad else None for t in ins)


@jvp_rule(FeedForward)
def _feed_forward_jvp(ctx, out, tangents):
    """Tangent of y from those of x, W1, b1, W2, b2 (None: zero): the hidden layer's is the
    pre-activation's times the ReLU + dropout factor, read off the saved hidden layer."""
    x, w1, _, w2, _, h = ctx.saved
    tx, tw1, tb1, tw2, tb2 = tangents
    d = x.shape[-1]
    x2 = x.reshape(-1, d)
    t = np.zeros(h.shape, h.dtype)
    if tx is not None:
        t += np.reshape(tx, (-1, d)) @ w1.T
    if tw1 is not None:
        t += x2 @ np.asarray(tw1).T
    if tb1 is not None:
        t += tb1
    scale = 1.0 / (1.0 - ctx.p)
    t = np.where(h > 0, t * h.dtype.type(scale), h.dtype.type(0))
    ty = t @ w2.T
    if tw2 is not None:
        ty += h @ np.asarray(tw2).T
    if tb2 is not None:
        ty += tb2
    return ty.reshape(out.shape)
