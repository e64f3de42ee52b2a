"""Numba activation functions (GELU, SiLU, sigmoid, tanh, ReLU), forward and backward.

Each kernel is the plain loop over the flat, C-contiguous arrays it computes, e.g. GELU's

    for i in range(n):
        y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2)))

and its gradient dx[i] = g[i] * (Phi(x[i]) + x[i] * phi(x[i])) in one pass over x and g.
Written with NumPy (.reference) each step is a pass over memory with a temporary of its own
(a GELU backward makes about ten); here every element is read once and written once.

One loop serves every kernel: `out[i] = element(a[i], g[i])`, where `element` is a scalar
function of this module (`ELEMENTS`). A backward element reads the saved array a (the input x
or the output y) and the gradient g; a forward element reads x and ignores its second
argument, and its kernel is given x twice (the ignored load is dropped once the element is
inlined). `KERNELS[name]` holds the (parallel, serial) pair compiled from that one loop.

Optimisations, in order:
1. The transcendental functions are .mathfn's (`fast_erf`, `fast_exp`, `fast_tanh`): plain
   arithmetic for float32, so LLVM turns the loop into AVX-512 code, 16 elements at a time.
   With the C library's `erf` or `exp` (this Numba has no SVML) each element is a call.
2. Constants are of the array's dtype (`f(0.5)`, with `f` np.float32 or np.float64, chosen
   when Numba types the element): a Python float would make float32 arithmetic float64.
3. Big arrays are cut in chunks of _CHUNK elements, spread over Numba's threads (`prange`);
   each chunk is a slice indexed from 0, which LLVM can vectorise without bounds worries.
   Small arrays run the serial kernel: the same loop compiled without the pool.
4. `error_model="numpy"`: a division by zero gives inf or NaN, as in NumPy, instead of
   raising; Python's model checks every divisor, and that check keeps the loop scalar
   (3.2 against 0.34 ms for a 1280 x 512 GELU on one thread).

The elements are Numba overloads, so the float32 and float64 versions are compiled only for
the dtype a program uses. No fastmath: NaN in, NaN out, as in PyTorch.
"""
import math
import sys

import numpy as np
from numba import prange, types
from numba.core.extending import overload

from .mathfn import _NUMPY_ERRORS, fast_erf, fast_exp, fast_exp_no_overflow, fast_tanh
from .policy import twins

_CHUNK = 1 << 14   # elements per task of the thread pool: 64 KiB of float32

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_K_TANH = math.sqrt(2 / math.pi)   # the tanh form's sqrt(2 / pi) and cubic coefficient
_C_TANH = 0.044715


# -------------------------------------------------------- scalar elements ----
# Each maker takes the float type f (np.float32 or np.float64) and returns the element
# (a, g) -> out, written in f's arithmetic.
def _gelu(f):
    return lambda x, _: f(0.5) * x * (f(1.0) + fast_erf(x * f(_SQRT1_2)))


def _gelu_grad(f):
    def element(x, g):   # g (Phi(x) + x phi(x))
        cdf = f(0.5) * (f(1.0) + fast_erf(x * f(_SQRT1_2)))
        return g * (cdf + x * (fast_exp(f(-0.5) * x * x) * f(_INV_SQRT_2PI)))
    return element


def _gelu_tanh(f):
    return lambda x, _: f(0.5) * x * (f(1.0) + fast_tanh(f(_K_TANH) * (x + f(_C_TANH) * x * x * x)))


def _gelu_tanh_grad(f):
    def element(x, g):
        u = f(_K_TANH) * (x + f(_C_TANH) * x * x * x)
        # 1 - tanh(u)^2 as 4 e / (1 + e)^2, e = exp(-2 |u|): no cancellation where tanh is
        # near +-1 (there 1 - t * t loses all but a few bits of float32)
        e = fast_exp(f(-2.0) * abs(u))
        sech2 = f(4.0) * e / ((f(1.0) + e) * (f(1.0) + e))
        dt = sech2 * (f(_K_TANH) * (f(1.0) + f(3 * _C_TANH) * x * x))
        return g * (f(0.5) * (f(1.0) + fast_tanh(u)) + f(0.5) * x * dt)
    return element


# sigmoid as the reference computes it: exp only ever sees -|x| (it cannot overflow, so the
# cheaper fast_exp_no_overflow serves), and below 0 the form e / (1 + e) keeps the precision
# of tiny values. One division, as 1 / (1 + exp(-x)).
def _sigmoid(f):
    def element(x, _):
        e = fast_exp_no_overflow(-abs(x))
        r = f(1.0) / (f(1.0) + e)
        return r if x >= f(0.0) else e * r   # (NaN: e and r are NaN)
    return element


# SiLU and its gradient go through sigmoid_element, so that every SiLU kernel computes the
# same s, and the same bits from it: the forward that also returns s, for the backward that
# reads it (silu_grad_sigmoid), and the pair that recomputes it from x. (sigmoid_element is
# one of the module's elements that _element below makes.)
def _silu(f):
    return lambda x, _: x * sigmoid_element(x, x)


def _silu_grad(f):
    return lambda x, g: silu_grad_sigmoid(x, sigmoid_element(x, x), g)


def silu_grad_sigmoid(x, s, g):
    """g * d silu(x) / dx from x and s = sigmoid(x), in PyTorch's form s (1 + x (1 - s)); the
    kernels compile the overload below, in the arguments' own float type."""
    return g * (s * (1.0 + x * (1.0 - s)))


@overload(silu_grad_sigmoid, jit_options=_NUMPY_ERRORS, inline="always", strict=False)
def _silu_grad_sigmoid(x, s, g):
    f = np.float32 if x == types.float32 else np.float64
    # PyTorch's form: s (1 + x (1 - s))
    return lambda x, s, g: g * (s * (f(1.0) + x * (f(1.0) - s)))


# The backward elements of sigmoid, tanh and ReLU read the output y, which is what the ops
# keep. ReLU's passes the gradient where y is NaN, as PyTorch's (it zeroes it where y <= 0).
def _sigmoid_grad(f):
    return lambda y, g: g * y * (f(1.0) - y)


def _tanh(f):
    return lambda x, _: fast_tanh(x)


def _tanh_grad(f):
    return lambda y, g: g * (f(1.0) - y * y)


def _relu(f):
    return lambda x, _: x if not x <= f(0.0) else f(0.0)   # NaN stays NaN, as in np.maximum


def _relu_grad(f):
    return lambda y, g: f(0.0) if y <= f(0.0) else g


_MAKERS = {"gelu": (_gelu, _gelu_grad), "gelu_tanh": (_gelu_tanh, _gelu_tanh_grad),
           "silu": (_silu, _silu_grad), "sigmoid": (_sigmoid, _sigmoid_grad),
           "tanh": (_tanh, _tanh_grad), "relu": (_relu, _relu_grad)}


def _element(name, maker):
    """A scalar function of (a, g), named `name` in this module (so that Numba's cache can
    name it), whose compiled body is maker(f) for the float type of a."""
    def element(a, g):
        """The element; compiled by Numba only."""
        raise NotImplementedError(f"{name} runs inside Numba kernels only")

    element.__name__ = element.__qualname__ = name
    setattr(sys.modules[__name__], name, element)

    def typed(a, g):
        return maker(np.float32 if a == types.float32 else np.float64)
    overload(element, jit_options=_NUMPY_ERRORS, inline="always", strict=False)(typed)
    return element


# -------------------------------------------------------------------- kernels ----
def _loop(element):
    def kernel(a, g, out):
        """out[i] = element(a[i], g[i]) for flat C-contiguous arrays of one float dtype and
        one length, in chunks of _CHUNK elements (spread over the pool when compiled parallel;
        one after the other in the serial twin, with the same bits: each element stands alone)."""
        n = len(a)
        for c in prange((n + _CHUNK - 1) // _CHUNK):
            lo, hi = c * _CHUNK, min(n, (c + 1) * _CHUNK)
            ac, gc, oc = a[lo:hi], g[lo:hi], out[lo:hi]
            for k in range(len(ac)):
                oc[k] = element(ac[k], gc[k])
    return kernel


def _silu_sigmoid_loop(x, y, s):
    """y = silu(x) and s = sigmoid(x), chunked as _loop's kernels."""
    n = len(x)
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        lo, hi = c * _CHUNK, min(n, (c + 1) * _CHUNK)
        xc, yc, sc = x[lo:hi], y[lo:hi], s[lo:hi]
        for k in range(len(xc)):
            sk = sigmoid_element(xc[k], xc[k])
            sc[k] = sk
            yc[k] = xc[k] * sk


def _silu_backward_sigmoid_loop(x, s, g, dx):
    """dx = the gradient of silu from x, s = sigmoid(x) and the output's gradient g."""
    n = len(x)
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        lo, hi = c * _CHUNK, min(n, (c + 1) * _CHUNK)
        xc, sc, gc, dc = x[lo:hi], s[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(xc)):
            dc[k] = silu_grad_sigmoid(xc[k], sc[k], gc[k])


# name -> forward (parallel, serial), backward (parallel, serial); the forward kernels take
# (x, x, y), the backward ones (saved, grad, dx)
ELEMENTS = {}
KERNELS = {}
for _name, (_fwd, _bwd) in _MAKERS.items():
    ELEMENTS[_name] = (_element(f"{_name}_element", _fwd),
                       _element(f"{_name}_grad_element", _bwd))
    KERNELS[_name] = tuple(twins(_loop(e), e.__name__, error_model="numpy")
                           for e in ELEMENTS[_name])
del _name, _fwd, _bwd
# SiLU keeping what its backward needs: (x, y, s) and (x, s, g, dx), each (parallel, serial)
SILU_SIGMOID = twins(_silu_sigmoid_loop, "silu_sigmoid", error_model="numpy")
SILU_BACKWARD_SIGMOID = twins(_silu_backward_sigmoid_loop, "silu_backward_sigmoid",
                              error_model="numpy")
