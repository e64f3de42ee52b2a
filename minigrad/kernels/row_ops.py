"""Entry points of the row ops: softmax, log-softmax and layer norm along the last axis,
forward and backward.

Each checks its inputs (.checks), then runs the NumPy reference on the "numpy" backend or the
Numba kernel of .softmax_kernels or .layernorm (layer norm's run by .driver), its serial twin
below PARALLEL_MIN_WORK (.policy).
"""
import numpy as np

from . import driver as _driver
from . import policy
from . import reference as _ref
from . import softmax_kernels as _sm
from .checks import (as_array, check_affine, check_eps, check_float, check_rows,
                     check_same_shape, rows)


def _forward(op, kernels, ref, x):
    x = as_array(x, op, "x")
    check_rows(op, x)
    check_float(op, x)
    if policy.numpy_backend():
        return ref(x)
    y = np.empty(x.shape, x.dtype)
    if x.size:
        policy.pick(kernels, x.size)(rows(x), y.reshape(-1, x.shape[-1]))
    return y


def _backward(op, kernels, ref, y, grad):
    y, grad = as_array(y, op, "y"), as_array(grad, op, "grad")
    check_rows(op, y)
    check_same_shape(op, y, grad)
    check_float(op, y, grad)
    if policy.numpy_backend():
        return ref(y, grad)
    dx = np.empty(y.shape, y.dtype)
    if y.size:
        policy.pick(kernels, y.size)(rows(y), rows(grad), dx.reshape(-1, y.shape[-1]))
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


def layer_norm(x, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias along the rows of x (N, D), biased var.

    Returns (y, x_hat, rstd): the output (N, D), the normalised input (N, D) and
    1 / sqrt(var + eps) (N, 1), the two a backward pass needs. weight, bias: (D,) or None.
    """
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
    if policy.numpy_backend() or xhat.size == 0:
        return _ref.layer_norm_backward(grad, xhat, rstd, weight)
    return _driver.layer_norm_backward_numba(grad, xhat, rstd, weight,
                                         parallel=policy.parallel(xhat.size))
