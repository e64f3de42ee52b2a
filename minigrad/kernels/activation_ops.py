"""Entry points of the activation functions: GELU (both of PyTorch's forms), SiLU, sigmoid,
tanh and ReLU, forward and backward, on arrays of any shape.

Each checks its inputs (.checks: float32 or float64; a gradient of the array's shape), then
runs the NumPy reference ("numpy" backend) or the Numba kernel of .activation on the flat
array, its serial twin below PARALLEL_MIN_WORK (.policy). The result has the input's shape,
in C order. GELU and SiLU differentiate from their input x; sigmoid, tanh and ReLU from their
output y, which is what their ops keep.
"""
import numpy as np

from . import activation as _act
from . import policy
from . import reference as _ref
from .checks import as_array, check_float, check_same_shape, flat

APPROXIMATIONS = ("none", "tanh")


def _unary(op, kernels, ref, x):
    x = as_array(x, op, "x")
    check_float(op, x)
    if policy.numpy_backend():
        return np.asarray(ref(x), x.dtype)
    y = np.empty(x.shape, x.dtype)
    policy.pick(kernels, x.size)(flat(x), y.reshape(-1))
    return y


def _gradient(op, kernels, ref, a, grad, what):
    """dx from the saved array `a` (the input or the output, `what`) and the gradient."""
    a, grad = as_array(a, op, what), as_array(grad, op, "grad")
    check_same_shape(op, a, grad, what)
    check_float(op, a, grad)
    if policy.numpy_backend():
        return np.asarray(ref(a, grad), a.dtype)
    dx = np.empty(a.shape, a.dtype)
    policy.pick(kernels, a.size)(flat(a), flat(grad), dx.reshape(-1))
    return dx


def _check_approximate(op, approximate):
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"{op}: approximate must be 'none' or 'tanh', got {approximate!r}")
    return approximate == "tanh"


def gelu(x, approximate="none"):
    """x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as torch.nn.functional.gelu."""
    if _check_approximate("gelu", approximate):
        return _unary("gelu", (_act.gelu_tanh_forward, _act.gelu_tanh_forward_serial),
                      lambda x: _ref.gelu(x, "tanh"), x)
    return _unary("gelu", (_act.gelu_forward, _act.gelu_forward_serial), _ref.gelu, x)


def gelu_backward(x, grad, approximate="none"):
    """grad * d gelu(x) / dx."""
    if _check_approximate("gelu_backward", approximate):
        return _gradient("gelu_backward",
                         (_act.gelu_tanh_backward, _act.gelu_tanh_backward_serial),
                         lambda x, g: _ref.gelu_backward(x, g, "tanh"), x, grad, "input")
    return _gradient("gelu_backward", (_act.gelu_backward, _act.gelu_backward_serial),
                     _ref.gelu_backward, x, grad, "input")


def silu(x):
    """x * sigmoid(x)."""
    return _unary("silu", (_act.silu_forward, _act.silu_forward_serial), _ref.silu, x)


def silu_backward(x, grad):
    """grad * (s + x s (1 - s)), s = sigmoid(x)."""
    return _gradient("silu_backward", (_act.silu_backward, _act.silu_backward_serial),
                     _ref.silu_backward, x, grad, "input")


def sigmoid(x):
    """1 / (1 + exp(-x))."""
    return _unary("sigmoid", (_act.sigmoid_forward, _act.sigmoid_forward_serial),
                  _ref.sigmoid, x)


def sigmoid_backward(y, grad):
    """grad * y * (1 - y), with y = sigmoid(x)."""
    return _gradient("sigmoid_backward", (_act.sigmoid_backward, _act.sigmoid_backward_serial),
                     _ref.sigmoid_backward, y, grad, "output")


def tanh(x):
    """tanh(x)."""
    return _unary("tanh", (_act.tanh_forward, _act.tanh_forward_serial), _ref.tanh, x)


def tanh_backward(y, grad):
    """grad * (1 - y^2), with y = tanh(x)."""
    return _gradient("tanh_backward", (_act.tanh_backward, _act.tanh_backward_serial),
                     _ref.tanh_backward, y, grad, "output")


def relu(x):
    """max(x, 0); NaN stays NaN."""
    return _unary("relu", (_act.relu_forward, _act.relu_forward_serial), _ref.relu, x)


def relu_backward(y, grad):
    """0 where y = relu(x) is <= 0, else grad (NaN passes it, as in PyTorch)."""
    return _gradient("relu_backward", (_act.relu_backward, _act.relu_backward_serial),
                     _ref.relu_backward, y, grad, "output")
