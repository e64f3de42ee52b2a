"""Turning sentence pairs into padded batches of token ids.

Sentences of similar length are batched together (bucketing), so little of each batch is
padding; the order of the batches is shuffled every epoch from (seed, epoch), so a resumed run
sees exactly the batches an uninterrupted run would have seen.

A batch is cut either by sentences (`batch_size`) or, as fairseq's --max-tokens does, by
tokens: with `max_tokens`, a batch holds as many sentences as fit in that many *padded target*
tokens, batch size x longest target (the decoder's output positions, <eos> included, padding
counted). Short sentences then come in large batches and long ones in small batches, so every
step does about the same work. (fairseq counts max(source, target) length; here the target,
the side whose logits over the vocabulary dominate a step, decides.)
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Batch:
    """src (B, S); tgt_in (B, T) starts with <bos>; tgt_out (B, T) ends with <eos>; pad = 0."""
    src: np.ndarray
    tgt_in: np.ndarray
    tgt_out: np.ndarray
    pad_id: int

    @property
    def n_tokens(self) -> int:
        """Target tokens that count in the loss (not padding)."""
        return int((self.tgt_out != self.pad_id).sum())

    @property
    def src_mask(self) -> np.ndarray:
        """(B, S) True at padding."""
        return self.src == self.pad_id


def pad_batch(seqs, pad_id, width=None) -> np.ndarray:
    """A list of id lists -> (B, max length) int64 array padded with pad_id."""
    width = width or max((len(s) for s in seqs), default=1)
    out = np.full((len(seqs), max(width, 1)), pad_id, dtype=np.int64)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = s
    return out


def encode_pairs(pairs, src_tok, tgt_tok):
    """[(src text, tgt text)] -> [(src ids, tgt ids with <bos> ... <eos>)]."""
    return [(src_tok.encode(s), tgt_tok.encode(t, add_bos=True, add_eos=True)) for s, t in pairs]


def make_batch(examples, pad_id) -> Batch:
    src = pad_batch([s for s, _ in examples], pad_id)
    tgt = pad_batch([t for _, t in examples], pad_id)
    return Batch(src, tgt[:, :-1], tgt[:, 1:], pad_id)


def bucket_batches(examples, batch_size, seed, epoch, shuffle=True):
    """Index lists of one epoch's batches: sort by length (with a seeded tie-break), cut into
    batches of `batch_size`, shuffle the batch order. Same (seed, epoch) -> same batches."""
    rng = np.random.default_rng([seed, epoch])
    noise = rng.random(len(examples)) if shuffle else np.zeros(len(examples))
    lengths = np.array([(len(s), len(t)) for s, t in examples]).reshape(-1, 2)
    order = np.lexsort((noise, lengths[:, 1], lengths[:, 0]))
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    if shuffle:
        rng.shuffle(batches)
    return batches


def target_tokens(example) -> int:
    """Decoder positions of an encoded pair (tgt_out's length: the target after <bos>)."""
    return len(example[1]) - 1


def token_batches(examples, max_tokens, seed, epoch, shuffle=True):
    """Index lists of one epoch's batches of at most `max_tokens` padded target tokens each:
    sort by target length, then source length (seeded tie-break), fill each batch while
    (sentences + 1) x longest target stays within the budget, shuffle the batch order."""
    longest = max((target_tokens(ex) for ex in examples), default=0)
    if longest > max_tokens:
        raise ValueError(f"batching: max_tokens {max_tokens} is smaller than the longest "
                         f"target ({longest} tokens with <eos>); raise it or lower max_len")
    rng = np.random.default_rng([seed, epoch])
    noise = rng.random(len(examples)) if shuffle else np.zeros(len(examples))
    tgt = np.array([target_tokens(ex) for ex in examples], dtype=np.int64)
    src = np.array([len(s) for s, _ in examples], dtype=np.int64)
    order = np.lexsort((noise, src, tgt))    # ascending: the newest sentence is the longest
    batches, first = [], 0
    for k in range(1, len(order) + 1):
        if k == len(order) or (k + 1 - first) * tgt[order[k]] > max_tokens:
            batches.append(order[first:k])
            first = k
    if shuffle:
        rng.shuffle(batches)
    return batches


def plan_batches(examples, batch_size, seed=0, epoch=0, shuffle=True, max_tokens=0):
    """One epoch's batches as index lists: by tokens when `max_tokens` > 0, else by sentences."""
    if max_tokens:
        return token_batches(examples, max_tokens, seed, epoch, shuffle)
    return bucket_batches(examples, batch_size, seed, epoch, shuffle)


def iterate_batches(examples, batch_size, pad_id, seed=0, epoch=0, shuffle=True, start=0,
                    max_tokens=0):
    """Yield (index within epoch, Batch), starting at batch `start` (for resuming)."""
    batches = plan_batches(examples, batch_size, seed, epoch, shuffle, max_tokens)
    for i in range(start, len(batches)):
        yield i, make_batch([examples[j] for j in batches[i]], pad_id)


def num_batches(n_examples, batch_size):
    return -(-n_examples // batch_size)
