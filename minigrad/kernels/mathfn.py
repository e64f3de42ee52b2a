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
    fast_exp_no_overflow(x)
                   exp(x) for x <= 88 only (log-softmax's x - max, sigmoid's exp(-|x|)): no
                   overflow handling, and below the float32 range the clamp at -88 makes the
                   exponent field 0, so the result 0, with no select; and a degree-6
                   polynomial (_EXP32_P5, fitted here for float32: relative error 7e-8 on the
                   reduced range, the float32 rounding's own, as the degree-7 one). About 17
                   vector instructions against fast_exp's 28 (a loop of 655,360 exps: 271
                   against 321 us on one busy core); 8.4e-8 relative error over [-90, 88],
                   as fast_exp's.
    fast_erf(x)    x P(x^2) / Q(x^2) on x clamped to [-4, 4], where float32 erf is +-1 already
                   (Eigen's and XLA's rational fit, .reference.ERF32_P and _Q: error below
                   5e-7, about 4 units in the last place; the result is clamped to [-1, 1]).
    fast_tanh(x)   x P(x^2) / Q(x^2) on x clamped to [-7.9, 7.9], x itself below 4e-4
                   (Eigen's fit: error below 4e-7, a few units in the last place).

The polynomials are evaluated with fused multiply-adds (`_muladd`, LLVM's fmuladd: one
instruction and one rounding where the CPU has FMA, as most x86-64 CPUs since 2013): a third
fewer instructions than separate multiplies and adds (a 1280 x 512 float32 sigmoid 0.33 ->
0.26 ms, GELU's backward 0.62 -> 0.51 ms on one core here). The results may then differ by an
ulp between a machine with FMA and one without; on one machine they are fixed.

NaN goes through each (every clamp is a comparison that NaN fails) and comes out NaN; +-inf
gives the function's limit, and erf and tanh are exactly +-1 from their clamp bounds on. The
kernels call these from their loops; the NumPy references use `reference.erf` and NumPy's own
functions.

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


def fast_exp_no_overflow(x):
    """exp(x) for x <= 88 (larger x give wrong values), vectorisable for float32."""
    return np.exp(x)


def fast_erf(x):
    """erf(x), vectorisable for float32 (math.erf for float64)."""
    return math.erf(x)


def fast_tanh(x):
    """tanh(x), vectorisable for float32 (np.tanh for float64)."""
    return np.tanh(x)


# Polynomial coefficients, highest power first, as float32 (so the arithmetic stays float32).
_EXP32_P = tuple(np.float32(a) for a in (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3,
                                         4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1))
# exp(r) = 1 + r + r^2 Q(r) on |r| <= ln(2) / 2: a near-minimax Q of degree 4 for the relative
# error of exp (Lawson's iteration over Chebyshev nodes); the float32 evaluation's maximum
# relative error is 6.7e-8, the same as with the degree-5 Q above (6.5e-8 evaluated alike)
_EXP32_P5 = tuple(np.float32(a) for a in (1.3814610429e-3, 8.3687100559e-3, 4.1668388993e-2,
                                          1.6666521132e-1, 4.9999994040e-1))
_ERF32 = (np.float32(4.0), tuple(map(np.float32, ERF32_P)), tuple(map(np.float32, ERF32_Q)))
_TANH32 = (np.float32(7.90531110763549805),
           tuple(np.float32(a) for a in (-2.76076847742355e-16, 2.00018790482477e-13,
                                         -8.60467152213735e-11, 5.12229709037114e-08,
                                         1.48572235717979e-05, 6.37261928875436e-04,
                                         4.89352455891786e-03)),
           tuple(np.float32(a) for a in (1.19825839466702e-06, 1.18534705686654e-04,
                                         2.26843463243900e-03, 4.89352518554385e-03)))


@intrinsic
def _muladd(typingctx, a, b, c):
    """a * b + c in one fused multiply-add where the CPU has one (LLVM's fmuladd): half the
    instructions of a polynomial, and one rounding instead of two."""
    def codegen(context, builder, sig, args):
        return builder.call(_fmuladd(builder, args[0].type), args)
    return a(a, a, a), codegen


def _fmuladd(builder, t):
    """LLVM's fmuladd for the float type t, declared in the module being built."""
    return builder.module.declare_intrinsic("llvm.fmuladd", [t], ir.FunctionType(t, [t] * 3))


@intrinsic
def _horner(typingctx, x, coefficients):
    """coefficients[0] x^(n-1) + ... + coefficients[-1], by Horner's rule: a chain of _muladd,
    written out here (a loop over the tuple would be Numba's to type, inline and lower at
    every call, and LLVM's to unroll)."""
    if not (isinstance(x, types.Float) and isinstance(coefficients, types.UniTuple)
            and coefficients.dtype == x):
        return None

    def codegen(context, builder, sig, args):
        fn = _fmuladd(builder, args[0].type)
        p = builder.extract_value(args[1], 0)
        for i in range(1, sig.args[1].count):
            p = builder.call(fn, [p, args[0], builder.extract_value(args[1], i)])
        return p
    return x(x, coefficients), codegen


def _odd_rational(x, fit):
    """c P(c^2) / Q(c^2) for (bound, P, Q) = fit and c = x clamped to [-bound, bound];
    +-1 where |x| >= bound."""


@overload(_odd_rational, jit_options=_NUMPY_ERRORS, inline="always")
def _odd_rational_impl(x, fit):
    def odd_rational(x, fit):
        bound, P, Q = fit
        c = bound if x > bound else x   # (NaN fails both comparisons and passes through)
        c = -bound if c < -bound else c
        c2 = c * c
        r = c * _horner(c2, P) / _horner(c2, Q)
        one = P[0] / P[0]
        # from the bound on, exactly +-1 (the fit's own value there may miss it by an ulp)
        return (one if x > one - one else -one) if abs(x) >= bound else r
    return odd_rational


# The float32 versions, in float32 arithmetic throughout (_F: constants of that type).
_F = np.float32


def _exp32(x):
    xc = _F(-88.0) if x < _F(-88.0) else x   # keeps 2^n a normal float;
    xc = _F(88.0) if xc > _F(88.0) else xc   # NaN passes through
    n = np.floor(xc * _F(1.44269504) + _F(0.5))      # round(x / ln 2)
    r = _muladd(n, _F(2.12194440e-4), _muladd(n, _F(-0.693359375), xc))  # x - n ln2, 2 steps
    e = (_muladd(_horner(r, _EXP32_P) * r, r, r) + _F(1.0)) * _f32_from_bits(
        (np.int32(n) + 127) << 23)
    if x < _F(-87.33654):  # exp(x) below the smallest normal float32 (and -inf): exactly 0
        e = _F(0.0)
    if x > _F(88.72):     # overflow
        e = _F(np.inf)
    return e


def _exp32_no_overflow(x):
    # from -88 on, n >= -127: the exponent field n + 127 is 0 at the bottom (2^n read as 0.0,
    # so exp = 0, as _exp32's select gives there) and never negative (_exp32 gives 0 below
    # -87.34, this one exp(x), a denormal, down to -87.98)
    xc = _F(-88.0) if x < _F(-88.0) else x   # -inf becomes 0; NaN passes through
    n = np.floor(xc * _F(1.44269504) + _F(0.5))
    r = _muladd(n, _F(2.12194440e-4), _muladd(n, _F(-0.693359375), xc))
    return (_muladd(_horner(r, _EXP32_P5) * r, r, r) + _F(1.0)) * _f32_from_bits(
        (np.int32(n) + 127) << 23)


def _erf32(x):
    e = _odd_rational(x, _ERF32)
    return _F(1.0) if e > _F(1.0) else (_F(-1.0) if e < _F(-1.0) else e)  # 1 ulp past +-1 near 4


def _tanh32(x):
    t = _odd_rational(x, _TANH32)
    return x if abs(x) < _F(0.0004) else t


def _register(stub, float32_version, library_function):
    """Compile calls of `stub` as float32_version for a float32 argument, as the library's
    function otherwise."""
    def typed(x):
        return float32_version if x == types.float32 else (lambda x: library_function(x))
    overload(stub, jit_options=_NUMPY_ERRORS)(typed)


_register(fast_exp, _exp32, np.exp)
_register(fast_exp_no_overflow, _exp32_no_overflow, np.exp)
_register(fast_erf, _erf32, math.erf)
_register(fast_tanh, _tanh32, np.tanh)
