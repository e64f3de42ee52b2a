"""PyTorch's uniform fills and Bernoulli draws, compiled over the mt19937 words.

The plain loops, for the 32-bit words w of the generator (uint64, as NumPy's random_raw):

    uniform32   x = (w[i] & (2**24 - 1)) * 2**-24 in float32;  out[i] = x * span + low,
                the multiply-add rounded once (x * span is exact in float64)
    uniform64   x = ((w[2i] << 32 | w[2i + 1]) & (2**53 - 1)) * 2**-53;  out[i] =
                fma(x, span, low), as PyTorch's compiler fuses uniform_real's x * (to - from)
                + from
    bernoulli32 out[i] = float32 uniform of w[i] < p[i]     (p float32, one p or n)
    bernoulli64 out[i] = float64 uniform of w[2i], w[2i + 1] < p[i]   (p float64, one or n)

Their NumPy references are random_draws.py's `unit`, `uniform` and `bernoulli`, the same
arithmetic on whole arrays: these loops only fuse its passes (mask, convert, scale, add or
compare) into one over the words, with no temporary arrays.
"""
import numpy as np
from numba import njit

from .fma import fma

_MASK24 = np.uint64(2 ** 24 - 1)
_MASK53 = np.uint64(2 ** 53 - 1)
_UNIT32 = np.float32(2.0 ** -24)
_UNIT64 = 2.0 ** -53
_SHIFT = np.uint64(32)


@njit(cache=True, inline="always")
def _unit32(words, i):
    return np.float32(np.uint64(words[i]) & _MASK24) * _UNIT32


@njit(cache=True, inline="always")
def _unit64(words, i):
    w = (np.uint64(words[2 * i]) << _SHIFT) | np.uint64(words[2 * i + 1])
    return np.float64(w & _MASK53) * _UNIT64


@njit(cache=True)
def uniform32(words, span, low, out):
    """out (float32, n) from n words: span and low are float32 values (passed as float64)."""
    for i in range(out.size):
        out[i] = np.float32(np.float64(_unit32(words, i)) * span + low)


@njit(cache=True)
def uniform64(words, span, low, out):
    """out (float64, n) from 2n words."""
    for i in range(out.size):
        out[i] = fma(_unit64(words, i), span, low)


@njit(cache=True)
def bernoulli32(words, probs, out):
    """out (bool, n): a float32 uniform of each word < probs (float32, 1 or n elements)."""
    if probs.size == 1:
        p = probs[0]
        for i in range(out.size):
            out[i] = _unit32(words, i) < p
    else:
        for i in range(out.size):
            out[i] = _unit32(words, i) < probs[i]


@njit(cache=True)
def bernoulli64(words, probs, out):
    """out (bool, n): a float64 uniform of each two words < probs (float64, 1 or n)."""
    if probs.size == 1:
        p = probs[0]
        for i in range(out.size):
            out[i] = _unit64(words, i) < p
    else:
        for i in range(out.size):
            out[i] = _unit64(words, i) < probs[i]
