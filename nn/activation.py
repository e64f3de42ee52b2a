"""The activation modules whose functions live in `minigrad.nn.functional` (SiLU, Softplus,
LogSoftmax, ELU, Mish, the hard activations, LogSigmoid, GLU, Softsign), as torch.nn's: the
same constructor arguments, attributes and printed form. ReLU, GELU, Tanh, Sigmoid, LeakyReLU
and Softmax are in `layers.py`."""
from __future__ import annotations

import warnings

from . import functional as F
from .module import Module


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
