"""The encoder-decoder Transformer of "Attention Is All You Need", built from `minigrad.nn`.

Each encoder layer is self-attention then a position-wise feed-forward network; each decoder
layer is masked self-attention, cross-attention over the encoder's output (the "memory"), then
the feed-forward network. Every sublayer is wrapped in a residual connection and layer norm:
    post-norm (the paper, the default):  x = LayerNorm(x + Sublayer(x))
    pre-norm (norm_first=True):          x = x + Sublayer(LayerNorm(x))
Constructor arguments, forward arguments and state-dict keys are those of `torch.nn.Transformer`.

When training, a residual connection, LayerNorm(x + Dropout(Sublayer(x))) post-norm or
x + Dropout(Sublayer(LayerNorm(x))) pre-norm, and the feed-forward network's Dropout(ReLU(.))
each run as one fused op (as PyTorch has a fast path
too): the same numbers and the same dropout seeds as the separate modules, fewer passes over
memory. A hook on one of those modules turns its fusion off, so that the hook sees it run.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

from minigrad.grad_mode import is_grad_enabled
from minigrad.tensor import Tensor

from . import functional as F
from .fast_path import activation_dropout, add_norm, add_residual
from .attention import MultiheadAttention
from .container import ModuleList
from .layers import Dropout, Linear
from .module import Module
from .normalization import LayerNorm


def _activation(name):
    if callable(name):
        return name
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise ValueError(f"Transformer: activation must be 'relu', 'gelu' or a callable, got {name!r}")


class _TransformerLayer(Module):
    """What the encoder and decoder layers share: their constructor (PyTorch's arguments; the
    decoder adds cross-attention and a third norm and dropout), self-attention and the
    feed-forward network."""

    _cross_attention = False

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation="relu",
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True, device=None,
                 dtype=None, relative_positions=0):
        super().__init__()
        fk = dict(bias=bias, device=device, dtype=dtype)  # PyTorch's factory kwargs
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, batch_first=batch_first,
                                            relative_positions=relative_positions, **fk)
        if self._cross_attention:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                     batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, **fk)
        sublayers = 3 if self._cross_attention else 2  # each with a norm and a dropout
        for i in range(1, sublayers + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, **fk))
        for i in range(1, sublayers + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.norm_first = norm_first
        self.activation = _activation(activation)

    def _sa(self, x, mask, key_padding_mask, is_causal, cache=None):
        out, _ = self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal, cache=cache)
        return out

    def _ff(self, x):
        """The position-wise feed-forward network: max(0, x W1 + b1) W2 + b2."""
        return self.linear2(activation_dropout(self, self.linear1(x)))


class TransformerEncoderLayer(_TransformerLayer):
    """Self-attention and a feed-forward network, each with a residual connection and norm."""

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """src (B, S, D) if batch_first else (S, B, D); returns the same shape."""
        x = src
        if self.norm_first:
            x = add_residual(self.dropout1, x,
                             self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal))
            return add_residual(self.dropout2, x, self._ff(self.norm2(x)))
        x = add_norm(self.norm1, self.dropout1, x,
                     self._sa(x, src_mask, src_key_padding_mask, is_causal))
        return add_norm(self.norm2, self.dropout2, x, self._ff(x))


class TransformerDecoderLayer(_TransformerLayer):
    """Masked self-attention, cross-attention over the memory, and a feed-forward network."""

    _cross_attention = True

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False,
                cache=None, return_attention=False):
        """tgt (B, T, D), memory (B, S, D) when batch_first. With `return_attention`, returns
        (output, cross-attention weights (B, H, T, S)). `cache` is a dict this layer fills with
        its keys and values, so decoding can feed one new position at a time."""
        sa_cache = ca_cache = None
        if cache is not None:
            sa_cache = cache.setdefault("self", {})
            ca_cache = cache.setdefault("cross", {"static": True})
        x = tgt
        if self.norm_first:
            x = add_residual(self.dropout1, x, self._sa(self.norm1(x), tgt_mask,
                                                        tgt_key_padding_mask, tgt_is_causal,
                                                        sa_cache))
            ca, weights = self._mha(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, ca_cache, return_attention)
            x = add_residual(self.dropout2, x, ca)
            x = add_residual(self.dropout3, x, self._ff(self.norm3(x)))
        else:
            x = add_norm(self.norm1, self.dropout1, x,
                         self._sa(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal, sa_cache))
            ca, weights = self._mha(x, memory, memory_mask, memory_key_padding_mask,
                                    ca_cache, return_attention)
            x = add_norm(self.norm2, self.dropout2, x, ca)
            x = add_norm(self.norm3, self.dropout3, x, self._ff(x))
        return (x, weights) if return_attention else x

    def _mha(self, x, mem, mask, key_padding_mask, cache, need_weights):
        return self.multihead_attn(x, mem, mem, attn_mask=mask,
                                   key_padding_mask=key_padding_mask,
                                   need_weights=need_weights, cache=cache,
                                   average_attn_weights=False)


def _stack(module, layer, num_layers, norm):
    """Give an encoder or decoder stack its `num_layers` independent copies of `layer`."""
    module.layers = ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])
    module.num_layers = num_layers
    module.norm = norm


class TransformerEncoder(Module):
    """A stack of `num_layers` copies of an encoder layer, optionally ending with a norm.

    `enable_nested_tensor` and `mask_check` are PyTorch's switches for its inference fast path,
    which packs a padded batch into a nested tensor (`mask_check`: after checking that every
    row's padding is at its end). minigrad has no nested tensors, but the path changes values
    at one place: the padded positions of the stack's output come back as zeros (before the
    final norm). So when PyTorch would take the path (`use_nested_tensor`, eval mode, a
    (B, S, D) input with a padding mask and no attention mask, no gradient being recorded),
    minigrad zeroes those positions too, and with a layer that rules the path out it gives
    PyTorch's warning.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        _stack(self, encoder_layer, num_layers, norm)
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why_not = _why_no_nested_tensor(encoder_layer)
        if enable_nested_tensor and why_not:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why_not}", stacklevel=2)
            self.use_nested_tensor = False

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                      is_causal=bool(is_causal))
        if self._nested_path(src, mask, src_key_padding_mask):
            keep = ~_padding(src_key_padding_mask)  # (B, S): the path needs batch_first
            x = x * Tensor._wrap(keep[..., None].astype(x._array.dtype))
        return self.norm(x) if self.norm is not None else x

    def _nested_path(self, src, mask, key_padding_mask):
        """Whether PyTorch's forward would run this batch as a nested tensor."""
        from minigrad.onnx import is_in_onnx_export
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.ndim != 3
                or key_padding_mask is None or mask is not None):
            return False
        if is_in_onnx_export():  # the choice depends on the mask's values: an exported graph
            return False         # must hold for every padding, so it keeps the plain path
        if self.mask_check:
            pad = _padding(key_padding_mask)
            if (np.diff(pad.astype(np.int8), axis=1) < 0).any():  # padding before a token
                return False
        return not (is_grad_enabled() and any(p.requires_grad for p in first.parameters()))


def _padding(key_padding_mask):
    """A key padding mask as booleans, True where padded (a float mask marks them with -inf)."""
    m = np.asarray(key_padding_mask._array if isinstance(key_padding_mask, Tensor)
                   else key_padding_mask)
    return m if m.dtype == np.bool_ else np.isneginf(m)


def _why_no_nested_tensor(layer):
    """PyTorch's reason (same words) why a stack of `layer` cannot use nested tensors, or ''."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return (f"{name}.self_attn.batch_first was not True"
                "(use batch_first for better inference performance)")
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if layer.activation not in (F.relu, F.gelu):
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""


class TransformerDecoder(Module):
    """A stack of `num_layers` copies of a decoder layer, optionally ending with a norm."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        _stack(self, decoder_layer, num_layers, norm)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False,
                cache=None, return_attention=False):
        """With `return_attention`, returns (output, [cross-attention (B, H, T, S) per layer])."""
        x, attns = tgt, []
        for i, layer in enumerate(self.layers):
            out = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=bool(tgt_is_causal),
                        cache=None if cache is None else cache.setdefault(i, {}),
                        return_attention=return_attention)
            x, w = out if return_attention else (out, None)
            attns.append(w)
        x = self.norm(x) if self.norm is not None else x
        return (x, attns) if return_attention else x


class Transformer(Module):
    """`torch.nn.Transformer`: an encoder and a decoder stack, each ending with a layer norm."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation="relu", custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None, relative_positions=0):
        """`relative_positions=k` (not in PyTorch) gives every self-attention learned relative
        position embeddings for distances clipped to [-k, k] (Shaw et al., 2018)."""
        super().__init__()
        kw = dict(dim_feedforward=dim_feedforward, dropout=dropout, activation=activation,
                  layer_norm_eps=layer_norm_eps, batch_first=batch_first, norm_first=norm_first,
                  relative_positions=relative_positions, bias=bias, device=device, dtype=dtype)
        fk = dict(bias=bias, device=device, dtype=dtype)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **kw), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, **fk))
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **kw), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, **fk))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        self._reset_parameters()

    def _reset_parameters(self):
        """Xavier-uniform every matrix, as PyTorch's Transformer does after building (the
        same draws, in parameter order)."""
        from . import init
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """src (B, S, D) and tgt (B, T, D) when batch_first (else (S, B, D), (T, B, D))."""
        b = 0 if self.batch_first else 1
        if src.shape[b] != tgt.shape[b]:
            raise ValueError(f"Transformer: src of shape {src.shape} and tgt of shape "
                             f"{tgt.shape} have different batch sizes")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise ValueError(f"Transformer: src and tgt must have d_model={self.d_model} "
                             f"features, got {src.shape} and {tgt.shape}")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, dtype=np.float32):
        """(sz, sz) float mask: 0 on and below the diagonal, -inf above (future positions)."""
        return Tensor._wrap(np.triu(np.full((sz, sz), -np.inf, dtype=dtype), k=1))
