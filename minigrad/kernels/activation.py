"""Numba activation functions (GELU, SiLU, sigmoid, tanh, ReLU), forward and backward.

Each kernel is the plain loop over the flat, C-contiguous arrays it computes, e.g. GELU's

    for i in range(n):
        y[i] = 0.5 * x[i] * (1 + erf(x[i] / sqrt(2)))

and its gradient dx[i] = g[i] * (Phi(x[i]) + x[i] * phi(x[i])) in one pass over x and g.
Written with NumPy (.reference) each step is a pass over memory with a temporary of its own
(a GELU backward makes about ten); here every element is read once and written once.

Optimisations, in order:
1. The transcendental functions are .mathfn's (`fast_erf`, `fast_exp`, `fast_tanh`): plain
   arithmetic for float32, so LLVM turns the loop into AVX-512 code, 16 elements at a time.
   With the C library's `erf` or `exp` (this Numba has no SVML) each element is a call.
2. Constants are of the array's dtype (`f(0.5)`, with `f` np.float32 or np.float64, chosen
   when Numba types the function): a Python float would make float32 arithmetic float64.
3. Big arrays are cut in chunks of _CHUNK elements, spread over Numba's threads (`prange`);
   each chunk is a slice indexed from 0, which LLVM can vectorise without bounds worries.
   Small arrays run the serial twin (`*_serial`), the same loop without the pool.
4. `error_model="numpy"`: a division by zero gives inf or NaN, as in NumPy, instead of
   raising; Python's model checks every divisor, and that check keeps the loop scalar
   (3.2 against 0.34 ms for a 1280 x 512 GELU on one thread).

The scalar functions are Numba overloads, so the float32 and float64 versions are compiled
only for the dtype a program uses. No fastmath: NaN in, NaN out, as in PyTorch.
"""
import math

import numpy as np
from numba import njit, prange, types
from numba.core.extending import overload

from .mathfn import _NUMPY_ERRORS, fast_erf, fast_exp, fast_tanh

_CHUNK = 1 << 14   # elements per task of the thread pool: 64 KiB of float32


def _ftype(x):
    return np.float32 if x == types.float32 else np.float64


_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_K_TANH = math.sqrt(2 / math.pi)   # the tanh form's sqrt(2 / pi) and cubic coefficient
_C_TANH = 0.044715


# -------------------------------------------------------- scalar functions ----
def gelu_scalar(x):
    """0.5 x (1 + erf(x / sqrt 2))"""


def gelu_grad_scalar(x):
    """Phi(x) + x phi(x): d GELU / dx"""


def gelu_tanh_scalar(x):
    """0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"""


def gelu_tanh_grad_scalar(x):
    """d (tanh form) / dx"""


def sigmoid_scalar(x):
    """1 / (1 + exp(-x))"""


@overload(gelu_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _gelu(x):
    f = _ftype(x)
    return lambda x: f(0.5) * x * (f(1.0) + fast_erf(x * f(_SQRT1_2)))


@overload(gelu_grad_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _gelu_grad(x):
    f = _ftype(x)

    def impl(x):
        cdf = f(0.5) * (f(1.0) + fast_erf(x * f(_SQRT1_2)))
        return cdf + x * (fast_exp(f(-0.5) * x * x) * f(_INV_SQRT_2PI))
    return impl


@overload(gelu_tanh_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _gelu_tanh(x):
    f = _ftype(x)
    return lambda x: f(0.5) * x * (f(1.0) + fast_tanh(f(_K_TANH) * (x + f(_C_TANH) * x * x * x)))


@overload(gelu_tanh_grad_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _gelu_tanh_grad(x):
    f = _ftype(x)

    def impl(x):
        u = f(_K_TANH) * (x + f(_C_TANH) * x * x * x)
        # 1 - tanh(u)^2 as 4 e / (1 + e)^2, e = exp(-2 |u|): no cancellation where tanh is
        # near +-1 (there 1 - t * t loses all but a few bits of float32)
        e = fast_exp(f(-2.0) * abs(u))
        sech2 = f(4.0) * e / ((f(1.0) + e) * (f(1.0) + e))
        dt = sech2 * (f(_K_TANH) * (f(1.0) + f(3 * _C_TANH) * x * x))
        return f(0.5) * (f(1.0) + fast_tanh(u)) + f(0.5) * x * dt
    return impl


@overload(sigmoid_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _sigmoid(x):
    # exp(-x) overflows to inf for x < -88 and 1 / inf is the right 0; the float32 fast_exp
    # returns inf there too
    f = _ftype(x)
    return lambda x: f(1.0) / (f(1.0) + fast_exp(-x))


# ----------------------------------------------------------------- kernels ----
# x, y, g, dx: flat C-contiguous arrays of one float dtype and one length. Each op has a
# parallel kernel (chunks in `prange`) and a serial twin running the same element code.
@njit(cache=True, inline="always")
def _chunks(n):
    return (n + _CHUNK - 1) // _CHUNK


@njit(cache=True, inline="always")
def _span(n, c):
    return c * _CHUNK, min(n, (c + 1) * _CHUNK)


@njit(parallel=True, cache=True, error_model="numpy")
def gelu_forward(x, y):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = gelu_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def gelu_forward_serial(x, y):
    for k in range(len(x)):
        y[k] = gelu_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def gelu_backward(x, g, dx):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, gs, ds = x[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(xs)):
            ds[k] = gs[k] * gelu_grad_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def gelu_backward_serial(x, g, dx):
    for k in range(len(x)):
        dx[k] = g[k] * gelu_grad_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def gelu_tanh_forward(x, y):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = gelu_tanh_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def gelu_tanh_forward_serial(x, y):
    for k in range(len(x)):
        y[k] = gelu_tanh_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def gelu_tanh_backward(x, g, dx):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, gs, ds = x[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(xs)):
            ds[k] = gs[k] * gelu_tanh_grad_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def gelu_tanh_backward_serial(x, g, dx):
    for k in range(len(x)):
        dx[k] = g[k] * gelu_tanh_grad_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def silu_forward(x, y):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = xs[k] * sigmoid_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def silu_forward_serial(x, y):
    for k in range(len(x)):
        y[k] = x[k] * sigmoid_scalar(x[k])


def silu_grad_scalar(x):
    """s + x s (1 - s) with s = sigmoid(x): d SiLU / dx"""


@overload(silu_grad_scalar, jit_options=_NUMPY_ERRORS, inline="always")
def _silu_grad(x):
    f = _ftype(x)

    def impl(x):
        s = sigmoid_scalar(x)
        return s + x * s * (f(1.0) - s)
    return impl


@njit(parallel=True, cache=True, error_model="numpy")
def silu_backward(x, g, dx):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, gs, ds = x[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(xs)):
            ds[k] = gs[k] * silu_grad_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def silu_backward_serial(x, g, dx):
    for k in range(len(x)):
        dx[k] = g[k] * silu_grad_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def sigmoid_forward(x, y):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = sigmoid_scalar(xs[k])


@njit(cache=True, error_model="numpy")
def sigmoid_forward_serial(x, y):
    for k in range(len(x)):
        y[k] = sigmoid_scalar(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def tanh_forward(x, y):
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = fast_tanh(xs[k])


@njit(cache=True, error_model="numpy")
def tanh_forward_serial(x, y):
    for k in range(len(x)):
        y[k] = fast_tanh(x[k])


@njit(parallel=True, cache=True, error_model="numpy")
def relu_forward(x, y):
    zero = x.dtype.type(0)
    for c in prange(_chunks(len(x))):
        lo, hi = _span(len(x), c)
        xs, ys = x[lo:hi], y[lo:hi]
        for k in range(len(xs)):
            ys[k] = xs[k] if not xs[k] <= 0 else zero   # NaN stays NaN, as in np.maximum


@njit(cache=True, error_model="numpy")
def relu_forward_serial(x, y):
    zero = x.dtype.type(0)
    for k in range(len(x)):
        y[k] = x[k] if not x[k] <= 0 else zero


# The backward passes of sigmoid, tanh and ReLU read the output y, which is what the ops keep.
# ReLU's passes the gradient where y is NaN, as PyTorch's (it zeroes it where y <= 0 only).
@njit(parallel=True, cache=True, error_model="numpy")
def sigmoid_backward(y, g, dx):
    one = y.dtype.type(1)
    for c in prange(_chunks(len(y))):
        lo, hi = _span(len(y), c)
        ys, gs, ds = y[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(ys)):
            ds[k] = gs[k] * ys[k] * (one - ys[k])


@njit(cache=True, error_model="numpy")
def sigmoid_backward_serial(y, g, dx):
    one = y.dtype.type(1)
    for k in range(len(y)):
        dx[k] = g[k] * y[k] * (one - y[k])


@njit(parallel=True, cache=True, error_model="numpy")
def tanh_backward(y, g, dx):
    one = y.dtype.type(1)
    for c in prange(_chunks(len(y))):
        lo, hi = _span(len(y), c)
        ys, gs, ds = y[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(ys)):
            ds[k] = gs[k] * (one - ys[k] * ys[k])


@njit(cache=True, error_model="numpy")
def tanh_backward_serial(y, g, dx):
    one = y.dtype.type(1)
    for k in range(len(y)):
        dx[k] = g[k] * (one - y[k] * y[k])


@njit(parallel=True, cache=True, error_model="numpy")
def relu_backward(y, g, dx):
    zero = y.dtype.type(0)
    for c in prange(_chunks(len(y))):
        lo, hi = _span(len(y), c)
        ys, gs, ds = y[lo:hi], g[lo:hi], dx[lo:hi]
        for k in range(len(ys)):
            ds[k] = zero if ys[k] <= 0 else gs[k]


@njit(cache=True, error_model="numpy")
def relu_backward_serial(y, g, dx):
    zero = y.dtype.type(0)
    for k in range(len(y)):
        dx[k] = zero if y[k] <= 0 else g[k]
