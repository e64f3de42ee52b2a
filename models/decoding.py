"""Greedy decoding and beam search for `Seq2SeqTransformer`, batched, under `no_grad`.

The encoder runs once. With `use_cache=True` each decoder layer keeps the keys and values of
the positions already generated, so step t feeds only the newest token: the cost of a step
stays flat instead of growing with the prefix. Without the cache, every step re-decodes the
whole prefix; both give the same tokens (a test checks it).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from minigrad.autograd import no_grad
from minigrad.tensor import _data


@dataclass
class Decoded:
    """tokens (B, L) int64 padded with pad_id after <eos>; cross_attention: one array
    (B, H, L, S) per decoder layer (the weights each generated token gave the source)."""
    tokens: np.ndarray
    cross_attention: list
    scores: np.ndarray | None = None


class _Stepper:
    """Feeds target prefixes to the decoder, with or without a key/value cache."""

    def __init__(self, model, memory, src_pad, use_cache):
        self.model, self.memory, self.src_pad, self.use_cache = model, memory, src_pad, use_cache
        self.cache = {} if use_cache else None

    def log_probs(self, prefix):
        """prefix (N, t) -> (log-probabilities (N, V) of the next token, cross-attn per layer
        for the newest position (N, H, S))."""
        t = prefix.shape[1]
        ids = prefix[:, -1:] if self.use_cache else prefix
        hidden, attns = self.model.decode(ids, self.memory, self.src_pad, cache=self.cache,
                                          offset=t - 1 if self.use_cache else 0,
                                          return_attention=True)
        logp = self.model.generator(hidden[:, -1]).log_softmax(-1)._array
        logp[:, self.model.pad_id] = -np.inf  # padding is never a word to generate
        return logp, [a._array[:, :, -1] for a in attns]

    def reorder(self, index):
        """Keep the cached keys and values of the hypotheses picked by `index` (beam search)."""
        if self.cache is None:
            return
        for layer in self.cache.values():
            sa = layer.get("self", {})
            for key in ("k", "v"):
                if key in sa:
                    sa[key] = sa[key][index]


def _check(model, src, max_len):
    src = np.asarray(_data(src))
    if src.ndim != 2:
        raise ValueError(f"decode: src must be a batch of token ids (B, S), got shape {src.shape}")
    if max_len < 1:
        raise ValueError(f"decode: max_len must be at least 1, got {max_len}")
    if max_len > model.pos.max_len:  # the last token is never fed back, so max_len fits
        raise ValueError(f"decode: max_len {max_len} exceeds the model's max_len "
                         f"{model.pos.max_len}")
    return src


def _finish(tokens, cross, eos_id, pad_id):
    """Decoded output: tokens after a sequence's first <eos> become padding and their
    cross-attention rows zeros (what they would be depends on whether a cache was used)."""
    done = np.cumsum(tokens == eos_id, axis=1) > 0
    after = np.concatenate([np.zeros((tokens.shape[0], 1), bool), done[:, :-1]], axis=1)
    keep = (~after)[:, None, :, None]
    return np.where(after, pad_id, tokens), [a * keep for a in cross]


@no_grad()
def greedy_decode(model, src, max_len=50, bos_id=1, eos_id=2, use_cache=True):
    """Pick the most likely next token at every step until <eos> or max_len tokens."""
    src = _check(model, src, max_len)
    was_training = model.training
    model.eval()
    try:
        memory, src_pad = model.encode(src)
        stepper = _Stepper(model, memory, src_pad, use_cache)
        B = src.shape[0]
        prefix = np.full((B, 1), bos_id, dtype=np.int64)
        finished = np.zeros(B, dtype=bool)
        attn_steps = []
        for _ in range(max_len):
            logp, attn = stepper.log_probs(prefix)
            nxt = np.where(finished, model.pad_id, logp.argmax(-1))
            prefix = np.concatenate([prefix, nxt[:, None]], axis=1)
            attn_steps.append(attn)
            finished |= nxt == eos_id
            if finished.all():
                break
        cross = [np.stack([step[l] for step in attn_steps], axis=2)
                 for l in range(len(attn_steps[0]))]
        return Decoded(*_finish(prefix[:, 1:], cross, eos_id, model.pad_id))
    finally:
        model.train(was_training)


def length_penalty(length, alpha):
    """GNMT's ((5 + length) / 6) ** alpha: divides log-probabilities so short outputs don't win."""
    return ((5.0 + length) / 6.0) ** alpha


@no_grad()
def beam_search(model, src, beam_size=4, max_len=50, bos_id=1, eos_id=2, alpha=0.6,
                use_cache=True):
    """Keep the `beam_size` best prefixes of every sentence; return each sentence's best
    finished hypothesis, ranked by log-probability / length_penalty(length, alpha)."""
    src = _check(model, src, max_len)
    if beam_size < 1:
        raise ValueError(f"beam_search: beam_size must be at least 1, got {beam_size}")
    was_training = model.training
    model.eval()
    try:
        B, K = src.shape[0], beam_size
        memory, src_pad = model.encode(src)
        rep = np.repeat(np.arange(B), K)  # each sentence's memory serves its K hypotheses
        stepper = _Stepper(model, memory[rep], src_pad[rep], use_cache)
        prefix = np.full((B * K, 1), bos_id, dtype=np.int64)
        scores = np.full((B, K), -np.inf)
        scores[:, 0] = 0.0  # all beams start identical: only one may expand at step 1
        finished = np.zeros((B, K), dtype=bool)
        history = None  # per layer (B*K, H, t, S)
        for step in range(1, max_len + 1):
            logp, attn = stepper.log_probs(prefix)
            V = logp.shape[-1]
            logp = logp.reshape(B, K, V)
            # a finished hypothesis may only extend itself with padding, at no cost
            logp = np.where(finished[:, :, None], -np.inf, logp)
            logp[:, :, model.pad_id] = np.where(finished, 0.0, -np.inf)
            cand = (scores[:, :, None] + logp).reshape(B, K * V)
            lengths = np.where(finished, prefix_len(prefix, eos_id, model.pad_id).reshape(B, K), step)
            pen = np.repeat(length_penalty(lengths, alpha), V, axis=1).reshape(B, K * V)
            best = np.argsort(-(cand / pen), axis=1, kind="stable")[:, :K]
            beam, tok = best // V, best % V
            scores = np.take_along_axis(cand, best, axis=1)
            index = (np.arange(B)[:, None] * K + beam).reshape(-1)
            prefix = np.concatenate([prefix[index], tok.reshape(-1, 1)], axis=1)
            stepper.reorder(index)
            new = [a[index][:, :, None] for a in attn]
            history = new if history is None else [np.concatenate([h[index], n], axis=2)
                                                   for h, n in zip(history, new)]
            finished = np.take_along_axis(finished, beam, axis=1) | (tok == eos_id)
            if finished.all():
                break
        final = scores / length_penalty(prefix_len(prefix, eos_id, model.pad_id).reshape(B, K), alpha)
        pick = np.arange(B) * K + final.argmax(1)
        tokens, cross = _finish(prefix[pick, 1:], [h[pick] for h in history], eos_id, model.pad_id)
        return Decoded(tokens, cross, final.max(1))
    finally:
        model.train(was_training)


def prefix_len(prefix, eos_id, pad_id):
    """Generated tokens up to and including the first <eos> (the leading <bos> not counted)."""
    body = prefix[:, 1:]
    ended = np.cumsum(body == eos_id, axis=1)
    return np.maximum(((ended == 0) | ((ended == 1) & (body == eos_id))).sum(1), 1)
