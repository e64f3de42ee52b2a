"""A complete translation model: embeddings, positions, the Transformer, the output layer.

    src ids (B, S) -> embed * sqrt(d_model) + positions -> encoder -> memory (B, S, D)
    tgt ids (B, T) -> embed * sqrt(d_model) + positions -> decoder(memory) -> Linear -> logits (B, T, V)

The embeddings are multiplied by sqrt(d_model) (section 3.4 of the paper) so that they are not
drowned by the positional encoding, whose entries lie in [-1, 1].
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.tensor import array_of
from minigrad.nn import Embedding, Linear, Module, PositionalEncoding, Transformer, init
from minigrad.nn.fast_path import embed_positions


def _if_padded(pad):
    """A key padding mask (B, S), or None where it masks nothing: attention then skips the
    mask's passes (the same numbers). A traced array (an ONNX export) keeps its mask, so the
    exported graph masks whatever padding it is given later."""
    return None if type(pad) is np.ndarray and not pad.any() else pad


class Seq2SeqTransformer(Module):
    """Token ids in, next-token logits out; padding masks come from `pad_id`."""

    def __init__(self, src_vocab, tgt_vocab, d_model=128, nhead=4, num_encoder_layers=2,
                 num_decoder_layers=2, dim_feedforward=512, dropout=0.1, max_len=256, pad_id=0,
                 share_embeddings=False, tie_output=False, output_bias=True, norm_first=False,
                 activation="relu", relative_positions=0):
        super().__init__()
        if share_embeddings and src_vocab != tgt_vocab:
            raise ValueError(f"Seq2SeqTransformer: share_embeddings needs one vocabulary, got "
                             f"{src_vocab} source and {tgt_vocab} target tokens")
        self.config = dict(src_vocab=src_vocab, tgt_vocab=tgt_vocab, d_model=d_model,
                           nhead=nhead, num_encoder_layers=num_encoder_layers,
                           num_decoder_layers=num_decoder_layers,
                           dim_feedforward=dim_feedforward, dropout=dropout, max_len=max_len,
                           pad_id=pad_id, share_embeddings=share_embeddings,
                           tie_output=tie_output, output_bias=output_bias,
                           norm_first=norm_first, activation=activation,
                           relative_positions=relative_positions)
        self.d_model, self.pad_id = d_model, pad_id
        self.src_embed = Embedding(src_vocab, d_model, padding_idx=pad_id)
        self.tgt_embed = self.src_embed if share_embeddings else Embedding(tgt_vocab, d_model, padding_idx=pad_id)
        self.pos = PositionalEncoding(d_model, max_len=max_len, dropout=dropout)
        self.transformer = Transformer(d_model, nhead, num_encoder_layers, num_decoder_layers,
                                       dim_feedforward, dropout, activation=activation,
                                       batch_first=True, norm_first=norm_first,
                                       relative_positions=relative_positions)
        self.generator = Linear(d_model, tgt_vocab, bias=output_bias)
        # Xavier on every matrix, as the Annotated Transformer does: N(0, 1) embeddings times
        # sqrt(d_model) would start the model far from where it trains well
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        if share_embeddings or tie_output:
            # Xavier over a large vocabulary makes a shared matrix tiny (std sqrt(2 / (V + D))),
            # so the token signal, times sqrt(d_model), drowns under the positional encoding and
            # the model learns to ignore its source. fairseq's N(0, 1/d_model) gives embeddings
            # of unit size after the sqrt(d_model) scale, and logits of unit size too when tied.
            init.normal_(self.tgt_embed.weight, std=d_model ** -0.5)
        for emb in (self.src_embed, self.tgt_embed):
            emb.weight._array[pad_id] = 0
        if tie_output:  # one matrix both embeds target tokens and scores them (section 3.4)
            self.generator.weight = self.tgt_embed.weight

    def _embed(self, embedding, ids, offset=0):
        # pos(embedding(ids) * sqrt(d_model)), one fused op when training (the same numbers)
        return embed_positions(embedding, self.pos, ids, math.sqrt(self.d_model), offset)

    def encode(self, src):
        """src ids (B, S) -> (memory (B, S, D), source padding mask (B, S), True at padding)."""
        src = np.asanyarray(array_of(src))  # any array: an ONNX export's traced ids stay traced
        pad = src == self.pad_id
        memory = self.transformer.encoder(self._embed(self.src_embed, src),
                                          src_key_padding_mask=_if_padded(pad))
        return memory, pad

    def decode(self, tgt_in, memory, src_pad, cache=None, offset=0, return_attention=False):
        """Decoder hidden states (B, T, D) for target ids (B, T) given the memory.

        With a `cache` dict, `tgt_in` holds only the new positions, starting at `offset`."""
        tgt_in = np.asanyarray(array_of(tgt_in))
        tgt_pad = (tgt_in == self.pad_id) if cache is None else None
        if tgt_pad is not None and not tgt_pad.any():
            tgt_pad = None  # no padding: skip building a mask nobody needs
        return self.transformer.decoder(self._embed(self.tgt_embed, tgt_in, offset), memory,
                                        tgt_key_padding_mask=tgt_pad,
                                        memory_key_padding_mask=_if_padded(src_pad),
                                        tgt_is_causal=True, cache=cache,
                                        return_attention=return_attention)

    def forward(self, src, tgt_in):
        """Teacher forcing: logits (B, T, V) for every next token of `tgt_in` (B, T)."""
        memory, src_pad = self.encode(src)
        return self.generator(self.decode(tgt_in, memory, src_pad))

    def loss(self, src, tgt_in, tgt_out, label_smoothing=0.0):
        """Mean label-smoothed cross entropy over the non-padding target tokens."""
        from minigrad.nn import functional as F
        logits = self(src, tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               np.asarray(array_of(tgt_out)).reshape(-1),
                               ignore_index=self.pad_id, label_smoothing=label_smoothing)
