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

from .policy import HELPER, INLINE, twins
from .reference import GAMMA
from .views import flat


@njit(**HELPER)
def _bits(key, i):
    """splitmix64 of counter i under `key` (uint64 arithmetic wraps)."""
    z = key + (np.uint64(i) + np.uint64(1)) * np.uint64(GAMMA)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(**INLINE)
def _key_at(key, start):
    """The key under which element i of a slice starting at `start` has element start + i's
    bits: key + (start + i + 1) * GAMMA = (key + start * GAMMA) + (i + 1) * GAMMA, modulo 2^64.
    A loop hashing i from 0 then runs 10 % faster than one hashing start + i (measured on
    dropout of 1280 x 512 floats): the same bits."""
    return key + np.uint64(start) * np.uint64(GAMMA)


@njit(**HELPER)
def _factor(key, i, threshold, scale, zero):
    """What element i is multiplied by: `scale` if kept, else `zero`."""
    return scale if (_bits(key, i) >> np.uint64(11)) >= threshold else zero


# ReLU then dropout, the feed-forward network's max(0, x W1 + b1) before its dropout, as one
# pass each way. Forward: max(x, 0) (NaN passes, as in np.maximum) times the mask. Backward
# needs no mask: an element of the output is > 0 exactly where ReLU passed it and dropout kept
# it, and there the gradient is g * scale; everywhere else it is 0.
@njit(cache=True, inline="always")
def _relu(v, zero):
    return zero if v < zero else v


# The element-wise ops, each a loop over a run of elements, picked by `kind`:
DROPOUT, MASK, RELU_DROPOUT, RELU_DROPOUT_BACKWARD = 0, 1, 2, 3
COPY, FILL_MASKED, ZERO_MASKED = 4, 5, 6
#   DROPOUT                out[i] = x[i] * (scale if kept else 0)
#   MASK                   out[i] = scale if kept else 0                   (x, x2 unused)
#   RELU_DROPOUT           out[i] = max(x[i], 0) * (scale if kept else 0)
#   RELU_DROPOUT_BACKWARD  out[i] = x2[i] * scale where x[i] > 0, else 0   (x: the output y,
#                          x2: its gradient; no mask)
# and the passes .driver_blocks' attention block makes around its rows' work:
#   COPY                   out[i] = x[i]
#   FILL_MASKED            out[i] = x[i] where allowed[i], else -inf
#   ZERO_MASKED            out[i] = 0 where not allowed[i]
# .driver_blocks' kernel runs them, the elements cut into one share per thread: the mask is a function of
# (seed, index) alone, so how the elements are shared among threads changes nothing. One
# function holds every loop, each once: .driver_blocks' block function calls it from one place
# (each place a function inlined at Numba's level is called from gets a copy to compile).


@njit(**INLINE)
def _elements(kind, x, x2, out, allowed, key, threshold, scale, lo, hi):
    """Elements lo..hi-1, in memory order, of op `kind` on C-contiguous arrays of one dtype
    (allowed: bool, of out's size, read by FILL_MASKED and ZERO_MASKED only)."""
    zero = out.dtype.type(0)
    # views indexed from 0: an index Numba cannot prove non-negative keeps a loop scalar
    xb, ob = flat(x, lo, hi), flat(out, lo, hi)
    key = _key_at(key, lo)
    if kind == DROPOUT:
        for k in range(len(ob)):
            ob[k] = xb[k] * _factor(key, k, threshold, scale, zero)
    elif kind == MASK:
        for k in range(len(ob)):
            ob[k] = _factor(key, k, threshold, scale, zero)
    elif kind == RELU_DROPOUT:
        for k in range(len(ob)):
            ob[k] = _relu(xb[k], zero) * _factor(key, k, threshold, scale, zero)
    elif kind == RELU_DROPOUT_BACKWARD:
        gb = flat(x2, lo, hi)
        for k in range(len(ob)):
            ob[k] = gb[k] * scale if xb[k] > zero else zero
    elif kind == COPY:   # (a loop: a slice assignment compiles its shape check's message)
        for k in range(len(ob)):
            ob[k] = xb[k]
    elif kind == FILL_MASKED:
        ab = flat(allowed, lo, hi)
        for k in range(len(ob)):
            ob[k] = xb[k] if ab[k] else -np.inf
    elif kind == ZERO_MASKED:
        ab = flat(allowed, lo, hi)
        for k in range(len(ob)):
            if not ab[k]:
                ob[k] = zero


# x + dropout(s), the residual connection, in blocks of rows: the pre-norm one in its own
# kernel below, the post-norm one in .driver_blocks' block before its layer norm (run as a flat
# element op in runs of 1,024 it was 5-10 % slower). The multiply by the mask and the add are
# two loops, so that LLVM cannot fuse them into one multiply-add with a single rounding
# (Numba's code generator does so even without fastmath): the sum is then bit for bit that of
# the dropout kernel and an add.
_BLOCK = 16


@njit(**INLINE)
def _dropout_add_rows(x, s, h, key, threshold, scale, lo, hi):
    """Rows lo..hi-1 of h = x + s * (scale if kept else 0), by the flat index of s."""
    d = x.shape[1]
    zero = s.dtype.type(0)
    for i in range(lo, hi):
        si, hi_ = s[i], h[i]
        row_key = _key_at(key, i * d)
        for j in range(d):
            hi_[j] = si[j] * _factor(row_key, j, threshold, scale, zero)
        xi = x[i]
        for j in range(d):
            hi_[j] += xi[j]


def _dropout_add_loop(x, s, out, key, threshold, scale):
    """out = x + dropout(s) for x, s, out (N, D) C-contiguous."""
    n = x.shape[0]
    for k in prange((n + _BLOCK - 1) // _BLOCK):
        hi = (k + 1) * _BLOCK
        _dropout_add_rows(x, s, out, key, threshold, scale, k * _BLOCK, hi if hi < n else n)


dropout_add_2d, dropout_add_2d_serial = twins(_dropout_add_loop, "dropout_add_2d")
