"""Helpers the distributions share, at PyTorch's `torch.distributions.utils` names:
broadcasting parameters, converting between probabilities and logits, and `lazy_property`;
plus `draw`, which takes samples from minigrad's seeded NumPy stream."""
from __future__ import annotations

import numbers

import numpy as np

from minigrad import Tensor, finfo, get_default_dtype, tensor
from minigrad.random import generator

__all__ = ["broadcast_all", "clamp_probs", "draw", "lazy_property", "logits_to_probs",
           "probs_to_logits"]


class lazy_property:
    """A parameter computed from another on first use and then kept (Categorical's probs from
    its logits, or the reverse), as PyTorch's `lazy_property`: until then the instance's
    `__dict__` lacks it, which tells the argument checks which form was given."""

    def __init__(self, compute):
        self.compute = compute
        self.__doc__ = compute.__doc__

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = self.compute(instance)
        instance.__dict__[self.compute.__name__] = value
        return value


def broadcast_all(*values):
    """Tensors of one shape from tensors and numbers (numbers take the tensors' dtype, or the
    default float dtype if all are numbers), as PyTorch's `broadcast_all`."""
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number or Tensor.")
    tensors = [v for v in values if isinstance(v, Tensor)]
    dtype = tensors[0].dtype if tensors else get_default_dtype()
    values = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in values]
    shape = np.broadcast_shapes(*(tuple(v.shape) for v in values))
    return [v if tuple(v.shape) == shape else v.expand(shape) for v in values]


def clamp_probs(probs):
    """probs clamped to [eps, 1 - eps], eps the dtype's."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """log(p) (log(p) - log(1 - p) when is_binary) of probabilities clamped to [eps, 1 - eps],
    so that 0 and 1 give finite logits."""
    from minigrad import log1p
    p = clamp_probs(probs)
    return p.log() - log1p(-p) if is_binary else p.log()


def logits_to_probs(logits, is_binary=False):
    """sigmoid(logits) when is_binary, else the softmax over the last dim."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def draw(method, shape, dtype, *params):
    """Samples of `shape` in `dtype` from minigrad's stream: `method` names a NumPy Generator
    method ("standard_gamma", "poisson", ...) called on the parameters' arrays, broadcast to
    `shape`. Outside autograd."""
    arrays = [np.broadcast_to(p.detach().numpy(), shape) for p in params]
    out = getattr(generator(), method)(*arrays, size=shape) if arrays else \
        getattr(generator(), method)(size=shape)
    return tensor(np.asarray(out).astype(dtype_name(dtype)))


def dtype_name(dtype):
    return str(dtype).replace("minigrad.", "").replace("torch.", "")
