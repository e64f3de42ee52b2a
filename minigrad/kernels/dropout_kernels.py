"""Numba dropout with a counter-based random mask.

A usual generator is a sequence: number i depends on numbers 0..i-1, so
threads must coordinate and the mask depends on how work was split. A
counter-based generator is a hash of (key, i) instead: element i's random
bits are splitmix64(key + (i+1) * GAMMA), computed independently. So

* the loop is a plain `prange`, with no generator state to share;
* the mask is the same for any number of threads (and equals the NumPy
  reference in .reference bit for bit);
* the backward pass needs no stored mask: calling dropout on the gradient
  with the same seed regenerates it.

Element i is kept when its top 53 bits are >= p * 2^53 (probability 1-p)
and then scaled by 1/(1-p), so the expected output equals the input.
"""
import numpy as np
from numba import njit, prange

from .reference import GAMMA


@njit(cache=True)
def _bits(key, i):
    """splitmix64 of counter i under `key` (uint64 arithmetic wraps)."""
    z = key + (np.uint64(i) + np.uint64(1)) * np.uint64(GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def _factor(key, i, threshold, scale, zero):
    """What element i is multiplied by: `scale` if kept, else `zero`."""
    return scale if (_bits(key, i) >> np.uint64(11)) >= threshold else zero


# Each kernel comes twice: a `prange` loop for big arrays and a plain loop (`*_serial`) for
# small ones, where waking the thread pool costs more than the work. The mask is a function
# of (seed, index) alone, so both give the same result.
@njit(parallel=True, cache=True)
def dropout_flat(x, out, key, threshold, scale):
    """out[i] = x[i] * (scale if kept else 0); x, out 1-D contiguous."""
    zero = x.dtype.type(0)
    for i in prange(x.size):
        out[i] = x[i] * _factor(key, i, threshold, scale, zero)


@njit(cache=True)
def dropout_flat_serial(x, out, key, threshold, scale):
    """dropout_flat without the thread pool, for small arrays."""
    zero = x.dtype.type(0)
    for i in range(x.size):
        out[i] = x[i] * _factor(key, i, threshold, scale, zero)


@njit(parallel=True, cache=True)
def mask_flat(out, key, threshold, scale):
    """out[i] = scale if element i is kept else 0."""
    zero = out.dtype.type(0)
    for i in prange(out.size):
        out[i] = _factor(key, i, threshold, scale, zero)


@njit(cache=True)
def mask_flat_serial(out, key, threshold, scale):
    """mask_flat without the thread pool, for small arrays."""
    zero = out.dtype.type(0)
    for i in range(out.size):
        out[i] = _factor(key, i, threshold, scale, zero)


# ReLU then dropout, the feed-forward network's max(0, x W1 + b1) before its dropout, as one
# pass each way. Forward: max(x, 0) (NaN passes, as in np.maximum) times the mask. Backward
# needs no mask: an element of the output is > 0 exactly where ReLU passed it and dropout kept
# it, and there the gradient is g * scale; everywhere else it is 0.
@njit(cache=True, inline="always")
def _relu(v, zero):
    return zero if v < zero else v


@njit(parallel=True, cache=True)
def relu_dropout_flat(x, out, key, threshold, scale):
    """out[i] = max(x[i], 0) * (scale if kept else 0); x, out 1-D contiguous."""
    zero = x.dtype.type(0)
    for i in prange(x.size):
        out[i] = _relu(x[i], zero) * _factor(key, i, threshold, scale, zero)


@njit(cache=True)
def relu_dropout_flat_serial(x, out, key, threshold, scale):
    """relu_dropout_flat without the thread pool, for small arrays."""
    zero = x.dtype.type(0)
    for i in range(x.size):
        out[i] = _relu(x[i], zero) * _factor(key, i, threshold, scale, zero)


@njit(parallel=True, cache=True)
def relu_dropout_backward_flat(y, g, dx, scale):
    """dx[i] = g[i] * scale where the output y[i] > 0, else 0."""
    zero = g.dtype.type(0)
    for i in prange(y.size):
        dx[i] = g[i] * scale if y[i] > zero else zero


@njit(cache=True)
def relu_dropout_backward_flat_serial(y, g, dx, scale):
    """relu_dropout_backward_flat without the thread pool, for small arrays."""
    zero = g.dtype.type(0)
    for i in range(y.size):
        dx[i] = g[i] * scale if y[i] > zero else zero


# x + dropout(s), the residual connection, in blocks of rows (see .layernorm, which normalises
# each block after this). The multiply by the mask and the add are two loops, so that LLVM
# cannot fuse them into one multiply-add with a single rounding (Numba's code generator does
# so even without fastmath): the sum is then bit for bit that of the dropout kernel and an add.
_BLOCK = 16


@njit(cache=True)
def _dropout_add_rows(x, s, h, key, threshold, scale, lo, hi):
    """Rows lo..hi-1 of h = x + s * (scale if kept else 0), by the flat index of s."""
    d = x.shape[1]
    zero = s.dtype.type(0)
    for i in range(lo, hi):
        si, hi_ = s[i], h[i]
        start = i * d
        for j in range(d):
            hi_[j] = si[j] * _factor(key, start + j, threshold, scale, zero)
        xi = x[i]
        for j in range(d):
            hi_[j] += xi[j]


@njit(parallel=True, cache=True)
def dropout_add_2d(x, s, out, key, threshold, scale):
    """out = x + dropout(s) for x, s, out (N, D) C-contiguous."""
    n = x.shape[0]
    for k in prange((n + _BLOCK - 1) // _BLOCK):
        _dropout_add_rows(x, s, out, key, threshold, scale, k * _BLOCK, min(n, (k + 1) * _BLOCK))


@njit(cache=True)
def dropout_add_2d_serial(x, s, out, key, threshold, scale):
    """dropout_add_2d without the thread pool, for small arrays."""
    n = x.shape[0]
    for k in range((n + _BLOCK - 1) // _BLOCK):
        _dropout_add_rows(x, s, out, key, threshold, scale, k * _BLOCK, min(n, (k + 1) * _BLOCK))
