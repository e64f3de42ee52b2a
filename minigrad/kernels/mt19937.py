"""The 32-bit Mersenne Twister's words (mt19937, PyTorch's CPU engine), compiled over NumPy's
MT19937 state in place: the same words as its `random_raw`, faster for long runs.

The plain loop, with state = the 624 key words then the position (NumPy's mt19937_state):

    for each word wanted:
        if pos == 624: regenerate the key (the twist below); pos = 0
        y = key[pos]; pos += 1
        y ^= y >> 11; y ^= (y << 7) & 0x9D2C5680; y ^= (y << 15) & 0xEFC60000; y ^= y >> 18
        out[i] = y

    the twist, for i < 624:  y = (key[i] & 0x80000000) | (key[i + 1 mod 624] & 0x7FFFFFFF)
                             key[i] = key[i + 397 mod 624] ^ (y >> 1) ^ (0x9908B0DF if y odd)

Its reference is NumPy's own MT19937.random_raw (the same algorithm in C): NumPy gives each
word through a function pointer and a Python-level loop over its buffer; this loop runs the
twist and the tempering inline, each over runs of words that LLVM vectorises.
"""
import numpy as np
from numba import njit

N, M = 624, 397
_UPPER, _LOWER = np.uint32(0x80000000), np.uint32(0x7FFFFFFF)
_MATRIX_A = np.uint32(0x9908B0DF)


@njit(cache=True, inline="always")
def _mix(key, i, j, k):
    """The new key[i] from key[i], key[j] (the next) and key[k] (397 on)."""
    y = (key[i] & _UPPER) | (key[j] & _LOWER)
    odd = (y & np.uint32(1)) != 0
    return key[k] ^ (y >> np.uint32(1)) ^ (_MATRIX_A if odd else np.uint32(0))


@njit(cache=True)
def _twist(key):
    for i in range(N - M):
        key[i] = _mix(key, i, i + 1, i + M)
    for i in range(N - M, N - 1):
        key[i] = _mix(key, i, i + 1, i + M - N)
    key[N - 1] = _mix(key, N - 1, 0, M - 1)


@njit(cache=True)   # (plain options, not HELPER's: a test calls it)
def draw(state, buf, n):
    """The next n words into buf[:n] (uint32, or uint64 for `words`; n <= buf.size), state
    (uint32, 625) updated in place."""
    key = state[:N]
    pos = int(state[N])
    i = 0
    while i < n:
        if pos >= N:
            _twist(key)
            pos = 0
        run = min(N - pos, n - i)
        # views indexed from 0: an index Numba cannot prove non-negative (pos + r) keeps the
        # loop scalar, with a wrap-around check per word (6x slower, measured)
        src, dst = key[pos:pos + run], buf[i:i + run]
        for r in range(run):
            y = src[r]
            y ^= y >> np.uint32(11)
            y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
            y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
            y ^= y >> np.uint32(18)
            dst[r] = y
        pos += run
        i += run
    state[N] = np.uint32(pos)


@njit(cache=True)
def words(state, n, out):
    """The next n words into out (uint64, n): `draw`'s loop, writing 64-bit words (NumPy's
    random_raw's type). state (uint32, 625) is the key then the position, updated in place."""
    draw(state, out, n)
