"""Entry points of the row ops: softmax, log-softmax and layer norm along the last axis,
forward and backward.

Each checks its inputs (.checks), then runs the NumPy reference on the "numpy" backend or the
Numba kernel of .softmax_kernels or .layernorm (layer norm's run by .driver_blocks' kernel), its serial twin
below PARALLEL_MIN_WORK (.policy).
"""
import numpy as np

from . import driver as _driver
from . import policy
from . import reference as _ref
from . import softmax_kernels as _sm
from .checks import (FLOATS, as_array, check_affine, check_eps, check_float, check_rows,
                     check_same_shape, rows)


def _fine(x):
    """Whether x needs none of the checks' conversions and fails none of them: a float32 or
    float64 ndarray of at least 1 dimension (the common case, told in three tests)."""
    return type(x) is np.ndarray and x.dtype in FLOATS and x.ndim > 0


def _rows_of(x, out):
    """(x's rows C-contiguous, out's rows) as (rows, n) arrays: for a 2-D x, x (copied only if
    not C-contiguous) and out themselves, no views; else .checks.rows(x) and a view of out."""
    if x.ndim == 2:
        return np.ascontiguousarray(x), out
    return rows(x), out.reshape(-1, x.shape[-1])


def _forward(op, kernels, ref, x):
    if not _fine(x):   # the checks, in their order, where one may fail
        x = as_array(x, op, "x")
        check_rows(op, x)
        check_float(op, x)
    if policy.numpy_backend():
        return ref(x)
    y = np.empty(x.shape, x.dtype)
    if x.size:
        (kernels[0] if policy.parallel(x.size) else kernels[1])(*_rows_of(x, y))
    return y


def _backward(op, kernels, ref, y, grad):
    if not (_fine(y) and type(grad) is np.ndarray and grad.dtype is y.dtype
            and grad.shape == y.shape):   # the checks, in their order, where one may fail
        y, grad = as_array(y, op, "y"), as_array(grad, op, "grad")
        check_rows(op, y)
        check_same_shape(op, y, grad)
        check_float(op, y, grad)
    if policy.numpy_backend():
        return ref(y, grad)
    dx = np.empty(y.shape, y.dtype)
    if y.size:
        yr, out = _rows_of(y, dx)
        (kernels[0] if policy.parallel(y.size) else kernels[1])(
            yr, np.ascontiguousarray(grad) if y.ndim == 2 else rows(grad), out)
    return dx


def softmax(x):
    """exp(x - max) / sum(exp(x - max)) along the last axis."""
    return _forward("softmax", (_sm.softmax_2d, _sm.softmax_2d_serial), _ref.softmax, x)


def softmax_backward(y, grad):
    """dx = y * (grad - sum(grad * y, -1)), with y = softmax(x)."""
    return _backward("softmax_backward",
                     (_sm.softmax_backward_2d, _sm.softmax_backward_2d_serial),
                     _ref.softmax_backward, y, grad)


def log_softmax(x):
    """x - logsumexp(x) along the last axis."""
    return _forward("log_softmax", (_sm.log_softmax_2d, _sm.log_softmax_2d_serial),
                    _ref.log_softmax, x)


def log_softmax_backward(y, grad):
    """dx = grad - exp(y) * sum(grad, -1), with y = log_softmax(x)."""
    return _backward("log_softmax_backward",
                     (_sm.log_softmax_backward_2d, _sm.log_softmax_backward_2d_serial),
                     _ref.log_softmax_backward, y, grad)


def _affine_fine(x, p):
    """Whether weight or bias p fails none of check_affine's checks for rows x, told cheaply."""
    return p is None or (type(p) is np.ndarray and p.dtype is x.dtype
                         and p.shape == x.shape[1:])


def layer_norm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias along the rows of x (N, D), biased var.

    Returns (y, x_hat, rstd): the output (N, D), the normalised input (N, D) and
    1 / sqrt(var + eps) (N, 1), the two a backward pass needs. weight, bias: (D,) or None.
    """
    if not (type(x) is np.ndarray and x.ndim == 2 and x.dtype in FLOATS
            and _affine_fine(x, weight) and _affine_fine(x, bias)
            and type(eps) is float and eps >= 0):   # the checks, where one may fail
        x = as_array(x, "layer_norm", "x")
        if x.ndim != 2:
            raise ValueError(f"layer_norm: expected rows of shape (N, D), got shape {x.shape}")
        check_float("layer_norm", x)
        check_affine("layer_norm", x, weight, bias)
        eps = check_eps("layer_norm", eps)
    if policy.numpy_backend() or x.size == 0:
        return _ref.layer_norm(x, weight, bias, eps)
    return _driver.layer_norm_numba(x, weight, bias, eps, parallel=policy.parallel(x.size))


def layer_norm_backward(grad, xhat, rstd, weight):
    """(dx, dweight, dbias) from the output gradient (N, D) and layer_norm's x_hat and rstd."""
    if not (type(xhat) is np.ndarray and xhat.ndim == 2 and xhat.dtype in FLOATS
            and type(grad) is np.ndarray and grad.dtype is xhat.dtype
            and grad.shape == xhat.shape and type(rstd) is np.ndarray
            and rstd.dtype is xhat.dtype and rstd.shape == (xhat.shape[0], 1)
            and _affine_fine(xhat, weight)):   # the checks, in their order, where one may fail
        grad, xhat, rstd = _check_layer_norm_backward(grad, xhat, rstd, weight)
    if policy.numpy_backend() or xhat.size == 0:
        return _ref.layer_norm_backward(grad, xhat, rstd, weight)
    return _driver.layer_norm_backward_numba(grad, xhat, rstd, weight,
                                             parallel=policy.parallel(xhat.size))


def _check_layer_norm_backward(grad, xhat, rstd, weight):
    """layer_norm_backward's checks, in their order; returns (grad, xhat, rstd) as arrays."""
    op = "layer_norm_backward"
    grad, xhat = as_array(grad, op, "grad"), as_array(xhat, op, "xhat")
    rstd = as_array(rstd, op, "rstd")
    if xhat.ndim != 2:
        raise ValueError(f"{op}: expected rows of shape (N, D), got x_hat of shape {xhat.shape}")
    check_same_shape(op, xhat, grad, "x_hat")
    if rstd.shape != (xhat.shape[0], 1):
        raise ValueError(f"{op}: rstd of shape {rstd.shape} does not match x_hat of shape "
                         f"{xhat.shape} (expected ({xhat.shape[0]}, 1))")
    check_float(op, xhat, grad, rstd)
    check_affine(op, xhat, weight, None)
    return grad, xhat, rstd
