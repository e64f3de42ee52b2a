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

from . import FASTMATH
from .reference import layer_norm as layer_norm_reference  # noqa: F401  (the old names)
from .reference import layer_norm_backward as layer_norm_backward_reference  # noqa: F401


@numba.njit(parallel=True, cache=True, fastmath=FASTMATH)
def _forward(x, weight, bias, eps, y, xhat, rstd):
    n, d = x.shape
    for i in prange(n):
        s = 0.0
        for j in range(d):
            s += x[i, j]
        mu = s / d
        v = 0.0
        for j in range(d):
            c = x[i, j] - mu
            v += c * c
        r = 1.0 / np.sqrt(v / d + eps)
        rstd[i, 0] = r
        for j in range(d):
            xh = (x[i, j] - mu) * r
            xhat[i, j] = xh
            y[i, j] = xh * weight[j] + bias[j]


@numba.njit(parallel=True, cache=True, fastmath=FASTMATH)
def _backward(g, xhat, rstd, weight, dx, partial_w, partial_b):
    n, d = g.shape
    chunks = partial_w.shape[0]
    step = (n + chunks - 1) // chunks
    for c in prange(chunks):  # one chunk of rows per thread; each keeps its own partial sums
        for i in range(c * step, min(n, (c + 1) * step)):
            sh = 0.0
            shx = 0.0
            for j in range(d):
                h = g[i, j] * weight[j]
                sh += h
                shx += h * xhat[i, j]
                partial_w[c, j] += g[i, j] * xhat[i, j]
                partial_b[c, j] += g[i, j]
            sh /= d
            shx /= d
            r = rstd[i, 0]
            for j in range(d):
                dx[i, j] = r * (g[i, j] * weight[j] - sh - xhat[i, j] * shx)


def layer_norm_numba(x, weight, bias, eps):
    """x (N, D) -> (y, x_hat, rstd (N, 1)); weight and bias (D,) or None."""
    x = np.ascontiguousarray(x)
    n, d = x.shape
    w = np.ones(d, x.dtype) if weight is None else np.ascontiguousarray(weight, dtype=x.dtype)
    b = np.zeros(d, x.dtype) if bias is None else np.ascontiguousarray(bias, dtype=x.dtype)
    y = np.empty_like(x)
    xhat = np.empty_like(x)
    rstd = np.empty((n, 1), x.dtype)
    _forward(x, w, b, x.dtype.type(eps), y, xhat, rstd)
    return y, xhat, rstd


def layer_norm_backward_numba(g, xhat, rstd, weight):
    """(dx, dweight, dbias) for g, x_hat (N, D), rstd (N, 1), weight (D,) or None."""
    g = np.ascontiguousarray(g, dtype=xhat.dtype)
    n, d = g.shape
    w = np.ones(d, g.dtype) if weight is None else np.ascontiguousarray(weight, dtype=g.dtype)
    chunks = max(1, min(numba.get_num_threads(), n))
    pw = np.zeros((chunks, d), g.dtype)
    pb = np.zeros((chunks, d), g.dtype)
    dx = np.empty_like(g)
    _backward(g, np.ascontiguousarray(xhat), np.ascontiguousarray(rstd), w, dx, pw, pb)
    return dx, pw.sum(axis=0), pb.sum(axis=0)
