"""PyTorch's normal fill of 16 or more contiguous elements, compiled over the mt19937 words.

The plain loop, for n elements (n >= 16) and the 32-bit words w of the generator (n of them,
and 16 more when n is not a multiple of 16):

    u[i] = uniform(w, i)                            i < n: [0, 1), as PyTorch's uniform_
    for each whole block of 16 at b:                the Box-Muller transform of 8 pairs
        r = sqrt(-2 log(1 - u[b + j]));  t = 2 pi u[b + j + 8]        j < 8
        out[b + j] = r cos(t) std + mean;  out[b + j + 8] = r sin(t) std + mean
    if n % 16: the last 16 elements again, from the 16 uniforms of the words after the n-th

float32 (`normal32`): uniform(w, i) = (w[i] & (2**24 - 1)) * 2**-24, and log, sin and cos are
avx_mathfun's polynomials with PyTorch's fused multiply-adds, the arithmetic of
minigrad/normal_avx.py (its NumPy reference, lane for lane: see there). float64
(`normal64`): uniform(w, i) = ((w[2i] << 32 | w[2i + 1]) & (2**53 - 1)) * 2**-53, and log,
cos, sin and sqrt are the C library's (Numba's math functions call it), with the last
multiply and add fused into one rounding, as PyTorch's compiler emits normal_fill_16<double>:
its reference is `normal64_reference` below (Python's math, element by element).

The optimisation over the references is only fusion: one pass over the words, each block's
uniforms held in registers, no temporary arrays (the NumPy forms make a dozen passes over
float32 arrays for the polynomials). The arithmetic, and so the bits, are the references'.
"""
import math

import numpy as np
from numba import njit

from .fma import fma
from .policy import HELPER

F32 = np.float32
_LOG_P = np.array((7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1,
                   1.4249322787E-1, -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1,
                   3.3333331174E-1), F32)
_MIN_NORM = np.array(0x00800000, np.int32).view(F32)[()]
_SQRTHF = F32(0.707106781186547524)
_LOG_Q1, _LOG_Q2 = F32(-2.12194440e-4), F32(0.693359375)
_FOPI = F32(1.27323954473516)
_DP1, _DP2, _DP3 = F32(-0.78515625), F32(-2.4187564849853515625e-4), F32(-3.77489497744594108e-8)
_C0, _C1, _C2 = F32(2.443315711809948E-005), F32(-1.388731625493765E-003), F32(
    4.166664568298827E-002)
_S0, _S1, _S2 = F32(-1.9515295891E-4), F32(8.3321608736E-3), F32(-1.6666654611E-1)
_ONE, _HALF, _MINUS_TWO, _ZERO = F32(1), F32(0.5), F32(-2), F32(0)
_HALF_BITS = np.int32(np.array(0.5, F32).view(np.int32))
_TWO_PI32 = F32(2.0 * np.pi)
_UNIT32 = F32(2.0 ** -24)
_MASK24 = np.uint64(2 ** 24 - 1)
_MASK53 = np.uint64(2 ** 53 - 1)
_UNIT64 = 2.0 ** -53
_SHIFT = np.uint64(32)


@njit(cache=True, inline="always")
def _fma32(a, b, c):
    """float32 a * b + c rounded once (normal_avx._fma: the float64 product is exact)."""
    return F32(np.float64(a) * np.float64(b) + np.float64(c))


_CHUNK = 64   # blocks of 16 per pass: each pass's lanes (512 of each) stay in L1


@njit(**HELPER)   # (called twice: inlined, its long body would compile twice)
def _blocks32(words, src, out, dst, nb, mean, std, x, e, m, t, r):
    """normal_fill_16_AVX2 of nb blocks: out[dst + 16 i:dst + 16 i + 16] from the 16 words
    from src + 16 i. Lane k = 8 i + j of the scratch arrays (8 nb each) is block i's pair j:
    each step below is a loop over the lanes without branches, which LLVM vectorises (the
    lanes of the AVX2 kernel, two blocks or more at a time)."""
    lanes = 8 * nb
    # views indexed from 0: an index Numba cannot prove non-negative (src + ...) keeps a
    # loop scalar, with a wrap-around check per element
    ws, os = words[src:src + 16 * nb], out[dst:dst + 16 * nb]
    for k in range(lanes):
        at = 16 * (k >> 3) + (k & 7)
        u1 = F32(np.uint64(ws[at]) & _MASK24) * _UNIT32
        u2 = F32(np.uint64(ws[at + 8]) & _MASK24) * _UNIT32
        x[k] = max(_ONE - u1, _MIN_NORM)
        t[k] = _TWO_PI32 * u2
    # log (log256_ps): the exponent and the mantissa in [0.5, 1) from the bits
    xbits, mbits = x.view(np.int32), m.view(np.int32)
    for k in range(lanes):
        bits = xbits[k]
        e[k] = F32((bits >> 23) - 0x7F) + _ONE
        mbits[k] = (bits & ~0x7F800000) | _HALF_BITS
    for k in range(lanes):
        v = m[k]
        small = _ONE if v < _SQRTHF else _ZERO
        v = (v - _ONE) + v * small   # v * 0 = +0 adds nothing, as avx_mathfun's masked add
        ek = e[k] - small
        z = v * v
        y = _LOG_P[0]
        for q in range(1, _LOG_P.size):
            y = _fma32(y, v, _LOG_P[q])
        y = y * v
        y = _fma32(y, z, ek * _LOG_Q1)
        y = _fma32(z, -_HALF, y)
        r[k] = np.sqrt(_MINUS_TWO * _fma32(ek, _LOG_Q2, v + y))
    # sincos256_ps of the angles, then the outputs
    for k in range(lanes):
        v = t[k]
        j = (np.int32(v * _FOPI) + np.int32(1)) & np.int32(~1)
        y = F32(j)
        v = _fma32(y, _DP1, v)
        v = _fma32(y, _DP2, v)
        v = _fma32(y, _DP3, v)
        z = v * v
        c = _fma32(_C0, z, _C1)
        c = _fma32(c, z, _C2)
        c = _fma32(c * z, z, -(z * _HALF)) + _ONE
        s = _fma32(_S0, z, _S1)
        s = _fma32(s, z, _S2)
        s = _fma32(s * z, v, v)
        first = (j & np.int32(2)) == 0
        sin = s if first else c
        cos = c if first else s
        m[k] = -sin if (j & np.int32(4)) != 0 else sin   # (x and m are free again)
        x[k] = -cos if (~(j - np.int32(2)) & np.int32(4)) != 0 else cos
    for k in range(lanes):
        at = 16 * (k >> 3) + (k & 7)
        os[at] = _fma32(r[k] * x[k], std, mean)
        os[at + 8] = _fma32(r[k] * m[k], std, mean)


@njit(cache=True)
def normal32(words, mean, std, out):
    """PyTorch's float32 normal_ of out (n >= 16) from `words` (n, plus 16 if n % 16), the
    32-bit mt19937 words as uint64 (random_raw's); mean and std as float32."""
    n = out.size
    mean, std = F32(mean), F32(std)
    x, e, m, t, r = (np.empty(8 * _CHUNK, F32), np.empty(8 * _CHUNK, F32),
                     np.empty(8 * _CHUNK, F32), np.empty(8 * _CHUNK, F32),
                     np.empty(8 * _CHUNK, F32))
    full = n // 16
    for b in range(0, full, _CHUNK):
        nb = min(_CHUNK, full - b)
        _blocks32(words, 16 * b, out, 16 * b, nb, mean, std, x, e, m, t, r)
    if n % 16:
        _blocks32(words, n, out, n - 16, 1, mean, std, x, e, m, t, r)


@njit(cache=True, inline="always")
def _unit64(words, i):
    """The float64 uniform of words 2i (the high half) and 2i + 1."""
    w = (np.uint64(words[2 * i]) << _SHIFT) | np.uint64(words[2 * i + 1])
    return np.float64(w & _MASK53) * _UNIT64


@njit(**HELPER)
def _block64(words, start, out, at, mean, std):
    """out[at:at + 16] from the 16 uniforms of words[2 start:2 start + 32] (normal_fill_16)."""
    for j in range(8):
        u1 = 1.0 - _unit64(words, start + j)
        radius = math.sqrt(-2.0 * math.log(u1))
        theta = 2.0 * math.pi * _unit64(words, start + j + 8)
        out[at + j] = fma(radius * math.cos(theta), std, mean)
        out[at + j + 8] = fma(radius * math.sin(theta), std, mean)


@njit(cache=True)
def normal64(words, mean, std, out):
    """PyTorch's float64 normal_ of out (n >= 16) from `words` (2n, plus 32 if n % 16), the
    32-bit mt19937 words as uint64, two per uniform."""
    n = out.size
    for b in range(0, n - 15, 16):
        _block64(words, b, out, b, mean, std)
    if n % 16:
        _block64(words, n, out, n - 16, mean, std)


def normal64_reference(words, mean, std, n):
    """normal64's numbers, element by element in Python: the uniforms in NumPy, then the loop
    of the module's docstring with Python's math functions, which are the C library's (NumPy's
    own log, cos and sin, vectorised on x86-64, can be an ulp off theirs), and the fused
    multiply-add as exact arithmetic on fractions, rounded once."""
    from fractions import Fraction
    wide = (words[0::2] << _SHIFT) | words[1::2]
    u = ((wide & _MASK53).astype(np.float64) * _UNIT64).tolist()
    out = np.empty(n)
    starts = [(b, b) for b in range(0, n - 15, 16)] + ([(n, n - 16)] if n % 16 else [])
    for start, at in starts:
        for j in range(8):
            radius = math.sqrt(-2.0 * math.log(1.0 - u[start + j]))
            theta = 2.0 * math.pi * u[start + j + 8]
            for k, part in ((j, radius * math.cos(theta)), (j + 8, radius * math.sin(theta))):
                out[at + k] = float(Fraction(part) * Fraction(std) + Fraction(mean))
    return out
