"""Entry points of the activation functions: GELU (both of PyTorch's forms), SiLU, sigmoid,
tanh and ReLU, forward and backward, on arrays of any shape.

Each checks its inputs (.checks: float32 or float64; a gradient of the array's shape), then
runs the NumPy reference ("numpy" backend) or the Numba kernel of .activation on the flat
array, its serial twin below PARALLEL_MIN_WORK (.policy). The result has the input's shape,
in C order. GELU and SiLU differentiate from their input x; sigmoid, tanh and ReLU from their
output y, which is what their ops keep.

An activation of a few elements (a 4 x 4 tanh) costs its bookkeeping, not its arithmetic, so
the path of a C-contiguous array of a float dtype is kept short: one type test, one
allocation, one kernel call. The reference is no shortcut for small arrays: NumPy's tanh and
exp round differently from .mathfn's, and the value of an element must not depend on the
size of its array.
"""
import numpy as np

from . import activation as _act
from . import policy
from . import reference as _ref
from .checks import FLOATS, as_array, check_float, check_same_shape

APPROXIMATIONS = ("none", "tanh")


def _contiguous(op, a, g, what):
    """(a, g) checked (g None for a forward) and C-contiguous."""
    if not (type(a) is np.ndarray and a.dtype in FLOATS and a.flags.c_contiguous
            and (g is None or (type(g) is np.ndarray and g.shape == a.shape
                               and g.dtype == a.dtype and g.flags.c_contiguous))):
        a = as_array(a, op, what)
        if g is None:
            check_float(op, a)
        else:
            g = as_array(g, op, "grad")
            check_same_shape(op, a, g, what)
            check_float(op, a, g)
            g = np.ascontiguousarray(g)
        a = np.ascontiguousarray(a)
    return a, g


def _kernel(kernels, size):
    # (the size test first: below it, pick's thread-count query is not needed)
    return kernels[1] if size < policy.PARALLEL_MIN_WORK else policy.pick(kernels, size)


def _run(op, kernels, reference, a, g, what):
    """kernels[0 or 1](a, g, out) on flat views (or the reference on the arrays), out of a's
    shape; for a forward (g None) the kernel reads a twice."""
    a, g = _contiguous(op, a, g, what)
    if policy.numpy_backend():
        return np.asarray(reference(a) if g is None else reference(a, g), a.dtype)
    out = np.empty_like(a)   # C order, as a
    af = a.ravel()           # (views, as a and g are C-contiguous)
    _kernel(kernels, a.size)(af, af if g is None else g.ravel(), out.ravel())
    return out


def _check_approximate(op, approximate):
    if approximate not in APPROXIMATIONS:
        raise ValueError(f"{op}: approximate must be 'none' or 'tanh', got {approximate!r}")
    return "gelu_tanh" if approximate == "tanh" else "gelu"


def _pair(name, saved):
    """The forward and backward entry points of activation `name` (.activation.KERNELS and
    the references of the same names); the backward reads `saved`, "input" or "output"."""
    forward_kernels, backward_kernels = _act.KERNELS[name]
    reference, reference_backward = getattr(_ref, name), getattr(_ref, name + "_backward")

    def forward(x):
        return _run(name, forward_kernels, reference, x, None, "x")

    def backward(a, grad):
        return _run(name + "_backward", backward_kernels, reference_backward, a, grad, saved)
    forward.__name__ = forward.__qualname__ = name
    backward.__name__ = backward.__qualname__ = name + "_backward"
    return forward, backward


silu, silu_backward = _pair("silu", "input")
sigmoid, sigmoid_backward = _pair("sigmoid", "output")
tanh, tanh_backward = _pair("tanh", "output")
relu, relu_backward = _pair("relu", "output")
silu.__doc__ = "x * sigmoid(x)."
silu_backward.__doc__ = "grad * (s + x s (1 - s)), s = sigmoid(x): silu_backward(x, grad)."
sigmoid.__doc__ = "1 / (1 + exp(-x))."
sigmoid_backward.__doc__ = "grad * y * (1 - y), y = sigmoid(x): sigmoid_backward(y, grad)."
tanh.__doc__ = "tanh(x)."
tanh_backward.__doc__ = "grad * (1 - y^2), y = tanh(x): tanh_backward(y, grad)."
relu.__doc__ = "max(x, 0); NaN stays NaN."
relu_backward.__doc__ = ("0 where y = relu(x) is <= 0, else grad (NaN passes it, as in "
                         "PyTorch): relu_backward(y, grad).")
_GELU = {name: _act.KERNELS[name] for name in ("gelu", "gelu_tanh")}


def silu_with_sigmoid(x):
    """(silu(x), sigmoid(x)): the output and the sigmoid, which the forward computes anyway
    and silu_backward_from_sigmoid reads instead of computing it again (an exp and a division
    per element); the output's values are silu's."""
    x, _ = _contiguous("silu", x, None, "x")
    if policy.numpy_backend():
        s = np.asarray(_ref.sigmoid(x), x.dtype)
        return np.asarray(x * s, x.dtype), s
    y, s = np.empty_like(x), np.empty_like(x)
    _kernel(_act.SILU_SIGMOID, x.size)(x.ravel(), y.ravel(), s.ravel())
    return y, s


def silu_backward_from_sigmoid(x, s, grad):
    """grad * s (1 + x (1 - s)) with s = sigmoid(x) (silu_with_sigmoid's): silu_backward's
    values."""
    op = "silu_backward"
    x, grad = _contiguous(op, x, grad, "input")
    s, _ = _contiguous(op, s, None, "sigmoid")
    if s.size != x.size:
        raise ValueError(f"{op}: input of shape {x.shape} and sigmoid of shape {s.shape} differ")
    s = s.reshape(x.shape)   # a 0-d x comes back from the contiguity check as (1,)
    check_float(op, x, s)
    if policy.numpy_backend():
        return np.asarray(_ref.silu_backward_from_sigmoid(x, s, grad), x.dtype)
    dx = np.empty_like(x)
    _kernel(_act.SILU_BACKWARD_SIGMOID, x.size)(x.ravel(), s.ravel(), grad.ravel(), dx.ravel())
    return dx


def gelu(x, approximate="none"):
    """x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)), or with approximate="tanh"
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), as torch.nn.functional.gelu."""
    name = _check_approximate("gelu", approximate)
    return _run("gelu", _GELU[name][0], lambda x: _ref.gelu(x, approximate), x, None, "x")


def gelu_backward(x, grad, approximate="none"):
    """grad * d gelu(x) / dx."""
    name = _check_approximate("gelu_backward", approximate)
    return _run("gelu_backward", _GELU[name][1],
                lambda x, g: _ref.gelu_backward(x, g, approximate), x, grad, "input")
