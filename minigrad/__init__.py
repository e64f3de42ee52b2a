"""minigrad: a small, readable deep-learning framework with reverse-mode autograd.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad   # tensor([2., 4.])
"""
from . import autograd, kernels, random
from ._malloc import tune_malloc  # opt-in allocator setting for training loops (see _malloc.py)
from .autograd import detect_anomaly, enable_grad, is_grad_enabled, no_grad
from .creation import (arange, bool_, eye, float16, float32, float64, full, int32, int64, long,
                       ones, ones_like, rand, randint, randn, randperm, tensor, zeros, zeros_like)
from .functional import (abs, argmax, cat, chunk, clamp, concat, dropout, exp, gather, gelu,
                         index_select, log, log_softmax, logsumexp, masked_fill, matmul, maximum,
                         mean, minimum, one_hot, relu, reshape, sigmoid, softmax, split, sqrt,
                         stack, sum, tanh, transpose, where)
from .kernels import get_backend, set_backend
from .random import manual_seed
from .tensor import Tensor

__version__ = "0.1.0"

# The layers above the core, reachable as attributes the way `torch.optim` is after `import torch`.
# They are imported on first use, so the core never imports the layers built on it.
_LAZY_SUBMODULES = ("nn", "optim", "models", "translate", "demos", "viz", "serialization")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'minigrad' has no attribute {name!r}")


def save(obj, path):
    """Write nested dicts/lists of tensors, arrays, numbers and strings to `path` (no pickle)."""
    from .serialization import save as _save
    return _save(obj, path)


def load(path):
    """Read what `save` wrote."""
    from .serialization import load as _load
    return _load(path)
