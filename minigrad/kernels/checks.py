"""The argument checks of the kernels' entry points.

Every public function of the kernels checks its inputs before a compiled kernel sees them, and
raises ValueError (shapes, p, eps) or TypeError (types, dtypes) naming the op and the values
involved. Supported dtypes are float32 and float64 (matmul also accepts integers).
"""
import operator

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def as_array(x, op, what):
    if isinstance(x, np.generic):  # a NumPy scalar, as a reduction of a 0-d array gives
        return np.asarray(x)
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{op}: {what} must be a numpy array, got {type(x).__name__}")
    return x


def check_float(op, *arrays):
    dt = arrays[0].dtype
    for a in arrays[1:]:
        if a.dtype != dt:
            raise TypeError(f"{op}: dtypes differ: {dt} and {a.dtype}")
    if dt not in FLOATS:
        raise TypeError(f"{op}: unsupported dtype {dt} (expected float32 or float64)")


def check_rows(op, x):
    if x.ndim == 0:
        raise ValueError(f"{op}: expected at least 1 dimension, got a 0-d array")


def check_same_shape(op, y, g, what="output"):
    if y.shape != g.shape:
        raise ValueError(f"{op}: {what} of shape {y.shape} and gradient of shape "
                         f"{g.shape} differ")


def check_affine(op, x, weight, bias):
    """weight and bias (each None or (D,)) for rows x (N, D)."""
    d = x.shape[1]
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        as_array(p, op, name)
        if p.shape != (d,):
            raise ValueError(f"{op}: {name} of shape {p.shape} does not match rows of {d} "
                             f"features (input of shape {x.shape})")
        check_float(op, x, p)


def check_eps(op, eps):
    try:
        eps = float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: eps must be a number, got {type(eps).__name__}") from None
    if not eps >= 0:
        raise ValueError(f"{op}: eps must be >= 0, got {eps}")
    return eps


def check_p_seed(op, p, seed):
    """(p as a float in [0, 1), seed as an int in [0, 2**64)) for dropout."""
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


def check_matmul_shapes(op, a, b):
    a, b = as_array(a, op, "a"), as_array(b, op, "b")
    if a.ndim < 2 or b.ndim < 2:
        raise ValueError(f"{op}: expected operands with at least 2 dimensions, got shapes "
                         f"{a.shape} and {b.shape}")
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"{op}: cannot multiply {a.shape} by {b.shape}: inner dimensions "
                         f"{a.shape[-1]} and {b.shape[-2]} differ")
    return a, b


def check_matmul_dtypes(op, a, b):
    if a.dtype != b.dtype:
        raise TypeError(f"{op}: dtypes differ: {a.dtype} and {b.dtype}")
    if a.dtype not in FLOATS and a.dtype.kind not in "iub":
        raise TypeError(f"{op}: unsupported dtype {a.dtype} (expected float32, float64 or an "
                        f"integer type)")


def rows(x):
    """A C-contiguous (rows, n) view or copy of x."""
    return np.ascontiguousarray(x).reshape(-1, x.shape[-1])


def flat(x):
    """A C-contiguous 1-D view or copy of x."""
    return np.ascontiguousarray(x).reshape(-1)
