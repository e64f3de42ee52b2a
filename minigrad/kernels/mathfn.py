"""exp, erf and tanh for Numba kernels, written so that a loop calling them vectorises.

This Numba build has no SVML (Intel's vector maths library), so `np.exp`, `math.erf` or
`np.tanh` inside a kernel's loop is a call of the C library's scalar function per element,
and a loop containing a call is never turned into vector code. The float32 versions below are
plain arithmetic (multiplies, adds, a division, comparisons that compile to selects), so LLVM
vectorises the loop around them: 16 lanes per AVX-512 instruction. float64 keeps the library
functions (exact; float64 is for gradient checks, not for speed).

    fast_exp(x)    2^n * exp(r), n = round(x / ln 2), |r| <= ln(2) / 2, exp(r) by a degree-7
                   polynomial (Cephes' expf: relative error about 1e-7); 2^n is built from its
                   bits, (n + 127) << 23 being the float32 exponent field.
    fast_erf(x)    x P(x^2) / Q(x^2) on x clamped to [-4, 4], where float32 erf is +-1 already
                   (Eigen's and XLA's rational fit, .reference.ERF32_P and _Q: error below
                   5e-7, about 4 units in the last place; the result is clamped to [-1, 1]).
    fast_tanh(x)   x P(x^2) / Q(x^2) on x clamped to [-7.9, 7.9], x itself below 4e-4
                   (Eigen's fit: error below 4e-7, a few units in the last place).

NaN goes through each (every clamp is a comparison that NaN fails) and comes out NaN; +-inf
gives the function's limit. The kernels call these from their loops; the NumPy references
use `reference.erf32` and NumPy's own functions.

Numba's on-disk cache is keyed on the source file of the cached function only: after editing
this module, delete the `__pycache__` folder next to it, or the kernels that call these
functions keep their old compiled code.
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.core.extending import intrinsic, overload

from .reference import ERF32_P, ERF32_Q

# Division by zero gives inf or NaN as in NumPy: Python's error model (raise) would check
# each divisor, and a function that may raise is neither inlined nor vectorised.
_NUMPY_ERRORS = {"error_model": "numpy"}


@intrinsic
def _f32_from_bits(typingctx, i):
    """Reinterpret the low 32 bits of an integer as a float32."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(builder.trunc(args[0], ir.IntType(32)), ir.FloatType())
    return types.float32(i), codegen


def fast_exp(x):
    """exp(x), vectorisable for float32 (np.exp for float64)."""
    return np.exp(x)


def fast_erf(x):
    """erf(x), vectorisable for float32 (math.erf for float64)."""
    return math.erf(x)


def fast_tanh(x):
    """tanh(x), vectorisable for float32 (np.tanh for float64)."""
    return np.tanh(x)


@overload(fast_exp, jit_options=_NUMPY_ERRORS)
def _fast_exp_impl(x):
    if x != types.float32:
        return lambda x: np.exp(x)
    f = np.float32

    def exp32(x):
        xc = f(-88.0) if x < f(-88.0) else x   # keeps 2^n a normal float;
        xc = f(88.0) if xc > f(88.0) else xc   # NaN passes through
        n = np.floor(xc * f(1.44269504) + f(0.5))      # round(x / ln 2)
        r = xc - n * f(0.693359375) - n * f(-2.12194440e-4)  # x - n ln2, in 2 steps
        p = f(1.9875691500e-4)
        p = p * r + f(1.3981999507e-3)
        p = p * r + f(8.3334519073e-3)
        p = p * r + f(4.1665795894e-2)
        p = p * r + f(1.6666665459e-1)
        p = p * r + f(5.0000001201e-1)
        e = (p * r * r + r + f(1.0)) * _f32_from_bits((np.int32(n) + 127) << 23)
        if x < f(-87.33654):  # exp(x) below the smallest normal float32 (and -inf): exactly 0
            e = f(0.0)
        if x > f(88.72):     # overflow
            e = f(np.inf)
        return e
    return exp32


@overload(fast_erf, jit_options=_NUMPY_ERRORS)
def _fast_erf_impl(x):
    if x != types.float32:
        return lambda x: math.erf(x)
    f, P, Q = np.float32, ERF32_P, ERF32_Q

    def erf32(x):
        c = f(4.0) if x > f(4.0) else x
        c = f(-4.0) if c < f(-4.0) else c
        c2 = c * c
        p = f(P[0])
        for a in P[1:]:
            p = p * c2 + f(a)
        q = f(Q[0])
        for b in Q[1:]:
            q = q * c2 + f(b)
        e = c * p / q
        return f(1.0) if e > f(1.0) else (f(-1.0) if e < f(-1.0) else e)  # 1 ulp past +-1 near 4
    return erf32


@overload(fast_tanh, jit_options=_NUMPY_ERRORS)
def _fast_tanh_impl(x):
    if x != types.float32:
        return lambda x: np.tanh(x)
    f = np.float32

    def tanh32(x):
        c = f(7.90531110763549805) if x > f(7.90531110763549805) else x
        c = f(-7.90531110763549805) if c < f(-7.90531110763549805) else c
        c2 = c * c
        p = f(-2.76076847742355e-16)
        p = p * c2 + f(2.00018790482477e-13)
        p = p * c2 + f(-8.60467152213735e-11)
        p = p * c2 + f(5.12229709037114e-08)
        p = p * c2 + f(1.48572235717979e-05)
        p = p * c2 + f(6.37261928875436e-04)
        p = p * c2 + f(4.89352455891786e-03)
        q = f(1.19825839466702e-06)
        q = q * c2 + f(1.18534705686654e-04)
        q = q * c2 + f(2.26843463243900e-03)
        q = q * c2 + f(4.89352518554385e-03)
        t = c * p / q
        return x if abs(x) < f(0.0004) else t
    return tanh32
