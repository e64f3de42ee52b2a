"""Fast kernels behind minigrad's heavy ops, with two interchangeable backends.

    from minigrad import kernels
    kernels.set_backend("numpy")     # or "numba" (default; env MINIGRAD_BACKEND)
    y = kernels.softmax(x)

"numba" runs every op in Numba, all matmuls included, so a training step
uses one thread pool only (see the module docstrings of matmul, softmax
and dropout for how each kernel works). "numpy" runs the plain NumPy
references in .reference. Both give the same results up to float rounding,
and the identical dropout mask.

Every public function checks its inputs and raises ValueError (shapes,
p) or TypeError (dtypes) naming the op. Supported dtypes are float32 and
float64; matmul also accepts two integer (or bool) arrays and computes them
exactly with np.matmul (no BLAS or thread pool is involved for integers).

This package imports nothing else from minigrad.
"""
import math
import operator
import os

import numpy as np

# The submodules are imported first: importing a submodule sets an attribute
# of the same name on this package, and the public functions below (matmul,
# softmax, dropout) must be what those names finally refer to.
from . import reference as _ref
from . import matmul as _mm
from . import softmax as _sm
from . import dropout as _dp

BACKENDS = ("numba", "numpy")

# Below this much work (multiply-adds for matmul, elements otherwise) the "numba" backend
# calls the NumPy reference instead: waking a parallel kernel's threads costs more than the
# work, and on a loaded machine a 2-thread launch can stall for milliseconds. Tests of the
# kernels themselves set it to 0 so that every size runs the Numba code.
PARALLEL_MIN_WORK = 32768
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _check_backend(name, where):
    if name not in BACKENDS:
        raise ValueError(f"{where}: unknown kernel backend {name!r}; "
                         f"choose one of {', '.join(map(repr, BACKENDS))}")
    return name


_backend = _check_backend(os.environ.get("MINIGRAD_BACKEND", "numba"), "MINIGRAD_BACKEND")


def set_backend(name):
    """Use "numba" (Numba kernels) or "numpy" (the NumPy references)."""
    global _backend
    _backend = _check_backend(name, "set_backend")


def get_backend():
    return _backend


# ---------------------------------------------------------------- checks ----
def _as_array(x, op, what):
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {what} must be a numpy array, got {type(x).__name__}")
    return x


def _check_float(op, *arrays):
    dt = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dt:
            raise TypeError(f"{op}: dtypes differ: {dt} and {a.dtype}")
    if dt not in _FLOATS:
        raise TypeError(f"{op}: unsupported dtype {dt} (expected float32 or float64)")


def _check_rows(op, x):
    if x.ndim == 0:
        raise ValueError(f"{op}: expected at least 1 dimension, got a 0-d array")


def _check_same_shape(op, y, g):
    if y.shape != g.shape:
        raise ValueError(f"{op}: output of shape {y.shape} and gradient of shape "
                         f"{g.shape} differ")


# ---------------------------------------------------------------- matmul ----
def matmul(a, b):
    """np.matmul for a.ndim >= 2 and b.ndim >= 2, batch dims broadcast."""
    a, b = _as_array(a, "matmul", "a"), _as_array(b, "matmul", "b")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"matmul: expected operands with at least 2 dimensions, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: inner dimensions "
                         f"{a.shape[-1]} and {b.shape[-2]} differ")
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise ValueError(f"matmul: cannot multiply {a.shape} by {b.shape}: batch dimensions "
                         f"{a.shape[:-2]} and {b.shape[:-2]} do not broadcast") from None
    if a.dtype != b.dtype:
        raise TypeError(f"matmul: dtypes differ: {a.dtype} and {b.dtype}")
    if a.dtype not in _FLOATS:
        if a.dtype.kind in "iub":   # exact integer product; NumPy uses no BLAS here
            return _ref.matmul(a, b)
        raise TypeError(f"matmul: unsupported dtype {a.dtype} (expected float32, float64 "
                        f"or an integer type)")
    work = a.shape[-2] * a.shape[-1] * b.shape[-1] * max(
        math.prod(a.shape[:-2]), math.prod(b.shape[:-2]))
    fast = _backend == "numba" and work >= PARALLEL_MIN_WORK
    return (_mm.matmul if fast else _ref.matmul)(a, b)


# --------------------------------------------------------------- softmax ----
def _rows(x):
    """A C-contiguous (rows, n) view or copy of x."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def _forward(op, kernel, ref, x):
    x = _as_array(x, op, "x")
    _check_rows(op, x)
    _check_float(op, x)
    if _backend == "numpy" or x.size < PARALLEL_MIN_WORK:
        return ref(x)
    if x.size == 0:
        return np.empty_like(x)
    y = np.empty(x.shape, x.dtype)
    kernel(_rows(x), y.reshape(-1, x.shape[-1]))
    return y


def _backward(op, kernel, ref, y, grad):
    y, grad = _as_array(y, op, "y"), _as_array(grad, op, "grad")
    _check_rows(op, y)
    _check_same_shape(op, y, grad)
    _check_float(op, y, grad)
    if _backend == "numpy" or y.size < PARALLEL_MIN_WORK:
        return ref(y, grad)
    if y.size == 0:
        return np.empty_like(y)
    dx = np.empty(y.shape, y.dtype)
    kernel(_rows(y), _rows(grad), dx.reshape(-1, y.shape[-1]))
    return dx


def softmax(x):
    """exp(x - max) / sum(exp(x - max)) along the last axis."""
    return _forward("softmax", _sm.softmax_2d, _ref.softmax, x)


def softmax_backward(y, grad):
    """dx = y * (grad - sum(grad * y, -1)), with y = softmax(x)."""
    return _backward("softmax_backward", _sm.softmax_backward_2d, _ref.softmax_backward, y, grad)


def log_softmax(x):
    """x - logsumexp(x) along the last axis."""
    return _forward("log_softmax", _sm.log_softmax_2d, _ref.log_softmax, x)


def log_softmax_backward(y, grad):
    """dx = grad - exp(y) * sum(grad, -1), with y = log_softmax(x)."""
    return _backward("log_softmax_backward", _sm.log_softmax_backward_2d,
                     _ref.log_softmax_backward, y, grad)


# --------------------------------------------------------------- dropout ----
def _check_p_seed(op, p, seed):
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: p must be a number, got {type(p).__name__}") from None
    if not 0.0 <= p < 1.0:
        raise ValueError(f"{op}: p must be in [0, 1), got {p}")
    try:
        seed = operator.index(seed)
    except TypeError:
        raise TypeError(f"{op}: seed must be an integer, got {type(seed).__name__}") from None
    if not 0 <= seed < 2**64:
        raise ValueError(f"{op}: seed must be in [0, 2**64), got {seed}")
    return p, seed


def dropout(x, p, seed):
    """x * keep / (1 - p), keep decided by a hash of (seed, flat C-order index).

    The same seed gives the same mask, so dropout(grad, p, seed) is the
    backward pass of dropout(x, p, seed).
    """
    x = _as_array(x, "dropout", "x")
    p, seed = _check_p_seed("dropout", p, seed)
    _check_float("dropout", x)
    if _backend == "numpy" or x.size < PARALLEL_MIN_WORK:
        return _ref.dropout(x, p, seed)
    out = np.empty(x.shape, x.dtype)
    _dp.dropout_flat(np.ascontiguousarray(x).reshape(-1), out.reshape(-1),
                     np.uint64(_ref.dropout_key(seed)), np.uint64(_ref.dropout_threshold(p)),
                     x.dtype.type(1.0 / (1.0 - p)))
    return out


def dropout_mask(shape, p, seed, dtype=np.float32):
    """The mask dropout(x, p, seed) multiplies by: 0 or 1/(1-p), of `dtype`."""
    p, seed = _check_p_seed("dropout_mask", p, seed)
    dtype = np.dtype(dtype)
    if dtype not in _FLOATS:
        raise TypeError(f"dropout_mask: unsupported dtype {dtype} (expected float32 or float64)")
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)
    if _backend == "numpy":
        return _ref.dropout_mask(shape, p, seed, dtype)
    out = np.empty(shape, dtype)
    _dp.mask_flat(out.reshape(-1), np.uint64(_ref.dropout_key(seed)),
                  np.uint64(_ref.dropout_threshold(p)), dtype.type(1.0 / (1.0 - p)))
    return out


__all__ = ["BACKENDS", "set_backend", "get_backend", "matmul", "softmax", "softmax_backward",
           "log_softmax", "log_softmax_backward", "dropout", "dropout_mask"]
