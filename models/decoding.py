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
from minigrad.tensor import Tensor, _data


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

    def reorder(self, index):
        """Keep the cached keys and values of the hypotheses picked by `index` (beam search).

        The gather works on the arrays directly: under no_grad a Tensor index op would only add
        its bookkeeping to the one copy that a reordering needs."""
        if self.cache is None or np.array_equal(index, np.arange(len(index))):
            return
        for layer in self.cache.values():
            sa = layer.get("self", {})
            for key in ("k", "v"):
                if key in sa:
                    sa[key] = Tensor._wrap(np.take(sa[key]._array, index, axis=0))


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
    finished hypothesis, ranked by log-probability / length_penalty(length, alpha).

    All B sentences' K hypotheses run as one batch of B*K. Each step records only the new tokens
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
        prefix = np.full((B * K, 1), bos_id, dtype=np.int64)  # only the no-cache path reads it all
        scores = np.full((B, K), -np.inf)
        scores[:, 0] = 0.0  # all beams start identical: only one may expand at step 1
        finished = np.zeros((B, K), dtype=bool)
        lengths = np.zeros((B, K), dtype=np.int64)  # tokens up to and including <eos>
        tokens, parents, attns = [], [], []
        for step in range(1, max_len + 1):
            logp, attn = stepper.log_probs(prefix)
            V = logp.shape[-1]
            logp = logp.reshape(B, K, V)
            # a finished hypothesis may only extend itself with padding, at no cost
            logp = np.where(finished[:, :, None], -np.inf, logp)
            logp[:, :, model.pad_id] = np.where(finished, 0.0, -np.inf)
            cand = scores[:, :, None] + logp                               # (B, K, V)
            pen = length_penalty(np.where(finished, lengths, step), alpha)  # (B, K)
            best = _top_k((cand / pen[:, :, None]).reshape(B, K * V), K)
            beam, tok = best // V, best % V
            scores = np.take_along_axis(cand.reshape(B, K * V), best, axis=1)
            index = (np.arange(B)[:, None] * K + beam).reshape(-1)
            was_finished = np.take_along_axis(finished, beam, axis=1)
            lengths = np.where(was_finished, np.take_along_axis(lengths, beam, axis=1), step)
            finished = was_finished | (tok == eos_id)
            tokens.append(tok.reshape(-1))
            parents.append(index)
            attns.append(attn)
            stepper.reorder(index)
            if use_cache:
                prefix = tok.reshape(-1, 1)  # the cached decoder reads only the newest token
            else:
                prefix = np.concatenate([prefix[index], tok.reshape(-1, 1)], axis=1)
            if finished.all():
                break
        final = scores / length_penalty(np.maximum(lengths, 1), alpha)
        pick = np.arange(B) * K + final.argmax(1)
        out, cross = _backtrack(pick, tokens, parents, attns)
        out, cross = _finish(out, cross, eos_id, model.pad_id)
        return Decoded(out, cross, final.max(1))
    finally:
        model.train(was_training)


def _top_k(x, k):
    """Indices of each row's k largest values, largest first, ties to the lower index: the same
    as a stable argsort of -x cut to k, but a partition does the O(n) work and only k are sorted."""
    if k >= x.shape[1]:
        return np.argsort(-x, axis=1, kind="stable")[:, :k]
    part = np.argpartition(-x, k - 1, axis=1)[:, :k]
    vals = np.take_along_axis(x, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)  # by value, then index
    top = np.take_along_axis(part, order, axis=1)
    # a tie across the k-th place may have been cut at a higher index: redo those rows exactly
    kth = vals.min(axis=1, keepdims=True)
    tied = (x >= kth).sum(axis=1) > k
    if tied.any():
        top[tied] = np.argsort(-x[tied], axis=1, kind="stable")[:, :k]
    return top


def _backtrack(pick, tokens, parents, attns):
    """Follow the back-pointers from the hypotheses `pick` (B,) to their first step: the tokens
    (B, L) and, per decoder layer, the cross-attention (B, H, L, S) of each chosen prefix."""
    rows, out, cross = pick, [], []
    for tok, parent, attn in zip(reversed(tokens), reversed(parents), reversed(attns)):
        out.append(tok[rows])
        rows = parent[rows]           # the hypothesis this token extended
        cross.append([a[rows] for a in attn])  # attention of the step that produced `tok`
    out.reverse()
    cross.reverse()
    return (np.stack(out, axis=1),
            [np.stack([step[l] for step in cross], axis=2) for l in range(len(cross[0]))])


def prefix_len(prefix, eos_id, pad_id):
    """Generated tokens up to and including the first <eos> (the leading <bos> not counted)."""
    body = prefix[:, 1:]
    ended = np.cumsum(body == eos_id, axis=1)
    return np.maximum(((ended == 0) | ((ended == 1) & (body == eos_id))).sum(1), 1)
