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
from minigrad.tensor import Tensor, array_of

from .beam import Beams, length_penalty  # noqa: F401  (length_penalty: re-exported)


@dataclass
class Decoded:
    """tokens (B, L) int64 padded with pad_id after <eos>, L the longest output; cross_attention:
    one array (B, H, L, S) per decoder layer (the weights each generated token gave the source);
    scores (B,): beam search's log-probability / length penalty of each output."""
    tokens: np.ndarray
    cross_attention: list
    scores: np.ndarray | None = None


class _Stepper:
    """Feeds target prefixes to the decoder, with or without a key/value cache."""

    def __init__(self, model, memory, src_pad, use_cache):
        self.model, self.memory, self.src_pad, self.use_cache = model, memory, src_pad, use_cache
        self.cache = {} if use_cache else None
        self.fed = 0  # positions already in the cache

    def log_probs(self, prefix):
        """prefix (N, t), or with a cache just its newest token (N, 1) -> (log-probabilities
        (N, V) of the next token, cross-attn per layer for the newest position (N, H, S))."""
        if self.use_cache:  # earlier positions are in the cache: feed the newest one only
            ids, offset = prefix[:, -1:], self.fed
            self.fed += 1
        else:
            ids, offset = prefix, 0
        hidden, attns = self.model.decode(ids, self.memory, self.src_pad, cache=self.cache,
                                          offset=offset, return_attention=True)
        logp = self.model.generator(hidden[:, -1]).log_softmax(-1)._array
        logp[:, self.model.pad_id] = -np.inf  # padding is never a word to generate
        return logp, [a._array[:, :, -1] for a in attns]

    def reorder(self, index, shrink=False):
        """Keep the cached keys and values of the hypotheses picked by `index` (beam search);
        with `shrink` (sentences left the batch) also the rows of the memory, its mask and the
        cross-attention's keys and values.

        The gather works on the arrays directly: under no_grad a Tensor index op would only add
        its bookkeeping to the one copy that a reordering needs."""
        if shrink:
            self.memory = Tensor._wrap(np.take(array_of(self.memory), index, axis=0))
            self.src_pad = self.src_pad[index]
        elif np.array_equal(index, np.arange(len(index))):
            return
        for layer in (self.cache or {}).values():
            for part in ("self", "cross") if shrink else ("self",):
                kv = layer.get(part, {})
                for key in ("k", "v"):
                    if key in kv:
                        kv[key] = Tensor._wrap(np.take(kv[key]._array, index, axis=0))


def _check(model, src, max_len):
    src = np.asarray(array_of(src))
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


@no_grad()
def beam_search(model, src, beam_size=4, max_len=50, bos_id=1, eos_id=2, alpha=0.6,
                use_cache=True):
    """Keep the `beam_size` best prefixes of every sentence; return each sentence's best
    finished hypothesis, ranked by log-probability / length_penalty(length, alpha).

    All B sentences' K hypotheses run as one batch of B*K rows; a sentence leaves the batch, and
    the cache, once its answer is fixed (`Beams.retire`). Each step records only the new tokens
    and which hypothesis each came from (back-pointers); the prefixes and their cross-attention
    are read back once at the end, so a step costs the same at position 30 as at position 1."""
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
        beams = Beams(B, K, max_len, alpha, eos_id, model.pad_id)
        prefix = np.full((B * K, 1), bos_id, dtype=np.int64)  # only the no-cache path reads it all
        for step in range(1, max_len + 1):
            logp, attn = stepper.log_probs(prefix)
            tok, index = beams.advance(logp, step, attn)
            keep = beams.retire(step)
            if len(beams.alive) == 0:
                break
            if keep is not None:  # retired sentences' rows leave the batch
                tok, index = tok[keep], index[keep]
            stepper.reorder(index, shrink=keep is not None)
            if use_cache:
                prefix = tok[:, None]  # the cached decoder reads only the newest token
            else:
                prefix = np.concatenate([prefix[index], tok[:, None]], axis=1)
        tokens, cross, scores = beams.answers()
        tokens, cross = _finish(tokens, cross, eos_id, model.pad_id)
        L = int(_valid_lengths(tokens, eos_id).max(initial=1))  # no column of padding only
        return Decoded(tokens[:, :L], [a[:, :, :L] for a in cross], scores)
    finally:
        model.train(was_training)


def _valid_lengths(tokens, eos_id):
    """(B,) generated tokens up to and including the first <eos> (all of them without one)."""
    is_eos = tokens == eos_id
    return np.where(is_eos.any(1), is_eos.argmax(1) + 1, tokens.shape[1])
