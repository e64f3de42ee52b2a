"""`embedding` of `torch.nn.functional` and the renormalisation its `max_norm` asks for.

With `max_norm`, every row the ids look up whose `norm_type`-norm exceeds it is scaled down to
that norm in the table itself, in place and outside autograd, before the lookup (PyTorch's
`embedding_renorm_`); `EmbeddingBag` shares it. `scale_grad_by_freq` divides each id's
gradient by the number of times the id occurs in the batch (the op's backward does).
"""
from __future__ import annotations

import numpy as np

from minigrad import ops
from minigrad.autograd.versions import bump_version
from minigrad.tensor import Tensor

__all__ = ["embedding", "embedding_renorm_", "norm_options_repr", "padding_row"]


def padding_row(padding_idx, num_embeddings, op):
    """padding_idx in [0, V), counted from the end when negative; PyTorch asserts the range,
    so out of it this raises an AssertionError (naming the op and the numbers)."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"Padding_idx must be within num_embeddings ({op}: padding_idx "
                             f"{padding_idx}, num_embeddings {num_embeddings})")
    return padding_idx % num_embeddings


def norm_options_repr(layer):
    """The part of an Embedding's or EmbeddingBag's repr that names its max_norm, norm_type
    and scale_grad_by_freq where they are not the defaults, as PyTorch's."""
    s = f", max_norm={layer.max_norm}" if layer.max_norm is not None else ""
    s += f", norm_type={layer.norm_type}" if layer.norm_type != 2 else ""
    if layer.scale_grad_by_freq is not False:
        s += f", scale_grad_by_freq={layer.scale_grad_by_freq}"
    return s


def embedding_renorm_(weight, ids, max_norm, norm_type=2.0):
    """Scale each row of weight (V, D) that `ids` name and whose norm exceeds max_norm by
    max_norm / (norm + 1e-7), in place and without recording it (PyTorch's
    torch.embedding_renorm_ under no_grad); the weight's version moves on, so a backward that
    saved the old rows raises. Returns weight."""
    rows = np.unique(np.asarray(ids._array if isinstance(ids, Tensor) else ids))
    if rows.dtype.kind not in "iu":
        raise TypeError(f"embedding_renorm_: ids must be integers, got dtype {rows.dtype}")
    if rows.size and (rows[0] < 0 or rows[-1] >= weight.shape[0]):
        bad = rows[0] if rows[0] < 0 else rows[-1]
        raise IndexError(f"embedding_renorm_: id {bad} is out of range for a table of "
                         f"{weight.shape[0]} rows")
    table = weight._array
    norms = np.linalg.norm(table[rows], ord=float(norm_type), axis=1).astype(np.float64)
    big = norms > max_norm
    if big.any():
        # the scale in double, applied in the table's dtype, as PyTorch's row *= scale
        scale = (max_norm / (norms[big] + 1e-7)).astype(table.dtype)
        table[rows[big]] *= scale[:, None]
        bump_version(weight)
    return weight


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` (V, D) for integer ids of any shape (B, T) -> (B, T, D); with
    max_norm, the rows looked up are first renormalised in the table (see
    `embedding_renorm_`); scale_grad_by_freq divides each id's gradient by its count in
    `input`. sparse=True (a sparse gradient) is refused: minigrad's gradients are dense."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient) is not supported "
                                  "by minigrad, whose gradients are dense")
    padding_idx = padding_row(padding_idx, weight.shape[0], "embedding")
    if max_norm is not None:
        embedding_renorm_(weight, input, max_norm, norm_type)
    return ops.Embedding.apply(weight, ids=input, padding_idx=padding_idx,
                               scale_grad_by_freq=bool(scale_grad_by_freq))
