"""A recurrent encoder-decoder (seq2seq), with a single context vector or with attention.

Encoder: a (bidirectional) GRU reads the source embeddings and keeps every state:

    h_1..h_S = GRU_enc(x_1..x_S)                               memory (B, S, H)
    c = [forward state after x_S ; backward state after x_1]   the whole source in one vector

Decoder: a GRU over the target prefix (teacher forcing: the true previous token is fed in),
started from s_0 = tanh(W_b c). At step t, with decoder state s_t:

* no attention (Cho et al., 2014; the lecture's bottleneck): every step sees the same c,
  fed in with the previous token and again before the output layer:

      s_t = GRU_dec([y_{t-1} ; c], s_{t-1}),   c_t = c

* attention (Luong et al., 2015, "global" attention with any score of `minigrad.nn.scores`):
  the query s_t looks at all encoder states, so long sources are no longer squeezed into c:

      s_t = GRU_dec(y_{t-1}, s_{t-1})
      alpha_t = softmax_i(score(s_t, h_i)) over real (non-padding) source tokens
      c_t = sum_i alpha_{t,i} h_i

  then, in both cases, logits_t = W_o tanh(W_c [s_t ; c_t]).

Because s_t does not depend on c_t here (no "input feeding"), teacher forcing runs the decoder
GRU over the whole target in one call and attends for all T queries in one batched op; the
keys' share of the score (U h, W h) is computed once per source sentence.

Padding: the encoder skips padded source steps (`mask`), attention gives them weight 0 and the
loss ignores padded targets, so the padding tokens never influence anything.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minigrad.autograd import no_grad
from minigrad.functional import cat
from minigrad.nn import Dropout, Embedding, Linear, Module
from minigrad.nn import functional as F
from minigrad.nn.rnn import GRU
from minigrad.nn.scores import SCORES, attend, make_score
from minigrad.tensor import Tensor, array_of


@dataclass
class Encoded:
    """What the decoder needs from the source: memory (B, S, H), c (B, H), mask (B, S) True at
    real tokens, keys (prepared once for the score, or None), s0 (1, B, H)."""
    memory: Tensor
    context: Tensor
    mask: np.ndarray
    keys: Tensor | None
    s0: Tensor


class Seq2SeqRNN(Module):
    """GRU encoder-decoder; `attention` None (one context vector) or a score name."""

    def __init__(self, src_vocab, tgt_vocab, emb_dim=64, hidden=128, attention=None, pad_id=0,
                 dropout=0.0, bidirectional_encoder=True):
        super().__init__()
        if attention is not None and attention not in SCORES:
            raise ValueError(f"Seq2SeqRNN: attention must be None or one of {sorted(SCORES)}, "
                             f"got {attention!r}")
        dirs = 2 if bidirectional_encoder else 1
        if hidden % dirs:
            raise ValueError(f"Seq2SeqRNN: hidden={hidden} must be even for a bidirectional "
                             f"encoder (each direction gets hidden / 2)")
        self.config = dict(src_vocab=src_vocab, tgt_vocab=tgt_vocab, emb_dim=emb_dim,
                           hidden=hidden, attention=attention, pad_id=pad_id, dropout=dropout,
                           bidirectional_encoder=bidirectional_encoder)
        self.pad_id, self.hidden, self.attention = pad_id, hidden, attention
        self.src_embed = Embedding(src_vocab, emb_dim, padding_idx=pad_id)
        self.tgt_embed = Embedding(tgt_vocab, emb_dim, padding_idx=pad_id)
        # each direction gets hidden / dirs units, so encoder states and decoder states are
        # both H wide and even the parameter-free dot scores can compare them
        self.encoder = GRU(emb_dim, hidden // dirs, batch_first=True,
                           bidirectional=bidirectional_encoder)
        self.bridge = Linear(hidden, hidden)
        self.decoder = GRU(emb_dim + (hidden if attention is None else 0), hidden,
                           batch_first=True)
        self.score = make_score(attention, hidden, hidden) if attention is not None else None
        self.combine = Linear(2 * hidden, hidden)
        self.drop = Dropout(dropout)
        self.generator = Linear(hidden, tgt_vocab)

    def encode(self, src):
        """src ids (B, S) -> `Encoded` (memory, context vector, mask, prepared keys, s_0)."""
        src = np.asarray(array_of(src))
        if src.ndim != 2:
            raise ValueError(f"Seq2SeqRNN: src must be token ids (B, S), got shape {src.shape}")
        mask = src != self.pad_id
        memory, h_n = self.encoder(self.drop(self.src_embed(src)), mask=mask)
        # h_n (dirs, B, H/dirs): the forward state after the last real token, and the
        # backward state after the first, together summarise the whole sentence
        context = cat(list(h_n), dim=-1) if h_n.shape[0] > 1 else h_n[0]
        keys = self.score.prepare_keys(memory) if self.score is not None else None
        s0 = self.bridge(context).tanh().unsqueeze(0)
        return Encoded(memory, context, mask, keys, s0)

    def decode(self, tgt_in, enc, state=None):
        """Target ids (B, T) from state (1, B, H) (default s_0) -> (logits (B, T, V),
        new state (1, B, H), attention weights (B, T, S) or None)."""
        x = self.drop(self.tgt_embed(np.asarray(array_of(tgt_in))))
        B, T, _ = x.shape
        state = enc.s0 if state is None else state
        if self.score is None:
            c = enc.context.unsqueeze(1).expand(B, T, self.hidden)
            s, state = self.decoder(cat([x, c], dim=-1), state)
            weights = None
        else:
            s, state = self.decoder(x, state)  # all T queries first, then attention at once
            c, weights = attend(self.score.score(s, enc.keys), enc.memory, enc.mask)
        out = self.combine(cat([s, c], dim=-1)).tanh()
        return self.generator(self.drop(out)), state, weights

    def forward(self, src, tgt_in, return_attention=False):
        """Teacher forcing: src (B, S), tgt_in (B, T) -> logits (B, T, V)
        (and the attention weights (B, T, S), None without attention, if asked)."""
        logits, _, weights = self.decode(tgt_in, self.encode(src))
        return (logits, weights) if return_attention else logits

    def loss(self, src, tgt_in, tgt_out, label_smoothing=0.0):
        """Mean (label-smoothed) cross entropy over the non-padding target tokens."""
        logits = self.forward(src, tgt_in)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                               np.asarray(array_of(tgt_out)).reshape(-1),
                               ignore_index=self.pad_id, label_smoothing=label_smoothing)

    @no_grad()
    def greedy_decode(self, src, max_len, bos_id, eos_id):
        """Most likely token at each step -> (tokens (B, L <= max_len) int64, padded with
        pad_id after <eos>; attention weights (B, L, S), or None without attention)."""
        if max_len < 1:
            raise ValueError(f"greedy_decode: max_len must be at least 1, got {max_len}")
        was_training = self.training
        self.eval()
        try:
            enc = self.encode(src)
            B = enc.mask.shape[0]
            prev = np.full((B, 1), bos_id, dtype=np.int64)
            state, done, tokens, attn = None, np.zeros(B, dtype=bool), [], []
            for _ in range(max_len):
                logits, state, w = self.decode(prev, enc, state)  # one step: T = 1
                scores = logits._array[:, -1].copy()
                scores[:, self.pad_id] = -np.inf  # padding is never a word to generate
                nxt = np.where(done, self.pad_id, scores.argmax(-1))
                tokens.append(nxt)
                if w is not None:
                    attn.append(w._array[:, -1])
                done |= nxt == eos_id
                if done.all():
                    break
                prev = nxt[:, None]
            return np.stack(tokens, axis=1), (np.stack(attn, axis=1) if attn else None)
        finally:
            self.train(was_training)


ARCHS = ("rnn", "rnn-attention")


def build_seq2seq_rnn(arch, src_vocab, tgt_vocab, **kw):
    """`arch` "rnn" (single context vector) or "rnn-attention" (score `attention=`, default
    Bahdanau's "additive"); other keywords go to `Seq2SeqRNN`."""
    if arch == "rnn":
        if kw.get("attention") is not None:
            raise ValueError(f"build_seq2seq_rnn: arch 'rnn' has no attention, got "
                             f"attention={kw['attention']!r}; use arch 'rnn-attention'")
        kw["attention"] = None
    elif arch == "rnn-attention":
        if kw.get("attention") is None:
            kw["attention"] = "additive"
    else:
        raise ValueError(f"build_seq2seq_rnn: arch must be one of {ARCHS}, got {arch!r}")
    return Seq2SeqRNN(src_vocab, tgt_vocab, **kw)
