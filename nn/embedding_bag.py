"""Bags of embeddings: `F.embedding_bag` and the `EmbeddingBag` layer, as in PyTorch. Each bag
is a variable-length group of ids (a row of a (B, N) input, or a run of a flat input cut at
`offsets`), reduced to one (D,) row by summing ("sum", optionally weighted per id by
`per_sample_weights`), averaging ("mean") or taking the largest value per column ("max"),
without building the (B, N, D) tensor of an Embedding followed by a reduction. An id equal
to `padding_idx` is left out of its bag (and of its count), and an empty bag gives zeros.
`max_norm` renormalises the rows the input names in the table first, `scale_grad_by_freq`
divides each id's gradient by its count, as `F.embedding` does.

The rows are looked up with the embedding op and reduced into their bags with `index_add`
(sum, mean) or gathered at each bag's first maximum (max), ops with double-backward and
forward-mode rules.
"""
from __future__ import annotations

import numpy as np

from minigrad import ops
from minigrad.autograd.node_names import as_pytorch_node
from minigrad.creation import zeros
from minigrad.tensor import Tensor

from . import init
from .functional_embedding import embedding_renorm_, norm_options_repr
from .module import Module, Parameter, factory_dtype

__all__ = ["EmbeddingBag", "embedding_bag"]

_MODES = ("sum", "mean", "max")


def _padding_row(padding_idx, num_embeddings, error):
    """padding_idx in [0, V), counted from the end when negative; out of range, PyTorch's
    error: an AssertionError from the layer, a RuntimeError from the function."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise error(f"padding_idx must be within the number of embeddings, {-num_embeddings} "
                    f"through {num_embeddings - 1}, but got {padding_idx}")
    return padding_idx % num_embeddings


def _refuse_sparse(sparse, op):
    if sparse:
        raise NotImplementedError(f"{op}: sparse=True (a sparse gradient) is not supported by "
                                  f"minigrad, whose gradients are dense")


def _bags(ids, offsets, include_last_offset):
    """(the flat ids that fall in a bag, the bag of each, the number of bags) for a (B, N)
    input, or a flat one cut at `offsets`."""
    if ids.ndim == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
        rows, n = ids.shape
        return ids.reshape(-1), np.repeat(np.arange(rows), n), rows
    if ids.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{ids.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    starts = np.asarray(offsets._array if isinstance(offsets, Tensor) else offsets)
    if starts.ndim != 1 or starts.dtype.kind not in "iu":
        raise ValueError(f"offsets has to be a 1D integer Tensor, got shape {starts.shape} and "
                         f"dtype {starts.dtype}")
    if starts.size and starts[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                           f"mini-batch has to start from position 0. However, got {starts[0]}")
    if starts.size and starts[-1] > ids.size:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {ids.size} but "
                           f"got offsets[-1] of {starts[-1]}")
    if np.any(np.diff(starts) < 0):
        raise RuntimeError(f"embedding_bag: offsets must not decrease, got {starts.tolist()}")
    bounds = starts if include_last_offset else np.append(starts, ids.size)
    count = max(len(bounds) - 1, 0)
    if count == 0:
        return ids[:0], np.zeros(0, np.int64), 0
    return ids[:bounds[-1]], np.repeat(np.arange(count), np.diff(bounds)), count


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sums, means or maxima of bags of rows of `weight` (V, D): ids (B, N), one bag per row,
    or flat ids (L,) with `offsets` (B,) where each bag starts (B + 1 with the end of the
    last when `include_last_offset`) -> (B, D). `per_sample_weights` (the input's shape)
    scales each id's row, for mode "sum" only."""
    _refuse_sparse(sparse, "embedding_bag")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    ids = np.asarray(input._array if isinstance(input, Tensor) else input)
    if ids.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {ids.dtype} instead "
                           f"(while checking arguments for embedding_bag)")
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                      f"per_sample_weights is only supported for mode='sum' "
                                      f"(got mode='{mode}').")
        if tuple(per_sample_weights.shape) != ids.shape:
            raise ValueError(f"embedding_bag: If per_sample_weights "
                             f"({tuple(per_sample_weights.shape)}) is not None, then it must "
                             f"have the same shape as the input ({ids.shape})")
    flat, bag, count = _bags(ids, offsets, include_last_offset)
    size = weight.shape[0]
    bad = flat[(flat < 0) | (flat >= size)]
    if bad.size:
        raise RuntimeError(f"embedding_bag: index {bad[0]} is out of range for a table of "
                           f"{size} rows")
    padding_idx = _padding_row(padding_idx, size, RuntimeError)
    if max_norm is not None:  # every id of the input, as PyTorch's
        embedding_renorm_(weight, ids, max_norm, norm_type)
    kept = np.flatnonzero(flat != padding_idx) if padding_idx is not None else np.arange(flat.size)
    bag = bag[kept]
    rows = ops.Embedding.apply(weight, ids=flat[kept], padding_idx=None,  # (L, D)
                               scale_grad_by_freq=bool(scale_grad_by_freq))
    out = zeros(count, weight.shape[1], dtype=weight.dtype)
    if mode == "max":
        return as_pytorch_node(_first_maxima(rows, bag, out), "EmbeddingBagBackward0")
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1)[Tensor._wrap(kept)].unsqueeze(1)
    out = out.index_add(0, Tensor._wrap(bag.astype(np.int64)), rows)
    if mode == "mean":
        counts = np.maximum(np.bincount(bag, minlength=count), 1).astype(weight.dtype)
        out = out / Tensor._wrap(counts[:, None])
    return as_pytorch_node(out, "EmbeddingBagBackward0")  # PyTorch's one node


def _first_maxima(rows, bag, out):
    """Each bag's largest value per column: rows (L, D) of the bags `bag` (L,), nondecreasing,
    into out (B, D) (zeros, which empty bags keep). A tie goes to the bag's first row holding
    the value, as in PyTorch's kernel, so the whole gradient flows there."""
    vals = rows._array
    if not vals.shape[0]:  # no rows: zeros, still a function of the table
        return out.index_add(0, Tensor._wrap(np.zeros(0, np.int64)), rows)
    starts = np.flatnonzero(np.r_[True, bag[1:] != bag[:-1]])
    peak = np.maximum.reduceat(vals, starts, axis=0)  # (bags with rows, D)
    seat = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, bag.size]))
    position = np.where(vals == peak[seat], np.arange(bag.size)[:, None], bag.size)
    first = np.minimum.reduceat(position, starts, axis=0)
    picked = rows.gather(0, Tensor._wrap(first.astype(np.int64)))
    return out.index_add(0, Tensor._wrap(bag[starts].astype(np.int64)), picked)


class EmbeddingBag(Module):
    """A table of `num_embeddings` rows of size `embedding_dim` whose forward reduces bags of
    ids to one row each (see `embedding_bag`): (B, N) or (L,) with offsets -> (B, D)."""

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        _refuse_sparse(sparse, "EmbeddingBag")
        if mode not in _MODES:
            raise ValueError("mode has to be one of sum, mean or max")
        dtype = factory_dtype(device, dtype, "EmbeddingBag")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = _padding_row(padding_idx, num_embeddings, AssertionError)
        if _weight is None:
            self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtype=dtype))
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"EmbeddingBag: shape of weight {tuple(_weight.shape)} does not "
                                 f"match num_embeddings and embedding_dim "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        init.normal_(self.weight)  # N(0, 1), as PyTorch
        if self.padding_idx is not None:
            self.weight._array[self.padding_idx] = 0

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag holding the (V, D) table `embeddings`, frozen unless freeze=False."""
        if embeddings.ndim != 2:
            raise ValueError(f"EmbeddingBag.from_pretrained: embeddings must be 2-dimensional, "
                             f"got shape {tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx, dtype=embeddings.dtype)
        bag.weight.requires_grad = not freeze
        return bag

    def forward(self, input, offsets=None, per_sample_weights=None):
        return embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                             self.scale_grad_by_freq, self.mode, self.sparse,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=self.include_last_offset,
                             padding_idx=self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}" + norm_options_repr(self)
        s += f", mode='{self.mode}'"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")
