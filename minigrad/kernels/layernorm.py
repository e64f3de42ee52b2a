"""Numba layer norm over the last axis, forward and backward, one fused pass per row.

Written with NumPy (.reference), layer norm makes about ten passes over its input (mean,
subtract, square, mean, root, divide, scale, shift, ...), each a fresh temporary. A row of a
Transformer's activations is only d_model numbers, so the fused kernel reads a row once into
cache, computes its mean and variance, and writes the normalised row: one pass in, one pass
out, rows in parallel. The backward pass is fused the same way; the weight and bias gradients
are sums over rows, so each chunk of rows accumulates its own partial sums and they are added
at the end (the chunks are cut by the number of rows alone: the same bits at any number of
threads).

The sums are compiled with the package's FASTMATH flags (reordering only), not with
`fastmath=True`: a NaN or infinity in a row must give NaN, as NumPy does, not whatever a
compiler allowed to assume finite numbers makes of it.

Callers go through `kernels.layer_norm` and `kernels.layer_norm_backward`, which check the
inputs and pick these blocks (run by .driver_blocks' kernel) or the reference.
"""
from __future__ import annotations

import numba
import numpy as np

from .policy import FASTMATH
from .reference import layer_norm as layer_norm_reference  # noqa: F401  (the old names)
from .reference import layer_norm_backward as layer_norm_backward_reference  # noqa: F401


# Each pass is written once, for one row (forward) or one chunk of rows (backward); the loops
# over the shares of rows are .driver_blocks', in parallel for big inputs and in the calling thread
# for small ones, where waking the thread pool costs more than the work: the same compiled
# code, the same bits.
#
# The sums are in the input's dtype, not float64: float32 rows then run 16 lanes wide with no
# conversion per element, and the row's chain of dependent steps (a sum, its division, the
# second sum around the mean, a square root and a division) is shorter. FASTMATH lets LLVM
# keep the sums in several vector accumulators (64 partial sums for float32 on AVX-512), so
# each partial sum adds a few numbers and the result is the reference's (NumPy's pairwise
# sums in the dtype) within its rounding. Row by row, this was faster than the float64 sums
# taken for a block of rows step by step (all means, then all variances, then the outputs),
# as the previous version did: 1280 x 128 float32, one thread, the kernel alone, 68 -> 44 us
# forward and 66 -> 47 us backward (busy, CPU time, medians).
@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _forward_rows(x, weight, bias, eps, y, xhat, rstd, lo, hi):
    """Rows lo..hi-1 of x (N, D) normalised; per row i, with sums over the row:
        mean = sum(x[i]) / D;  var = sum((x[i] - mean)**2) / D;  rstd[i, 0] = 1 / sqrt(var + eps)
        xhat[i] = (x[i] - mean) * rstd[i, 0];  y[i] = xhat[i] * weight + bias
    eps in x's dtype. y may be x itself (the post-norm residual's sum, normalised in place):
    each element of x is read before y's is written."""
    d = x.shape[1]
    t = x.dtype.type
    for i in range(lo, hi):
        xi, yi, xh = x[i], y[i], xhat[i]
        s = t(0)
        for j in range(d):
            s += xi[j]
        mu = s / t(d)
        v = t(0)
        for j in range(d):
            c = xi[j] - mu
            v += c * c
        r = t(1) / np.sqrt(v / t(d) + eps)
        rstd[i, 0] = r
        # two loops, each writing one array: were y written beside x_hat in the first, a y
        # that is x (in place) would fail the overlap check guarding LLVM's vector code
        for j in range(d):
            xh[j] = (xi[j] - mu) * r
        for j in range(d):
            yi[j] = xh[j] * weight[j] + bias[j]


@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _backward_rows(g, xhat, rstd, weight, dx, pw, pb, lo, hi):
    """Rows lo..hi-1: dx, and their weight and bias gradients added into pw and pb (D,).

    Per row i, with h = g[i] * weight and means over the row:
        dx[i] = rstd[i] * (h - mean(h) - x_hat[i] * mean(h * x_hat[i]))
        pw += g[i] * x_hat[i];  pb += g[i]"""
    d = g.shape[1]
    t = g.dtype.type
    for i in range(lo, hi):
        gi, xi, di = g[i], xhat[i], dx[i]   # row views: LLVM vectorises these loops
        sh = t(0)
        shx = t(0)
        # the row's two sums and the column sums in one pass over g and x_hat: a second
        # loop reading them again for the column sums cost 15 us of 62 (1280 x 128, above)
        for j in range(d):
            gj, xj = gi[j], xi[j]
            h = gj * weight[j]
            sh += h
            shx += h * xj
            pw[j] += gj * xj
            pb[j] += gj
        sh, shx, r = sh / t(d), shx / t(d), rstd[i, 0]
        for j in range(d):
            di[j] = r * (gi[j] * weight[j] - sh - xi[j] * shx)


def sum_chunks(n):
    """How many partial sums the backward pass takes of the weight and bias gradients of n
    rows: one per chunk of at least _CHUNK_ROWS rows, at most MAX_CHUNKS. A function of n
    alone, not of the thread count, so the gradients have the same bits at any number of
    threads (each thread takes whole chunks)."""
    return max(1, min(MAX_CHUNKS, n // _CHUNK_ROWS))


_CHUNK_ROWS = 128
MAX_CHUNKS = 8   # (a multiple of 2 and 4 threads: 1280 rows, 4 chunks of 160 rows a thread)
