"""Using a trained translator: decoding batches of sentences (greedy or beam search), one
sentence with its attention, and corpus BLEU against references."""
from __future__ import annotations

from .batching import make_batch
from .metrics import corpus_bleu

__all__ = ["encode_sources", "evaluate_bleu", "length_limit", "translate", "translate_ids",
           "translate_one"]


def translate_ids(model, src_ids, beam=1, max_len=64, bos_id=1, eos_id=2):
    """Decode a batch of source ids (B, S) -> (token array (B, L), cross-attention or None)."""
    from minigrad.models import beam_search, greedy_decode
    from minigrad.models import Seq2SeqTransformer
    if isinstance(model, Seq2SeqTransformer):
        out = (beam_search(model, src_ids, beam_size=beam, max_len=max_len, bos_id=bos_id,
                           eos_id=eos_id) if beam > 1 else
               greedy_decode(model, src_ids, max_len=max_len, bos_id=bos_id, eos_id=eos_id))
        return out.tokens, out.cross_attention
    tokens, attn = model.greedy_decode(src_ids, max_len, bos_id, eos_id)
    return tokens, ([attn[:, None]] if attn is not None else None)


def length_limit(src_len, max_len):
    """Longest output allowed for a source of `src_len` tokens: 2 * src_len + 5, as decoders
    usually cap it, so a model caught repeating itself stops early."""
    return int(min(max_len, 2 * src_len + 5))


def encode_sources(src_tok, sentences, max_len):
    """Token ids of each source sentence, cut to `max_len` as in training; an empty sentence
    is an error (a model given nothing to read would still write something)."""
    ids = []
    for i, sentence in enumerate(sentences):
        x = src_tok.encode(sentence)
        if not x:
            raise ValueError(f"translate: sentence {i} ({sentence!r}) is empty: there is "
                             f"nothing to translate")
        ids.append(x[:max_len])
    return ids


def translate(model, src_tok, tgt_tok, sentences, beam=1, batch_size=100, max_len=64):
    """Translate a list of source sentences; returns the list of target sentences."""
    out = []
    for i in range(0, len(sentences), batch_size):
        ids = encode_sources(src_tok, sentences[i:i + batch_size], max_len)
        src = make_batch([(x, [0]) for x in ids], src_tok.pad_id).src
        limit = length_limit(src.shape[1], max_len)
        tokens, _ = translate_ids(model, src, beam, limit, tgt_tok.bos_id, tgt_tok.eos_id)
        out.extend(tgt_tok.decode(row[:length_limit(len(x), max_len)]) for row, x in zip(tokens, ids))
    return out


def translate_one(model, src_tok, tgt_tok, sentence, beam=1, max_len=64):
    """(source ids, output ids, cross-attention or None) for one sentence."""
    ids = encode_sources(src_tok, [sentence], max_len)[0]
    src = make_batch([(ids, [0])], src_tok.pad_id).src
    tokens, attn = translate_ids(model, src, beam, length_limit(len(ids), max_len),
                                 tgt_tok.bos_id, tgt_tok.eos_id)
    return ids, [int(t) for t in tokens[0] if t != tgt_tok.pad_id], attn


def evaluate_bleu(model, src_tok, tgt_tok, pairs, beam=1, max_len=64):
    """Corpus BLEU of the model's translations of `pairs` against their references."""
    hyps = translate(model, src_tok, tgt_tok, [s for s, _ in pairs], beam=beam, max_len=max_len)
    return corpus_bleu(hyps, [t for _, t in pairs]), hyps
