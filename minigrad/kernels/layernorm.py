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

from .policy import FASTMATH
from .reference import layer_norm as layer_norm_reference  # noqa: F401  (the old names)
from .reference import layer_norm_backward as layer_norm_backward_reference  # noqa: F401


# Each pass is written once, for one row (forward) or one chunk of rows (backward); the loops
# over the blocks of rows are .driver's, in parallel for big inputs and in the calling thread
# for small ones, where waking the thread pool costs more than the work: the same compiled
# code, the same bits.
# The forward pass takes a block of rows in three steps, each over every row of the block:
# the means, then the variances (rstd), then the outputs. A row's steps form one chain of
# dependent operations (a sum, its division, a second sum around the mean, a square root and
# a division, then the element loops that need them), longer than the row's work: done row by
# row, with rows of a Transformer's width (128), each row waited on that chain (about 190
# cycles a row on a Zen 3 core, in float64 sums of 128 numbers, as long with the rows in L1).
# Step by step, the rows of a step are independent and the processor overlaps them: 1280 x 128
# float32, one thread, 106-109 -> 81-84 us as a kernel alone, 93-95 -> 88 us through
# kernels.layer_norm (busy). Each row's operations are the same as before, in the same order:
# the same bits.
@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward_rows(x, weight, bias, eps, y, xhat, rstd, mean, lo, hi):
    """Rows lo..hi-1 of x (N, D) normalised into xhat and y, 1 / sqrt(var + eps) into rstd
    (N, 1); mean (N,) float64 is scratch (each row's mean, kept between the steps)."""
    d = x.shape[1]
    for i in range(lo, hi):
        xi = x[i]
        s = 0.0
        for j in range(d):
            s += xi[j]
        mean[i] = s / d
    for i in range(lo, hi):
        xi = x[i]
        mu = mean[i]
        v = 0.0
        for j in range(d):
            c = xi[j] - mu
            v += c * c
        rstd[i, 0] = 1.0 / np.sqrt(v / d + eps)
    for i in range(lo, hi):
        xi, yi, xh = x[i], y[i], xhat[i]
        # the element loops work in x's dtype (16 float32 lanes per vector, not 8 float64), and
        # each writes one array, so LLVM has fewer overlaps to rule out before vectorising
        mu_, r_ = x.dtype.type(mean[i]), rstd[i, 0]
        for j in range(d):
            xh[j] = (xi[j] - mu_) * r_
        for j in range(d):
            yi[j] = xh[j] * weight[j] + bias[j]


@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _backward_rows(g, xhat, rstd, weight, dx, pw, pb, lo, hi):
    """Rows lo..hi-1: dx, and their weight and bias gradients added into pw and pb (D,)."""
    d = g.shape[1]
    for i in range(lo, hi):
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
