"""Numba layer norm over the last axis, forward and backward, one fused pass per row.

Written with NumPy (.reference), layer norm makes about ten passes over its input (mean,
subtract, square, mean, root, divide, scale, shift, ...), each a fresh temporary. A row of a
Transformer's activations is only d_model numbers, so the fused kernel reads a row once into
cache, computes its mean and variance, and writes the normalised row: one pass in, one pass
out, rows in parallel. The backward pass is fused the same way; the weight and bias gradients
are sums over rows, so each thread accumulates its own partial sums and they are added at the
end.

The sums are compiled with the package's FASTMATH flags (reordering only), not with
`fastmath=True`: a NaN or infinity in a row must give NaN, as NumPy does, not whatever a
compiler allowed to assume finite numbers makes of it.

Callers go through `kernels.layer_norm` and `kernels.layer_norm_backward`, which check the
inputs and pick these blocks (run by .driver's kernel) or the reference.
"""
from __future__ import annotations

import numba
import numpy as np

from .dropout_kernels import _dropout_add_rows
from .policy import FASTMATH, HELPER, INLINE
from .reference import layer_norm as layer_norm_reference  # noqa: F401  (the old names)
from .reference import layer_norm_backward as layer_norm_backward_reference  # noqa: F401


# Each pass is written once, for one row (forward) or one chunk of rows (backward); the loops
# over the blocks of rows are .driver's, in parallel for big inputs and in the calling thread
# for small ones, where waking the thread pool costs more than the work: the same compiled
# code, the same bits.
@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward_row(x, weight, bias, eps, y, xhat):
    """Normalise one row x (D,) into xhat and y; returns 1 / sqrt(var + eps)."""
    d = len(x)
    s = 0.0
    for j in range(d):
        s += x[j]
    mu = s / d
    v = 0.0
    for j in range(d):
        c = x[j] - mu
        v += c * c
    r = 1.0 / np.sqrt(v / d + eps)
    # the element loops work in x's dtype (16 float32 lanes per vector, not 8 float64), and
    # each writes one array, so LLVM has fewer overlaps to rule out before vectorising
    mu_, r_ = x.dtype.type(mu), x.dtype.type(r)
    for j in range(d):
        xhat[j] = (x[j] - mu_) * r_
    for j in range(d):
        y[j] = xhat[j] * weight[j] + bias[j]
    return r


@numba.njit(fastmath=FASTMATH, **HELPER)
def _backward_chunk(g, xhat, rstd, weight, dx, partial_w, partial_b, c, step):
    """Rows c*step .. (c+1)*step - 1: dx, and their sums into partial_w[c] and partial_b[c]."""
    n, d = g.shape
    pw, pb = partial_w[c], partial_b[c]
    hi = (c + 1) * step
    for i in range(c * step, hi if hi < n else n):
        gi, xi, di = g[i], xhat[i], dx[i]   # row views: LLVM vectorises these loops
        sh = 0.0
        shx = 0.0
        for j in range(d):   # sums in a loop that only reads (.softmax_kernels, "sums")
            h = gi[j] * weight[j]
            sh += h
            shx += h * xi[j]
        for j in range(d):
            pw[j] += gi[j] * xi[j]
            pb[j] += gi[j]
        # the element loop in g's dtype, as in the forward pass: float32 runs 16 lanes wide,
        # not 8 lanes of float64 with a conversion per element
        t = g.dtype.type
        sh_, shx_, r = t(sh / d), t(shx / d), rstd[i, 0]
        for j in range(d):
            di[j] = r * (gi[j] * weight[j] - sh_ - xi[j] * shx_)


# Post-norm residual connections, LayerNorm(x + dropout(s)), in one pass over memory: a block
# of rows of h = x + dropout(s) is written into x_hat and normalised there while it is in
# cache, so neither dropout(s) nor h is ever a whole array. The numbers are those of the
# separate dropout, add and layer norm kernels, bit for bit: h comes from .dropout_kernels's
# _dropout_add_rows (the kernel of dropout_add, which keeps the multiply and the add apart),
# and the normalisation is _forward_row itself. Blocks of rows, not single rows: with the hash
# loop and the normalisation interleaved row by row, LLVM vectorises the pair badly (measured
# 0.31 ms against 0.18 ms for (1280, 128)).
#
# Plain layer norm is the same block with `residual` False: it normalises the rows of x itself.
@numba.njit(fastmath=FASTMATH, **HELPER)
def _normalise_rows(src, weight, bias, eps, y, xhat, rstd, lo, hi):
    """Rows lo..hi-1 of src normalised into x_hat and y (src may be x_hat itself); rstd as
    _forward_row's."""
    for i in range(lo, hi):
        rstd[i, 0] = _forward_row(src[i], weight, bias, eps, y[i], xhat[i])


@numba.njit(**INLINE)
def _forward_block(x, s, residual, key, threshold, scale, weight, bias, eps, y, xhat, rstd, lo,
                   hi):
    if residual:
        _dropout_add_rows(x, s, xhat, key, threshold, scale, lo, hi)
        _normalise_rows(xhat, weight, bias, eps, y, xhat, rstd, lo, hi)
    else:
        _normalise_rows(x, weight, bias, eps, y, xhat, rstd, lo, hi)
