"""minigrad: a small, readable deep-learning framework with reverse-mode autograd.

    import minigrad as mg
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    x.grad   # tensor([2., 4.])
"""
from . import autograd, kernels, random
from ._malloc import tune_malloc  # opt-in allocator setting for training loops (see _malloc.py)
from .autograd import detect_anomaly, enable_grad, is_grad_enabled, no_grad
from .dtypes import get_default_dtype, promote_types, result_type, set_default_dtype
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
    """Write nested dicts/lists of tensors, arrays, numbers and strings to `path` (no pickle);
    a path ending in .safetensors gets a flat {name: tensor} dict in the safetensors format."""
    from .serialization import save as _save
    return _save(obj, path)


def load(path, map_location=None, weights_only=True):
    """Read what `save` wrote, or a .safetensors file (from PyTorch too); map_location may only
    name the CPU, and weights_only is accepted for PyTorch's sake (nothing is ever unpickled)."""
    from .serialization import load as _load
    return _load(path, map_location=map_location)


# --- PyTorch's names beyond the core above (issue 12) ------------------------------------------
from . import amp, backends, cuda  # noqa: E402
from .creation import (as_tensor, empty, empty_like, from_numpy, full_like, linspace,  # noqa: E402
                       logspace, rand_like, randint_like, randn_like)
from .device import device  # noqa: E402
from .dtypes import (bfloat16, cdouble, cfloat, chalf, complex32,  # noqa: E402
                     complex64, complex128, double, finfo, float8_e4m3fn, float8_e5m2, half,
                     iinfo, int8, int16, short, uint8, uint16, uint32, uint64)
from .dtypes import bool_ as bool, float32 as float, int32 as int  # noqa: E402,A001
from .functional import (add, all, allclose, amax, amin, any, argmin,  # noqa: E402,A001
                         argsort, bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or,
                         bitwise_right_shift, bitwise_xor, bmm, broadcast_to, ceil, clamp_max, clamp_min, clip, cos,
                         cumsum, div, dot, einsum, equal, flatten, flip, floor, floor_divide,
                         index_add, index_fill, is_floating_point, is_tensor, isclose, isfinite,
                         isinf, isnan, logical_and, logical_not, logical_or, logical_xor,
                         masked_select, max, min, mm, movedim, mul, narrow, neg, nonzero, norm,
                         numel, outer, permute, pow, reciprocal, remainder, repeat_interleave,
                         roll, round, rsqrt, scatter, scatter_add, select, sign, sin, sort,
                         square, squeeze, std, sub, t, topk, tril, triu, trunc, unbind, unique,
                         unsqueeze, var)
from .grad_mode import inference_mode, set_grad_enabled  # noqa: E402
from .random import Generator, default_generator, initial_seed, seed  # noqa: E402
from .random import get_rng_state, set_rng_state  # noqa: E402
from .sampling import bernoulli, multinomial, normal  # noqa: E402
from .tensortypes import (BoolTensor, ByteTensor, CharTensor, DoubleTensor,  # noqa: E402
                          FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor)
