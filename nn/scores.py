"""Attention scores as modules, `attend`, and the multi-head diversity regulariser.

An attention model turns a query s and keys h_1..h_S into weights that sum to one, then
averages values with them (the lecture's "attention formula"):

    e_i = a(s, h_i)                  similarity of the query to key i
    alpha = softmax(e)               weights over the keys (masked keys get exactly 0)
    c = sum_i alpha_i v_i            the context vector, a convex combination of the values

The lecture's similarity functions a(s, h), from no parameters to a small network:

    DotScore        s^T h                      (needs dim s == dim h)
    ScaledDotScore  s^T h / sqrt(d)            keeps the softmax from saturating as d grows
    BilinearScore   s^T W h                    Luong's "general" score, W trainable
    AdditiveScore   v^T tanh(W s + U h)        Bahdanau's: a one-hidden-layer network

Every score module maps a query s (B, Dq) or (B, L, Dq) and keys h (B, S, Dk) to scores
(B, S) or (B, L, S). A decoder asks for scores against the same keys at every step, so the
part that depends only on the keys (W h for bilinear, U h for additive) is split out:
`prepare_keys(h)` runs once per source sequence and `score(s, prepared)` once per step;
`forward(s, h)` does both.

Multi-head attention can make all its heads look at the same place. Lin et al. (2017)
penalise that with ||A A^T - I||_F^2, where row j of A is head j's weight distribution: the
off-diagonal terms push different heads' distributions apart (non-negative vectors with zero
dot product have disjoint supports) and the diagonal terms push each ||alpha_j||^2 to 1, i.e.
each head to focus on a single key. See `diversity_penalty`.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.tensor import Tensor, array_of

from .layers import Linear
from .module import Module, Parameter
from . import init


def _as_queries(s):
    """(B, Dq) -> (B, 1, Dq) plus a flag to squeeze the answer back; (B, L, Dq) unchanged."""
    if s.ndim == 2:
        return s.unsqueeze(1), True
    if s.ndim != 3:
        raise ValueError(f"attention score: the query must be (B, Dq) or (B, L, Dq), got "
                         f"shape {s.shape}")
    return s, False


class _Score(Module):
    """Base: forward(s, h) = score(s, prepare_keys(h)); subclasses define both halves."""

    def prepare_keys(self, h):
        """The keys' share of the work, once per key sequence: h (B, S, Dk) -> (B, S, *)."""
        if h.ndim != 3:
            raise ValueError(f"{type(self).__name__}: keys must be (B, S, Dk), got shape {h.shape}")
        return h

    def score(self, s, keys):
        """Queries s (B, Dq) or (B, L, Dq) against prepared keys -> (B, S) or (B, L, S)."""
        q, squeeze = _as_queries(s)
        e = self._score3(q, keys)
        return e[:, 0] if squeeze else e

    def _score3(self, q, keys):  # q (B, L, D), keys (B, S, D) -> (B, L, S)
        if q.shape[-1] != keys.shape[-1]:
            raise ValueError(f"{type(self).__name__}: query dim {q.shape[-1]} differs from key "
                             f"dim {keys.shape[-1]}")
        return q @ keys.transpose(-2, -1)

    def forward(self, s, h):
        return self.score(s, self.prepare_keys(h))


class DotScore(_Score):
    """e_i = s^T h_i."""


class ScaledDotScore(_Score):
    """e_i = s^T h_i / sqrt(d)."""

    def _score3(self, q, keys):
        return super()._score3(q * (1.0 / math.sqrt(q.shape[-1])), keys)  # scale the smaller side


class BilinearScore(_Score):
    """e_i = s^T W h_i with W (Dq, Dk) trainable (Luong's "general" score)."""

    def __init__(self, query_dim, key_dim, dtype=np.float32):
        super().__init__()
        # W h_i is a Linear(Dk -> Dq) without bias, whose weight (Dq, Dk) is exactly W
        self.W = Linear(key_dim, query_dim, bias=False, dtype=dtype)

    def prepare_keys(self, h):
        return self.W(super().prepare_keys(h))


class AdditiveScore(_Score):
    """e_i = v^T tanh(W s + U h_i + b) (Bahdanau); W (A, Dq), U (A, Dk), v (A,)."""

    def __init__(self, query_dim, key_dim, attn_dim=None, dtype=np.float32):
        super().__init__()
        attn_dim = attn_dim or key_dim
        self.W = Linear(query_dim, attn_dim, bias=False, dtype=dtype)
        self.U = Linear(key_dim, attn_dim, bias=True, dtype=dtype)
        self.v = Parameter(np.empty(attn_dim, dtype))
        bound = 1.0 / math.sqrt(attn_dim)
        init.uniform_(self.v, -bound, bound)

    def prepare_keys(self, h):
        return self.U(super().prepare_keys(h))

    def _score3(self, q, keys):
        # (B, L, 1, A) + (B, 1, S, A): every query meets every key inside the tanh
        hidden = (self.W(q).unsqueeze(2) + keys.unsqueeze(1)).tanh()
        return (hidden * self.v).sum(-1)


SCORES = {"dot": DotScore, "scaled_dot": ScaledDotScore, "bilinear": BilinearScore,
          "additive": AdditiveScore}


def make_score(name, query_dim, key_dim, dtype=np.float32):
    """A score module by name ("dot", "scaled_dot", "bilinear", "additive")."""
    if name not in SCORES:
        raise ValueError(f"make_score: unknown score {name!r}; choose one of {sorted(SCORES)}")
    if name in ("dot", "scaled_dot"):
        if query_dim != key_dim:
            raise ValueError(f"make_score: a {name} score needs query_dim == key_dim, got "
                             f"{query_dim} and {key_dim}")
        return SCORES[name]()
    return SCORES[name](query_dim, key_dim, dtype=dtype)


def attend(scores, values, mask=None):
    """Softmax the scores over the keys and average the values: returns (context, weights).

    scores (B, S) or (B, L, S); values (B, S, Dv); mask bool (B, S) (or broadcastable to the
    scores), True at keys that may be attended. -> context (B, Dv) or (B, L, Dv), weights
    like scores. A row whose keys are all masked gets weights and context of zeros, not NaN.
    """
    if values.ndim != 3 or values.shape[1] != scores.shape[-1]:
        raise ValueError(f"attend: values must be (B, S, Dv) with S = {scores.shape[-1]} keys, "
                         f"got shape {values.shape}")
    if mask is not None:
        keep = np.asarray(array_of(mask), dtype=bool)
        if scores.ndim == 3 and keep.ndim == 2:
            keep = keep[:, None, :]  # the same key mask for every query
        scores = scores.masked_fill(~keep, float("-inf"))
    weights = scores.softmax(-1)  # an all -inf row softmaxes to zeros in minigrad
    if scores.ndim == 2:
        return (weights.unsqueeze(1) @ values)[:, 0], weights
    return weights @ values, weights


def diversity_penalty(A):
    """||A A^T - I||_F^2 for attention weights A (H, S) or (..., H, S); a scalar Tensor.

    Row j of A is head j's distribution over S keys. Leading dims (batch, or batch and query
    position) are averaged over. For `MultiheadAttention` weights (B, H, L, S), pass
    `weights.transpose(1, 2)` so each query position's heads form one (H, S) matrix.
    """
    if A.ndim < 2:
        raise ValueError(f"diversity_penalty: A must be (H, S) or (..., H, S), got shape {A.shape}")
    eye = Tensor._wrap(np.eye(A.shape[-2], dtype=A.dtype))
    gram = A @ A.transpose(-2, -1)  # (..., H, H): dot products of the heads' distributions
    per_matrix = ((gram - eye) ** 2).sum((-2, -1))
    return per_matrix.mean() if per_matrix.ndim else per_matrix
