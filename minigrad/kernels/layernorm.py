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
inputs and pick this kernel or the reference.
"""
from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .dropout_kernels import _BLOCK, _dropout_add_rows
from .policy import FASTMATH, HELPER, twins
from .reference import layer_norm as layer_norm_reference  # noqa: F401  (the old names)
from .reference import layer_norm_backward as layer_norm_backward_reference  # noqa: F401


# Each pass is written once, for one row (forward) or one chunk of rows (backward), and
# driven by two loops: a `prange` loop for big inputs and a plain loop (`*_serial`) for small
# ones, where waking the thread pool costs more than the work. Same compiled code, same bits.
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


@numba.njit(cache=True, fastmath=FASTMATH, inline="always")
def _backward_chunk(g, xhat, rstd, weight, dx, partial_w, partial_b, c, step):
    """Rows c*step .. (c+1)*step - 1: dx, and their sums into partial_w[c] and partial_b[c]."""
    n, d = g.shape
    pw, pb = partial_w[c], partial_b[c]
    for i in range(c * step, min(n, (c + 1) * step)):
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


def _backward_loop(g, xhat, rstd, weight, dx, partial_w, partial_b):
    chunks = partial_w.shape[0]
    step = (g.shape[0] + chunks - 1) // chunks
    for c in prange(chunks):  # one chunk of rows per thread; each keeps its own partial sums
        _backward_chunk(g, xhat, rstd, weight, dx, partial_w, partial_b, c, step)


_backward, _backward_serial = twins(_backward_loop, "_backward", fastmath=FASTMATH)


# Post-norm residual connections, LayerNorm(x + dropout(s)), in one pass over memory: a block
# of rows of h = x + dropout(s) is written into x_hat and normalised there while it is in
# cache, so neither dropout(s) nor h is ever a whole array. The numbers are those of the
# separate dropout, add and layer norm kernels, bit for bit: h comes from .dropout_kernels's
# _dropout_add_rows (the kernel of dropout_add, which keeps the multiply and the add apart),
# and the normalisation is _forward_row itself. Blocks of rows, not single rows: with the hash
# loop and the normalisation interleaved row by row, LLVM vectorises the pair badly (measured
# 0.31 ms against 0.18 ms for (1280, 128)).
#
# Plain layer norm is the same kernel with `residual` False: it normalises the rows of x
# itself. One parallel kernel for both, as a parallel kernel costs Numba about a second to
# compile (its loop body becomes a second compiled function, with wrappers), and a post-norm
# Transformer uses both.
@numba.njit(fastmath=FASTMATH, **HELPER)
def _normalise_rows(src, weight, bias, eps, y, xhat, rstd, lo, hi):
    """Rows lo..hi-1 of src normalised into x_hat and y (src may be x_hat itself); rstd as
    _forward_row's."""
    for i in range(lo, hi):
        rstd[i, 0] = _forward_row(src[i], weight, bias, eps, y[i], xhat[i])


@numba.njit(**HELPER)
def _forward_block(x, s, residual, key, threshold, scale, weight, bias, eps, y, xhat, rstd, lo,
                   hi):
    if residual:
        _dropout_add_rows(x, s, xhat, key, threshold, scale, lo, hi)
        _normalise_rows(xhat, weight, bias, eps, y, xhat, rstd, lo, hi)
    else:
        _normalise_rows(x, weight, bias, eps, y, xhat, rstd, lo, hi)


def _forward_loop(x, s, residual, key, threshold, scale, weight, bias, eps, y, xhat, rstd):
    n = x.shape[0]
    for k in prange((n + _BLOCK - 1) // _BLOCK):
        lo = np.int64(k) * _BLOCK   # signed in both twins (prange counts unsigned): one callee
        _forward_block(x, s, residual, key, threshold, scale, weight, bias, eps, y, xhat, rstd,
                       lo, min(n, lo + _BLOCK))


_forward, _forward_serial = twins(_forward_loop, "_forward")


def _affine(weight, bias, d, dtype):
    w = np.ones(d, dtype) if weight is None else np.ascontiguousarray(weight, dtype=dtype)
    b = np.zeros(d, dtype) if bias is None else np.ascontiguousarray(bias, dtype=dtype)
    return w, b


def _run_forward(x, s, residual, key, threshold, scale, w, b, eps, parallel):
    y = np.empty_like(x)
    xhat = np.empty_like(x)
    rstd = np.empty((x.shape[0], 1), x.dtype)
    (_forward if parallel else _forward_serial)(x, s, residual, key, threshold, scale, w, b,
                                                x.dtype.type(eps), y, xhat, rstd)
    return y, xhat, rstd


def dropout_add_layer_norm_numba(x, s, key, threshold, scale, weight, bias, eps, parallel=True):
    """layer_norm_numba(x + dropout(s)) for x, s (N, D); dropout by (key, threshold, scale)
    of .dropout_kernels over the flat index of s. Returns (y, x_hat, rstd (N, 1))."""
    x, s = np.ascontiguousarray(x), np.ascontiguousarray(s)
    w, b = _affine(weight, bias, x.shape[1], x.dtype)
    return _run_forward(x, s, True, key, threshold, scale, w, b, eps, parallel)


def layer_norm_numba(x, weight, bias, eps, parallel=True):
    """x (N, D) -> (y, x_hat, rstd (N, 1)); weight and bias (D,) or None.

    parallel=False runs the rows in the calling thread (for small inputs)."""
    x = np.ascontiguousarray(x)
    w, b = _affine(weight, bias, x.shape[1], x.dtype)
    return _run_forward(x, x, False, np.uint64(0), np.uint64(0), x.dtype.type(1), w, b, eps,
                        parallel)


def layer_norm_backward_numba(g, xhat, rstd, weight, parallel=True, chunks=None):
    """(dx, dweight, dbias) for g, x_hat (N, D), rstd (N, 1), weight (D,) or None.

    The weight and bias gradients are summed in `chunks` partial sums (by default one per
    thread when parallel, else one), then added; parallel=False runs in the calling thread."""
    g = np.ascontiguousarray(g, dtype=xhat.dtype)
    n, d = g.shape
    w = np.ones(d, g.dtype) if weight is None else np.ascontiguousarray(weight, dtype=g.dtype)
    if chunks is None:
        chunks = numba.get_num_threads() if parallel else 1
    chunks = max(1, min(chunks, n))
    pw = np.zeros((chunks, d), g.dtype)
    pb = np.zeros((chunks, d), g.dtype)
    dx = np.empty_like(g)
    (_backward if parallel else _backward_serial)(
        g, np.ascontiguousarray(xhat), np.ascontiguousarray(rstd), w, dx, pw, pb)
    if chunks == 1:   # nothing to add up: skip the two reductions and their temporaries
        return dx, pw[0], pb[0]
    return dx, pw.sum(axis=0), pb.sum(axis=0)
