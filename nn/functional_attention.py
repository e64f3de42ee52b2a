"""Attention as a function: `scaled_dot_product_attention` and the core every attention
layer calls (`attention`, which also takes relative-position tables); re-exported by
`minigrad.nn.functional`.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import ops
from minigrad.errors import ShapeError
from minigrad.functional import dropout as _core_dropout
from minigrad.random import next_seed as _next_seed
from minigrad.random import pytorch_dropout_enabled as _pytorch_dropout
from minigrad.tensor import array_of as _array_of


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, training=True):
    """softmax(Q K^T * scale + mask) V with Q (..., L, E), K (..., S, E), V (..., S, Ev).

    PyTorch's SDPA convention: a bool `attn_mask` is True where attention is ALLOWED; a float
    mask is added to the scores. A query whose keys are all masked gets zeros, never NaN.
    With `enable_gqa=True`, Q (B, Hq, L, E) may have more heads than K and V (B, Hkv, S, *):
    each group of Hq // Hkv query heads shares one key and value head (grouped-query
    attention).
    """
    if enable_gqa:
        key, value = _share_heads(query, key, value)
    out, _ = attention(query, key, value, allowed=_allowed(attn_mask, is_causal, query, key),
                       additive=attn_mask if _is_float(attn_mask) else None,
                       dropout_p=dropout_p, scale=scale, training=training)
    return out


def _share_heads(query, key, value):
    """K and V with each head repeated for its group of query heads (dim -3), as PyTorch."""
    if query.ndim < 3 or key.ndim < 3 or value.ndim < 3:
        raise ValueError(f"scaled_dot_product_attention: enable_gqa needs a heads dim (-3) in "
                         f"query, key and value, got shapes {query.shape}, {key.shape}, "
                         f"{value.shape}")
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hq % hk or hq % hv:
        raise ValueError(f"scaled_dot_product_attention: with enable_gqa the number of heads "
                         f"(dim -3) of key and value must divide the query's: query "
                         f"{query.shape}, key {key.shape}, value {value.shape}")
    return (key if hk == hq else key.repeat_interleave(hq // hk, dim=-3),
            value if hv == hq else value.repeat_interleave(hq // hv, dim=-3))


def _is_float(mask):
    return mask is not None and np.issubdtype(np.asarray(_array_of(mask)).dtype, np.floating)


def _allowed(attn_mask, is_causal, query, key):
    allowed = None
    if attn_mask is not None and not _is_float(attn_mask):
        allowed = np.asanyarray(_array_of(attn_mask)).astype(bool, copy=False)  # traceable
    if is_causal:
        causal = np.tril(np.ones((query.shape[-2], key.shape[-2]), dtype=bool))
        allowed = causal if allowed is None else allowed & causal
    return allowed


def attention(q, k, v, allowed=None, additive=None, dropout_p=0.0, scale=None, training=True,
              rel_k=None, rel_v=None):
    """The core of every attention layer; returns (output, weights).

    q (..., L, E), k (..., S, E), v (..., S, Ev); `allowed` a bool array broadcastable to
    (..., L, S), True where a query may look at a key; `additive` a float mask added to scores.
    `rel_k` (L, S, E) and `rel_v` (L, S, Ev) are relative-position embeddings (Shaw et al.,
    2018) added to key j and value j when query i looks at them.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ShapeError(f"attention: queries of shape {q.shape} and keys of shape {k.shape} "
                         f"differ in their last dim")
    if k.shape[-2] != v.shape[-2]:
        raise ShapeError(f"attention: {k.shape[-2]} keys but {v.shape[-2]} values "
                         f"(shapes {k.shape} and {v.shape})")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    q = q * scale  # scaling q is cheaper than scaling the L x S scores
    scores = q @ k.transpose(-2, -1)
    if rel_k is not None:  # q_i . a_ij for every (i, j): one batched product per query i
        scores = scores + _per_query(q, rel_k.transpose(-2, -1))
    if additive is not None:  # cast, so a float64 mask does not promote float32 scores
        scores = scores + np.asanyarray(_array_of(additive)).astype(scores.dtype, copy=False)
    # masked_fill(~allowed, -inf), softmax(-1) and dropout as one op: the same numbers and
    # the same seed, one pass each way instead of three
    p = dropout_p if training else 0.0
    if not 0.0 <= p < 1.0:
        raise ValueError(f"attention: dropout_p must be in [0, 1), got {p}")
    torch_mask = p > 0.0 and _pytorch_dropout()  # PyTorch's mask: dropout after softmax
    weights = ops.MaskedSoftmaxDropout.apply(
        scores, allowed=None if allowed is None else np.asarray(allowed, dtype=bool),
        p=0.0 if torch_mask else p, seed=_next_seed() if p > 0.0 and not torch_mask else 0)
    if torch_mask:
        weights = _core_dropout(weights, p)
    # the output in the queries' memory order: for heads split from (B, L, E) that is
    # (B, L, H, d_k) memory, so merging the heads back into (B, L, E) is a view, not a copy
    out = ops.MatMul.apply(weights, v, like=_array_of(q))
    if rel_v is not None:
        out = out + _per_query(weights, rel_v)
    return out, weights


def _per_query(x, table):
    """x (..., L, A) times table (L, A, C) separately for every position i: (..., L, C)."""
    lead = x.shape[:-2]
    L, A = x.shape[-2:]
    xi = x.reshape(-1, L, A).permute(1, 0, 2)  # (L, N, A): query position i leads
    out = xi @ table  # (L, N, C)
    return out.permute(1, 0, 2).reshape(lead + (L, table.shape[-1]))
