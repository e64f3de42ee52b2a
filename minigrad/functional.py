"""Top-level functions that combine tensors (`minigrad.cat`, `minigrad.where`, ...)."""
from __future__ import annotations

import numpy as np

from . import ops
from .random import next_seed
from .tensor import Tensor, _binary, _data


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    dtype = like.dtype if like is not None and isinstance(x, (int, float)) else None
    return Tensor._wrap(np.asarray(x, dtype=dtype))


def cat(tensors, dim=0):
    """Join tensors along an existing dim: shapes must match except in `dim`."""
    return ops.Cat.apply(*[_as_tensor(t) for t in tensors], dim=dim)


concat = cat


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim."""
    return ops.Stack.apply(*[_as_tensor(t) for t in tensors], dim=dim)


def where(condition, input, other):
    """Elements of `input` where `condition` is True, else of `other`."""
    cond = np.asarray(_data(condition))
    if cond.dtype != np.bool_:
        raise TypeError(f"where: condition must be a bool tensor, got dtype {cond.dtype}")
    try:
        np.broadcast_shapes(cond.shape, np.shape(_data(input)), np.shape(_data(other)))
    except ValueError:
        raise ValueError(f"where: shapes {cond.shape}, {np.shape(_data(input))} and "
                         f"{np.shape(_data(other))} cannot be broadcast together") from None
    like = input if isinstance(input, Tensor) else other if isinstance(other, Tensor) else None
    return ops.Where.apply(cond, _as_tensor(input, like), _as_tensor(other, like))


def maximum(a, b): return _binary(ops.Maximum, "maximum", a, b)
def minimum(a, b): return _binary(ops.Minimum, "minimum", a, b)
def exp(x): return x.exp()
def log(x): return x.log()
def sqrt(x): return x.sqrt()
def tanh(x): return x.tanh()
def sigmoid(x): return x.sigmoid()
def relu(x): return x.relu()
def abs(x): return x.abs()
def gelu(x, approximate="none"): return x.gelu(approximate)
def clamp(x, min=None, max=None): return x.clamp(min, max)
def matmul(a, b): return _as_tensor(a) @ b
def sum(x, dim=None, keepdim=False): return x.sum(dim, keepdim)
def mean(x, dim=None, keepdim=False): return x.mean(dim, keepdim)
def logsumexp(x, dim=None, keepdim=False): return x.logsumexp(dim, keepdim)
def argmax(x, dim=None, keepdim=False): return x.argmax(dim, keepdim)
def softmax(x, dim=-1): return x.softmax(dim)
def log_softmax(x, dim=-1): return x.log_softmax(dim)
def masked_fill(x, mask, value): return x.masked_fill(mask, value)
def gather(x, dim, index): return x.gather(dim, index)
def index_select(x, dim, index): return x.index_select(dim, index)
def transpose(x, dim0, dim1): return x.transpose(dim0, dim1)
def reshape(x, shape): return x.reshape(shape)
def split(x, split_size, dim=0): return x.split(split_size, dim)
def chunk(x, chunks, dim=0): return x.chunk(chunks, dim)


def dropout(x, p=0.5, training=True, seed=None):
    """Zero elements with probability p and scale the survivors by 1/(1-p) (inverted dropout).

    The mask is a counter-based hash of a seed drawn from `manual_seed`'s generator, so the
    same seed always drops the same elements.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return x
    return ops.Dropout.apply(x, p=p, seed=next_seed() if seed is None else seed)


def one_hot(indices, num_classes=-1):
    """int64 tensor with a 1 at each index along a new last dim (no gradient, as in PyTorch)."""
    idx = np.asarray(_data(indices))
    if not np.issubdtype(idx.dtype, np.integer):
        raise TypeError(f"one_hot: indices must be integers, got dtype {idx.dtype}")
    n = int(idx.max()) + 1 if num_classes == -1 else num_classes
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"one_hot: indices must be in [0, {n}), got values from "
                         f"{idx.min()} to {idx.max()}")
    return Tensor._wrap((idx[..., None] == np.arange(n)).astype(np.int64))
