"""PyTorch's float32 Box-Muller, bit for bit: `normal_` of 16 or more contiguous float32
elements on an x86 CPU runs normal_fill_16_AVX2, whose log, sin and cos are the polynomial
approximations of avx_mathfun.h (cephes' logf, sinf, cosf, eight lanes at a time). Their results
differ from a correctly rounded log or sin by an ulp or two, so these are the same steps in
float32 NumPy arithmetic, lane by lane.

PyTorch's AVX2 build lets the compiler fuse a multiply and the add after it into one rounding
(FMA); the fused steps are marked `_fma`, which rounds once (the exact product of two float32
fits a float64, so a float64 sum rounded to float32 is the fused result except in the rare case
of a tie after the first rounding). Where an add takes two products, the compiler fused the
first product: the choice checked against PyTorch, element by element, over 10**5 draws.
(PyTorch runs this kernel on AVX512 machines too: normal_ has no AVX512 kernel.)
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
_LOG_P = [F32(v) for v in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1,
                           -1.2420140846E-1, 1.4249322787E-1, -1.6668057665E-1,
                           2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]
_MIN_NORM = np.array(0x00800000, np.int32).view(F32)
_HALF_BITS = int(np.array(0.5, F32).view(np.int32))


def _fma(a, b, c):
    return (a.astype(np.float64) * np.float64(b) + np.asarray(c, np.float64)).astype(F32)


def log(x):
    """avx_mathfun's log256_ps of float32 x > 0."""
    x = np.maximum(x, _MIN_NORM)
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(F32) + F32(1)
    x = ((bits & ~0x7F800000) | _HALF_BITS).view(F32)  # the mantissa, in [0.5, 1)
    small = x < F32(0.707106781186547524)
    x = (x - F32(1)) + np.where(small, x, F32(0))
    e = e - small.astype(F32)
    z = x * x
    y = np.full_like(x, _LOG_P[0])
    for p in _LOG_P[1:]:
        y = _fma(y, x, p)
    y = y * x
    y = _fma(y, z, e * F32(-2.12194440e-4))
    y = _fma(z, F32(-0.5), y)
    return _fma(e, F32(0.693359375), x + y)


def sincos(x):
    """avx_mathfun's sincos256_ps of float32 x >= 0: (sin x, cos x)."""
    j = ((x * F32(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(F32)
    x = _fma(y, F32(-0.78515625), x)  # x - j pi/4 in three parts (extended precision)
    x = _fma(y, F32(-2.4187564849853515625e-4), x)
    x = _fma(y, F32(-3.77489497744594108e-8), x)
    z = x * x
    c = _fma(np.full_like(x, F32(2.443315711809948E-005)), z, F32(-1.388731625493765E-003))
    c = _fma(c, z, F32(4.166664568298827E-002))
    c = _fma(c * z, z, -(z * F32(0.5))) + F32(1)
    s = _fma(np.full_like(x, F32(-1.9515295891E-4)), z, F32(8.3321608736E-3))
    s = _fma(s, z, F32(-1.6666654611E-1))
    s = _fma(s * z, x, x)
    first = (j & 2) == 0  # which polynomial is the sine's
    sin, cos = np.where(first, s, c), np.where(first, c, s)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where((~(j - 2) & 4) != 0, -cos, cos)
    return sin, cos


def box_muller_16(u, mean, std):
    """normal_fill_16_AVX2 over blocks of 16 float32 uniforms u (k, 16): lanes j < 8 pair
    1 - u[j] (the radius) with u[j + 8] (the angle). Returns the (k, 16) normals."""
    radius = np.sqrt(F32(-2) * log(F32(1) - u[:, :8]))
    sin, cos = sincos(F32(2.0 * np.pi) * u[:, 8:])
    out = np.empty_like(u)
    out[:, :8] = _fma(radius * cos, F32(std), F32(mean))
    out[:, 8:] = _fma(radius * sin, F32(std), F32(mean))
    return out
