"""Top-level functions that combine tensors (`minigrad.cat`, `minigrad.where`, ...)."""
from __future__ import annotations

import numpy as np

from . import dtypes, ops
from .random import next_seed
from .tensor import Tensor, _as_dtype, _binary, _data


def _promoted_all(tensors, op):
    """The operands in their common dtype (PyTorch's promotion), each one standing for itself
    in the graph."""
    tensors = list(tensors)
    dtype = dtypes.computation_dtype(tensors, op) if tensors else None
    return [_as_dtype(t, dtype) for t in tensors]


def cat(tensors, dim=0):
    """Join tensors along an existing dim: shapes must match except in `dim`."""
    return ops.Cat.apply(*_promoted_all(tensors, "cat"), dim=dim)


concat = cat


def stack(tensors, dim=0):
    """Join equal-shaped tensors along a new dim."""
    return ops.Stack.apply(*_promoted_all(tensors, "stack"), dim=dim)


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
    cond = condition if isinstance(condition, Tensor) else cond  # a tensor's changes are seen
    return ops.Where.apply(cond, *_promoted_all((input, other), "where"))


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
def matmul(a, b):
    return ops.MatMul.apply(*(x if isinstance(x, Tensor) else np.asarray(x) for x in (a, b)))
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
