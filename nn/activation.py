"""The activation modules whose functions live in `minigrad.nn.functional` (SiLU, Softplus,
LogSoftmax, ELU, SELU, CELU, Mish, the hard activations, the shrinkages, Threshold, PReLU,
LogSigmoid, GLU, Softsign, Softmin), as torch.nn's: the same constructor arguments, attributes
and printed form. ReLU, GELU, Tanh, Sigmoid, LeakyReLU and Softmax are in `layers.py`."""
from __future__ import annotations

import warnings

import numpy as np

from . import functional as F
from .module import Module, Parameter, factory_dtype


def _inplace_repr(inplace, sep=""):
    return f"{sep}inplace=True" if inplace else ""


class SiLU(Module):
    """x * sigmoid(x), elementwise (any shape)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Mish(Module):
    """x * tanh(softplus(x)), elementwise (any shape)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Softplus(Module):
    """log(1 + exp(beta x)) / beta, linear where beta x > threshold (any shape)."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSoftmax(Module):
    """log(softmax(x)) along `dim` (without a dim, PyTorch's deprecated implicit choice)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class ELU(Module):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (any shape)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val] (any shape); min_value= and max_value= are PyTorch's
    deprecated spellings, accepted with its warning."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and renamed to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and renamed to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        if self.max_val <= self.min_val:
            raise AssertionError(f"Hardtanh: max_val ({self.max_val}) must be greater than "
                                 f"min_val ({self.min_val})")

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" \
               f"{_inplace_repr(self.inplace, ', ')}"


class ReLU6(Hardtanh):
    """min(max(x, 0), 6) (any shape): Hardtanh(0, 6), as in PyTorch."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Hardsigmoid(Module):
    """0 below -3, 1 above 3, x / 6 + 1/2 between (any shape)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Hardswish(Module):
    """x * hardsigmoid(x) (any shape)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class LogSigmoid(Module):
    """log(sigmoid(x)) (any shape)."""

    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    """x / (1 + |x|) (any shape)."""

    def forward(self, input):
        return F.softsign(input)


class GLU(Module):
    """a * sigmoid(b) for the input halved along `dim` into a and b: (*, 2D, *) -> (*, D, *)."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class SELU(Module):
    """scale * elu(x, alpha) with SELU's constants (any shape)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class CELU(Module):
    """x for x > 0, alpha * (exp(x / alpha) - 1) otherwise (any shape)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_inplace_repr(self.inplace, ', ')}"


class Threshold(Module):
    """x where x > threshold, `value` elsewhere (any shape)."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" \
               f"{_inplace_repr(self.inplace, ', ')}"


class Hardshrink(Module):
    """x where |x| > lambd, 0 elsewhere (any shape)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Module):
    """x moved towards 0 by lambd, 0 within lambd of it (any shape)."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self):
        return str(self.lambd)


class Tanhshrink(Module):
    """x - tanh(x) (any shape)."""

    def forward(self, input):
        return F.tanhshrink(input)


class Softmin(Module):
    """softmax(-x) along `dim` (without a dim, PyTorch's deprecated implicit choice)."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """softmax over the channels at every position: (N, C, H, W) or (C, H, W), dim -3."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return F.softmax(input, -3)


class PReLU(Module):
    """x for x > 0, a * x otherwise, with a learned slope `weight` (num_parameters,): one for
    all channels, or one per channel of dim 1 of (N, C, ...); each starts at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "PReLU")
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(np.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        self.weight._array[...] = self.init

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"
