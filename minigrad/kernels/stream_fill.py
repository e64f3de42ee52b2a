"""PyTorch's uniform, normal and Bernoulli fills drawing their own mt19937 words: the loops of
uniform_fill.py and normal_fill.py, each fed from the generator's state instead of from an
array of words drawn first.

The plain loop of each, for its fill f of uniform_fill.py or normal_fill.py:

    words = the next W words of the generator (mt19937.words: the state moves on by W)
    f(words, ..., out)

with W what f reads: n for uniform32 and bernoulli32, 2n for uniform64 and bernoulli64,
n (plus 16 when n % 16) for normal32 and 2n (plus 32) for normal64.

The optimisation is only where the words live: each loop draws a chunk of them at a time
(mt19937.draw: the twist and tempering of mt19937.words) into a uint32 buffer of a few KB,
which stays in L1 while the fill turns it into numbers, and moves on. The separate form
writes all W words to memory as uint64 and reads them back: 8 bytes a word each way, and a
fresh array's page faults, which cost more than generating the word. The words, their order
and the arithmetic on them are the same, and so are the numbers and the state left behind:
their references are the separate forms (random_draws.py's `unit`-based functions and the
fills of uniform_fill.py and normal_fill.py over `Generator.random32`'s words).

Each takes `state`, the generator's uint32 (625,) view of NumPy's MT19937 state (the 624 key
words, then the position), and updates it in place.
"""
import numpy as np
from numba import njit

from .fma import fma
from .mt19937 import draw
from .normal_fill import _CHUNK as _BLOCKS, _block64, _blocks32

F32 = np.float32
_CHUNK = 1024   # words drawn at a time: 4 KB of uint32
_MASK24 = np.uint32(2 ** 24 - 1)
_MASK53 = np.uint64(2 ** 53 - 1)
_UNIT32 = F32(2.0 ** -24)
_UNIT64 = 2.0 ** -53
_SHIFT = np.uint64(32)


@njit(cache=True, inline="always")
def _unit32(buf, k):
    return F32(buf[k] & _MASK24) * _UNIT32


@njit(cache=True, inline="always")
def _unit64(buf, k):
    """The float64 uniform of words 2k (the high half) and 2k + 1 of buf."""
    w = (np.uint64(buf[2 * k]) << _SHIFT) | np.uint64(buf[2 * k + 1])
    return np.float64(w & _MASK53) * _UNIT64


@njit(cache=True)
def uniform32(state, span, low, out):
    """uniform_fill.uniform32 of out (float32, n) on the next n words."""
    buf = np.empty(_CHUNK, np.uint32)
    n = out.size
    for s in range(0, n, _CHUNK):
        c = min(_CHUNK, n - s)
        draw(state, buf, c)
        part = out[s:s + c]   # (views from 0: a loop over s + k stays scalar)
        for k in range(c):
            part[k] = F32(np.float64(_unit32(buf, k)) * span + low)


@njit(cache=True)
def uniform64(state, span, low, out):
    """uniform_fill.uniform64 of out (float64, n) on the next 2n words."""
    buf = np.empty(_CHUNK, np.uint32)
    n, half = out.size, _CHUNK // 2
    for s in range(0, n, half):
        c = min(half, n - s)
        draw(state, buf, 2 * c)
        part = out[s:s + c]
        for k in range(c):
            part[k] = fma(_unit64(buf, k), span, low)


@njit(cache=True)
def bernoulli32(state, probs, out):
    """uniform_fill.bernoulli32 of out (bool, n) on the next n words; probs float32, 1 or n."""
    buf = np.empty(_CHUNK, np.uint32)
    n, one = out.size, probs.size == 1
    for s in range(0, n, _CHUNK):
        c = min(_CHUNK, n - s)
        draw(state, buf, c)
        part = out[s:s + c]
        if one:
            p = probs[0]
            for k in range(c):
                part[k] = _unit32(buf, k) < p
        else:
            ps = probs[s:s + c]
            for k in range(c):
                part[k] = _unit32(buf, k) < ps[k]


@njit(cache=True)
def bernoulli64(state, probs, out):
    """uniform_fill.bernoulli64 of out (bool, n) on the next 2n words; probs float64, 1 or n."""
    buf = np.empty(_CHUNK, np.uint32)
    n, half, one = out.size, _CHUNK // 2, probs.size == 1
    for s in range(0, n, half):
        c = min(half, n - s)
        draw(state, buf, 2 * c)
        part = out[s:s + c]
        if one:
            p = probs[0]
            for k in range(c):
                part[k] = _unit64(buf, k) < p
        else:
            ps = probs[s:s + c]
            for k in range(c):
                part[k] = _unit64(buf, k) < ps[k]


@njit(cache=True)
def normal32(state, mean, std, out):
    """normal_fill.normal32 of out (float32, n >= 16) on the next n words (and 16 more when
    n % 16: the words of the last partial block are drawn and not used, as PyTorch's)."""
    n = out.size
    mean, std = F32(mean), F32(std)
    lanes = 8 * _BLOCKS
    x, e, m, t, r = (np.empty(lanes, F32), np.empty(lanes, F32), np.empty(lanes, F32),
                     np.empty(lanes, F32), np.empty(lanes, F32))
    buf = np.empty(16 * _BLOCKS, np.uint32)
    full = n // 16
    for b in range(0, full, _BLOCKS):
        nb = min(_BLOCKS, full - b)
        draw(state, buf, 16 * nb)
        _blocks32(buf, 0, out, 16 * b, nb, mean, std, x, e, m, t, r)
    rest = n % 16
    if rest:
        draw(state, buf, rest + 16)
        _blocks32(buf, rest, out, n - 16, 1, mean, std, x, e, m, t, r)


@njit(cache=True)
def normal64(state, mean, std, out):
    """normal_fill.normal64 of out (float64, n >= 16) on the next 2n words (and 32 more
    when n % 16)."""
    n = out.size
    per = _CHUNK // 32   # blocks of 16 per chunk: 32 words each
    buf = np.empty(_CHUNK, np.uint32)
    full = n // 16
    for b in range(0, full, per):
        nb = min(per, full - b)
        draw(state, buf, 32 * nb)
        for j in range(nb):
            _block64(buf, 16 * j, out, 16 * (b + j), mean, std)
    rest = n % 16
    if rest:
        draw(state, buf, 2 * rest + 32)
        _block64(buf, rest, out, n - 16, mean, std)
