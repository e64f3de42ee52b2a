"""Multi-head attention (Vaswani et al., 2017, section 3.2.2).

Each head h projects the inputs with its own W_Q, W_K, W_V (E -> E/H each), runs scaled
dot-product attention, and the heads' outputs are concatenated and mixed by W_O:

    head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(d_k) + mask) V W_V^h
    output = concat(head_1, ..., head_H) W_O
"""
from __future__ import annotations

import numpy as np

from minigrad.creation import zeros
from minigrad.functional import cat
from minigrad.random import pytorch_dropout_enabled
from minigrad.tensor import array_of

from . import functional as F
from . import init
from .fast_path import packed_attention
from .layers import NonDynamicallyQuantizableLinear
from .module import Module, Parameter, factory_dtype


class MultiheadAttention(Module):
    """PyTorch's `nn.MultiheadAttention`: same arguments, parameter names, shapes and masks.

    `in_proj_weight` (3E, E) stacks the three projections: rows [0, E) are W_Q, [E, 2E) W_K and
    [2E, 3E) W_V; inside each block, head h owns rows [h*d_k, (h+1)*d_k) with d_k = E / H.
    (With kdim or vdim different from E, they are separate `q_proj_weight`, `k_proj_weight` and
    `v_proj_weight` instead.) `out_proj` is W_O.

    Two options from the second lecture (off by default, so the module stays PyTorch's):
    `relative_positions=k` adds learned embeddings of the clipped distance j - i in [-k, k]
    to the keys and values (Shaw et al., 2018; shared by the heads, `rel_k`/`rel_v` of shape
    (2k + 1, d_k)); `diversity=True` stores ||A A^T - I||_F^2 of each query's heads, averaged,
    as `self.diversity_penalty` after every forward, to add to the loss.

    Masks follow this module's PyTorch convention: in a bool `attn_mask` or `key_padding_mask`,
    True means "may NOT attend"; float masks are added to the scores. A query whose keys are
    all masked gets an output of zeros, never NaN. Inputs are (L, B, E) unless batch_first.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None, relative_positions=0, diversity=False):
        super().__init__()
        dtype = factory_dtype(device, dtype, "MultiheadAttention")
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} is not divisible by "
                             f"num_heads {num_heads}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self._same_dims = self.kdim == embed_dim and self.vdim == embed_dim
        E = embed_dim
        # the form not used is None, as in PyTorch (a program may test which one is there)
        if self._same_dims:
            self.in_proj_weight = Parameter(np.empty((3 * E, E), dtype))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.register_parameter("in_proj_weight", None)
            self.q_proj_weight = Parameter(np.empty((E, E), dtype))
            self.k_proj_weight = Parameter(np.empty((E, self.kdim), dtype))
            self.v_proj_weight = Parameter(np.empty((E, self.vdim), dtype))
        self.in_proj_bias = Parameter(np.zeros(3 * E, dtype)) if bias else None
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias, dtype=dtype)
        # PyTorch's extra keys: a learned key and value (1, 1, E) after the projected ones,
        # and a key and value of zeros after the heads' split
        if add_bias_kv:
            self.bias_k = Parameter(np.empty((1, 1, E), dtype))
            self.bias_v = Parameter(np.empty((1, 1, E), dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        if relative_positions and (add_bias_kv or add_zero_attn):
            raise ValueError("MultiheadAttention: relative_positions has no distance for the "
                             "extra keys of add_bias_kv or add_zero_attn")
        self.relative_positions, self.diversity = relative_positions, diversity
        self.diversity_penalty = None
        if relative_positions:
            n = 2 * relative_positions + 1
            self.rel_k = Parameter(np.empty((n, self.head_dim), dtype))
            self.rel_v = Parameter(np.empty((n, self.head_dim), dtype))
        self._reset_parameters()

    def _reset_parameters(self):
        if self._same_dims:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)
        if self.relative_positions:
            init.xavier_uniform_(self.rel_k)
            init.xavier_uniform_(self.rel_v)

    def _relative_tables(self, L, S):
        """(L, S, d_k) embeddings of the clipped distance j - i; the L queries are the last L
        of the S positions (with a decoding cache, earlier positions are keys only)."""
        i = np.arange(S - L, S)[:, None]
        j = np.arange(S)[None, :]
        idx = np.clip(j - i, -self.relative_positions, self.relative_positions) + self.relative_positions
        return F.embedding(idx, self.rel_k), F.embedding(idx, self.rel_v)

    def _projection(self, i):
        """(weight, bias) of W_Q (i=0), W_K (i=1) or W_V (i=2)."""
        E = self.embed_dim
        w = (self.in_proj_weight[i * E:(i + 1) * E] if self._same_dims else
             (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)[i])
        b = self.in_proj_bias[i * E:(i + 1) * E] if self.in_proj_bias is not None else None
        return w, b

    def _heads(self, x):
        """(B, T, E) -> (B, H, T, d_k)."""
        B, T, _ = x.shape
        return x.reshape(B, T, self.num_heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False, cache=None):
        """Returns (output, weights): output like `query`; weights (B, L, S) averaged over heads,
        or (B, H, L, S) with average_attn_weights=False, or None when need_weights=False.

        `cache` (a dict, for decoding under no_grad) keeps this layer's keys and values between
        calls: with cache["static"] True they are computed once (cross-attention on a fixed
        memory); otherwise each call's new keys and values are appended (self-attention, one
        new position at a time).
        """
        packed = self._packs(query, key, value, need_weights, cache)
        self_attention = query is key
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
            if self_attention:
                key = query
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise ValueError(f"MultiheadAttention: query must be (B, L, {self.embed_dim}) "
                             f"(batch_first={self.batch_first}), got shape {query.shape}")
        if packed and key.ndim == 3 and key.shape[0] == query.shape[0] and key.shape[1]:
            out = self._packed_forward(query, key, attn_mask, key_padding_mask, is_causal,
                                       self_attention)
            if out is not None:
                return (out.transpose(0, 1) if not self.batch_first else out), None
        q = self._heads(F.linear(query, *self._projection(0)))
        if cache is not None and cache.get("static") and "k" in cache:
            k, v = cache["k"], cache["v"]
        else:
            k = self._heads(F.linear(key, *self._projection(1)))
            v = self._heads(F.linear(value, *self._projection(2)))
            if cache is not None:
                if "k" in cache and not cache.get("static"):
                    k, v = cat([cache["k"], k], dim=2), cat([cache["v"], v], dim=2)
                cache["k"], cache["v"] = k, v
        B, _, L, _ = q.shape
        S = k.shape[2]
        allowed, additive = self._masks(attn_mask, key_padding_mask, is_causal, B, L, S)
        k, v, allowed, additive = self._extra_keys(k, v, allowed, additive)
        rel_k = rel_v = None
        if self.relative_positions:
            rel_k, rel_v = self._relative_tables(L, S)
        out, weights = F.attention(q, k, v, allowed, additive, self.dropout, training=self.training,
                                   rel_k=rel_k, rel_v=rel_v)
        if self.diversity:  # each query's (H, S) matrix of head distributions
            from .scores import diversity_penalty
            self.diversity_penalty = diversity_penalty(weights.transpose(1, 2))
        # concat(heads): a view, since F.attention lays its output out like q, whose
        # memory is (B, L, H, d_k) (and the gradients come back the same way)
        out = self.out_proj(out.permute(0, 2, 1, 3).reshape(B, L, self.embed_dim))
        if pytorch_dropout_enabled():
            # PyTorch's output is (L, B, E) in memory whatever batch_first, and a dropout
            # after it draws its mask in memory order: the same layout, the same mask
            out = out.transpose(0, 1).contiguous()
            return self._with_weights(out.transpose(0, 1) if self.batch_first else out,
                                      weights, need_weights, average_attn_weights)
        if not self.batch_first:
            out = out.transpose(0, 1)
        return self._with_weights(out, weights, need_weights, average_attn_weights)

    @staticmethod
    def _with_weights(out, weights, need_weights, average_attn_weights):
        if not need_weights:
            return out, None
        return out, (weights.mean(1) if average_attn_weights else weights)

    def _extra_keys(self, k, v, allowed, additive):
        """k, v (B, H, S, d_k) with add_bias_kv's learned key and value and add_zero_attn's
        zeros appended as keys S, S + 1 (as PyTorch orders them), and the masks padded so
        that every query may attend to them."""
        extra = []
        if self.bias_k is not None:
            B = k.shape[0]
            extra.append((self._heads(self.bias_k.expand(B, 1, self.embed_dim)),
                          self._heads(self.bias_v.expand(B, 1, self.embed_dim))))
        if self.add_zero_attn:
            zero = zeros(*k.shape[:2], 1, self.head_dim, dtype=k.dtype)
            extra.append((zero, zero))
        if not extra:
            return k, v, allowed, additive
        k = cat([k] + [e[0] for e in extra], dim=2)
        v = cat([v] + [e[1] for e in extra], dim=2)
        if allowed is not None:
            allowed = np.concatenate(
                [allowed, np.ones(allowed.shape[:-1] + (len(extra),), bool)], axis=-1)
        if additive is not None:
            additive = np.concatenate(
                [additive, np.zeros(additive.shape[:-1] + (len(extra),), additive.dtype)],
                axis=-1)
        return k, v, allowed, additive

    def _packs(self, query, key, value, need_weights, cache):
        """Whether this call may take the packed training path (`_packed_forward`): in
        training with dropout, as the other fused paths (a model exported in training mode
        without dropout then meets only ops the ONNX exporter knows)."""
        return (self.training and self.dropout > 0 and key is value and not need_weights
                and cache is None and self.bias_k is None and not self.add_zero_attn
                and self._same_dims and not self.relative_positions and not self.diversity)

    def _packed_forward(self, query, key, attn_mask, key_padding_mask, is_causal,
                        self_attention):
        """Training's path, with the output bits of the separate ops (the gradients differ
        by the rounding of the summed input gradient): self-attention makes Q, K and V
        with one product of the whole in_proj_weight, cross-attention K and V with one of its
        last 2E rows, and fast_path.PackedAttention takes the heads from there to their
        concatenation in one op (None when a float mask needs the separate ops)."""
        B, L, _ = query.shape
        allowed, additive = self._masks(attn_mask, key_padding_mask, is_causal, B, L,
                                        key.shape[1])
        if additive is not None:
            return None
        E, w, b = self.embed_dim, self.in_proj_weight, self.in_proj_bias
        if self_attention:
            qkv, kv = F.linear(query, w, b), None
        else:
            qkv = F.linear(query, *self._projection(0))
            kv = F.linear(key, w[E:], None if b is None else b[E:])
        out = self.out_proj(packed_attention(qkv, kv, self.num_heads, allowed, self.dropout,
                                             self.training))
        if pytorch_dropout_enabled():   # PyTorch's output is (L, B, E) in memory (see forward)
            out = out.transpose(0, 1).contiguous().transpose(0, 1)
        return out

    def _masks(self, attn_mask, key_padding_mask, is_causal, B, L, S):
        """Merge the masks into `allowed` (bool, (B or 1, H or 1, L, S)) and `additive` (float).

        np.asanyarray keeps an array subclass, so an ONNX export traces these NumPy steps."""
        allowed = additive = None
        if attn_mask is not None:
            m = np.asanyarray(array_of(attn_mask))
            if m.shape == (B * self.num_heads, L, S):
                m = m.reshape(B, self.num_heads, L, S)
            elif m.shape != (L, S):
                raise ValueError(f"MultiheadAttention: attn_mask must have shape {(L, S)} or "
                                 f"{(B * self.num_heads, L, S)}, got {m.shape}")
            if m.dtype == np.bool_:
                allowed = ~m
            else:
                additive = m.astype(np.float32 if m.dtype != np.float64 else m.dtype)
        elif is_causal:
            allowed = np.tril(np.ones((L, S), dtype=bool), S - L)
        if key_padding_mask is not None:
            kp = np.asanyarray(array_of(key_padding_mask))
            if kp.shape != (B, S):
                raise ValueError(f"MultiheadAttention: key_padding_mask must have shape "
                                 f"{(B, S)} (batch, keys), got {kp.shape}")
            kp = kp[:, None, None, :]
            if kp.dtype == np.bool_:
                allowed = ~kp if allowed is None else allowed & ~kp
            else:
                additive = kp if additive is None else additive + kp
        return allowed, additive
