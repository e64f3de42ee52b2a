"""Other names PyTorch gives to forms of nn.functional's functions.

- The in-place activations `hardtanh_`, `threshold_`, `selu_`, `celu_`, `rrelu_` (and, beside
  their functions in functional.py, `relu_`, `elu_`, `leaky_relu_`): each is its function
  with `inplace=True`, writing into its input (a write autograd records, as any in-place op).
- The pooling functions that always return (output, indices): `max_pool1d_with_indices` ...
  `fractional_max_pool3d_with_indices`, each its function with `return_indices=True`.
"""
from __future__ import annotations

from .adaptive_max_pool import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from .fractional_max_pool import fractional_max_pool2d, fractional_max_pool3d
from . import functional_activation as _act
from .functional_pool import max_pool1d, max_pool2d, max_pool3d
from .randomized_relu import rrelu

__all__ = ["adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "celu_", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d_with_indices", "hardtanh_", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "rrelu_", "selu_",
           "threshold_"]


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return _act.hardtanh(input, min_val, max_val, inplace=True)


def threshold_(input, threshold, value):
    return _act.threshold(input, threshold, value, inplace=True)


def selu_(input):
    return _act.selu(input, inplace=True)


def celu_(input, alpha=1.0):
    return _act.celu(input, alpha, inplace=True)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """rrelu written into `input`; with `generator`, training's slopes are drawn from it."""
    return rrelu(input, lower, upper, training, inplace=True, generator=generator)


def _with_indices(pool):
    def with_indices(input, *args, **kwargs):
        kwargs.pop("return_indices", None)   # (PyTorch's signature has it; the result is a pair)
        return pool(input, *args, return_indices=True, **kwargs)
    with_indices.__name__ = with_indices.__qualname__ = f"{pool.__name__}_with_indices"
    with_indices.__doc__ = f"`{pool.__name__}(..., return_indices=True)`: (output, indices)."
    return with_indices


max_pool1d_with_indices = _with_indices(max_pool1d)
max_pool2d_with_indices = _with_indices(max_pool2d)
max_pool3d_with_indices = _with_indices(max_pool3d)
adaptive_max_pool1d_with_indices = _with_indices(adaptive_max_pool1d)
adaptive_max_pool2d_with_indices = _with_indices(adaptive_max_pool2d)
adaptive_max_pool3d_with_indices = _with_indices(adaptive_max_pool3d)
fractional_max_pool2d_with_indices = _with_indices(fractional_max_pool2d)
fractional_max_pool3d_with_indices = _with_indices(fractional_max_pool3d)
