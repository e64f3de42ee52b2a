"""Entry points of dropout and the ops fused with it element by element: dropout itself, its
mask, ReLU + dropout, and the pre-norm residual connection x + dropout(s).

The mask is a hash of (seed, flat C-order index) (.dropout_kernels says how), so the same seed gives
the same mask on both backends, for any number of threads, and the backward pass regenerates
it instead of storing it. Each function checks its inputs (.checks), then runs the NumPy
reference ("numpy" backend) or the Numba kernel, serial below PARALLEL_MIN_WORK (.policy).
"""
import numpy as np

from . import driver as _driver
from . import dropout_kernels as _dp
from . import policy
from . import reference as _ref
from .checks import FLOATS, as_array, check_float, check_p_seed, check_same_shape, flat, rows


# (threshold, scale) by (p, dtype): a model's dropouts ask again and again for the same few,
# and working them out (a NumPy integer and a scalar of the dtype) was a sixth of the fixed
# cost of a mask; the key changes with every seed
_constants = {}
_CONSTANTS_MAX = 256   # pairs kept; past this (p varying without end) start over


def mask_args(p, seed, dtype):
    """The kernels' (key, threshold, scale) of the mask for p and seed, already checked
    (.checks's check_p_seed), and the dtype of the data it scales."""
    c = _constants.get((p, dtype))
    if c is None:
        if len(_constants) >= _CONSTANTS_MAX:
            _constants.clear()
        c = _constants[p, dtype] = (np.uint64(_ref.dropout_threshold(p)),
                                    dtype.type(1.0 / (1.0 - p)))
    return (np.uint64(_ref.dropout_key(seed)), *c)


def _run(kind, a, b, out, key=np.uint64(0), threshold=np.uint64(0), scale=None):
    """Element-wise op `kind` of .dropout_kernels on flat arrays, the parallel kernel or its
    serial twin by out's size."""
    scale = out.dtype.type(1) if scale is None else scale
    _driver.elementwise(policy.parallel(out.size), kind, a, b, out, key, threshold, scale)


def _elementwise_dropout(op, x, p, seed, reference, kind):
    """The checks and the call shared by dropout and the ops fused with it element by element:
    `reference(x, p, seed)` on the "numpy" backend, else the kernel of op `kind`, which maps
    flat x to flat out with the mask's key, threshold and scale."""
    x = as_array(x, op, "x")
    p, seed = check_p_seed(op, p, seed)
    check_float(op, x)
    if policy.numpy_backend():
        return reference(x, p, seed)
    out = np.empty(x.shape, x.dtype)
    xf = flat(x)
    _run(kind, xf, xf, out.reshape(-1), *mask_args(p, seed, x.dtype))
    return out


def dropout(x, p, seed):
    """x * keep / (1 - p), keep decided by a hash of (seed, flat C-order index).

    The same seed gives the same mask, so dropout(grad, p, seed) is the
    backward pass of dropout(x, p, seed).
    """
    return _elementwise_dropout("dropout", x, p, seed, _ref.dropout, _dp.DROPOUT)


def dropout_mask(shape, p, seed, dtype=np.float32):
    """The mask dropout(x, p, seed) multiplies by: 0 or 1/(1-p), of `dtype`."""
    p, seed = check_p_seed("dropout_mask", p, seed)
    dtype = np.dtype(dtype)
    if dtype not in FLOATS:
        raise TypeError(f"dropout_mask: unsupported dtype {dtype} (expected float32 or float64)")
    # (an int first: np.ndim's Python wrapper cost more than the rest of a small mask)
    shape = ((shape,) if type(shape) is int else (int(shape),) if np.ndim(shape) == 0
             else tuple(int(n) for n in shape))
    if policy.numpy_backend():
        return _ref.dropout_mask(shape, p, seed, dtype)
    out = np.empty(shape, dtype)
    of = out.reshape(-1)
    _run(_dp.MASK, of, of, of, *mask_args(p, seed, dtype))
    return out


def dropout_add(x, s, p, seed):
    """x + dropout(s, p, seed) in one pass, x and s of one shape: the pre-norm residual
    connection. Bit for bit the numbers of the dropout kernel followed by an add."""
    op = "dropout_add"
    x, s = as_array(x, op, "x"), as_array(s, op, "s")
    if s.shape != x.shape:
        raise ValueError(f"{op}: x of shape {x.shape} and s of shape {s.shape} differ")
    p, seed = check_p_seed(op, p, seed)
    check_float(op, x, s)
    if policy.numpy_backend() or x.ndim == 0:
        return np.asarray(_ref.dropout_add(x, s, p, seed))
    out = np.empty(x.shape, x.dtype)
    if x.size:
        policy.pick((_dp.dropout_add_2d, _dp.dropout_add_2d_serial), x.size)(
            rows(x), rows(s), out.reshape(-1, x.shape[-1]), *mask_args(p, seed, x.dtype))
    return out


def relu_dropout(x, p, seed):
    """dropout(max(x, 0), p, seed) in one pass: the same numbers, the same mask."""
    return _elementwise_dropout("relu_dropout", x, p, seed, _ref.relu_dropout,
                                _dp.RELU_DROPOUT)


def relu_dropout_backward(y, grad, p):
    """dx = grad / (1 - p) where y = relu_dropout(x, p, seed) is > 0, else 0 (no mask needed)."""
    op = "relu_dropout_backward"
    y, grad = as_array(y, op, "y"), as_array(grad, op, "grad")
    check_same_shape(op, y, grad)
    check_float(op, y, grad)
    p, _ = check_p_seed(op, p, 0)
    if policy.numpy_backend():
        return _ref.relu_dropout_backward(y, grad, p)
    dx = np.empty(y.shape, y.dtype)
    _run(_dp.RELU_DROPOUT_BACKWARD, flat(y), flat(grad), dx.reshape(-1),
         scale=y.dtype.type(1.0 / (1.0 - p)))
    return dx
