"""Translation metrics: BLEU and word error rate (WER).

BLEU (Papineni et al., 2002) asks how many of the hypothesis's n-grams (runs
of n words, n = 1..4) also occur in the reference.  For each n the *clipped*
precision counts a hypothesis n-gram at most as often as it occurs in the
reference (so "the the the" earns no extra credit), summed over the whole
corpus.  BLEU is the geometric mean of the four precisions times a brevity
penalty BP = exp(1 - ref_len / hyp_len) when the hypotheses are, in total,
shorter than the references (otherwise BP = 1); it is reported as 0..100.

We reproduce ``sacrebleu.corpus_bleu(hyps, [refs], tokenize="none")``
exactly, including its default "exp" smoothing: when an order n has no
matching n-gram at all, its precision becomes 100 / (2^k * total_n) for the
k-th such order instead of 0.  Quirks copied from sacrebleu: if no n-gram of
any order matches, BLEU is 0; if the hypotheses contain no n-grams of some
order (all shorter than n words), that precision is 0 and so is BLEU.

WER = (substitutions + insertions + deletions) / reference words, with the
edit counts from a word-level Levenshtein alignment summed over the corpus.
Both metrics split on whitespace only; the caller does any tokenization.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass


@dataclass(frozen=True)
class BleuResult:
    """A BLEU score together with the statistics it was computed from."""
    score: float                # 0..100
    precisions: list[float]     # per n-gram order, in percent (after smoothing)
    counts: list[int]           # matched (clipped) n-grams per order
    totals: list[int]           # hypothesis n-grams per order
    bp: float                   # brevity penalty
    sys_len: int                # hypothesis words in total
    ref_len: int                # reference words in total

    @property
    def ratio(self) -> float:
        """Hypothesis length / reference length."""
        return self.sys_len / self.ref_len if self.ref_len else 0.0

    def __str__(self) -> str:
        precisions = "/".join(f"{p:.1f}" for p in self.precisions)
        return (f"BLEU = {self.score:.2f} {precisions} (BP = {self.bp:.3f} "
                f"ratio = {self.ratio:.3f} hyp_len = {self.sys_len} "
                f"ref_len = {self.ref_len})")


def _check_corpus(hypotheses, references, who: str) -> tuple[list[str], list[str]]:
    """Two equally long, non-empty lists of strings, or a clear error."""
    for name, value in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(value, str):
            raise TypeError(f"{who}: {name} must be a list of sentences, got a single str")
    hypotheses, references = list(hypotheses), list(references)
    if len(hypotheses) != len(references):
        raise ValueError(f"{who}: {len(hypotheses)} hypotheses but "
                         f"{len(references)} references")
    if not hypotheses:
        raise ValueError(f"{who}: no sentences to score (empty lists)")
    for name, sentences in (("hypotheses", hypotheses), ("references", references)):
        for i, s in enumerate(sentences):
            if not isinstance(s, str):
                raise TypeError(f"{who}: {name}[{i}] is a {type(s).__name__}, not a str")
    return hypotheses, references


def _ngrams(tokens: list[str], max_n: int) -> Counter:
    """Counts of all n-grams of `tokens` with 1 <= n <= max_n."""
    return Counter(tuple(tokens[i:i + n]) for n in range(1, max_n + 1)
                   for i in range(len(tokens) - n + 1))


def _bleu_from_stats(counts, totals, sys_len, ref_len, max_n,
                     effective_order: bool = False) -> BleuResult:
    """Turn summed n-gram statistics into BLEU, exactly as sacrebleu does."""
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    precisions = [0.0] * max_n
    if not any(counts):
        return BleuResult(0.0, precisions, counts, totals, bp, sys_len, ref_len)
    smooth, order = 1.0, max_n
    for n in range(1, max_n + 1):
        if totals[n - 1] == 0:
            break                       # later precisions stay 0 -> BLEU 0
        if effective_order:
            order = n                   # only average the orders that exist
        if counts[n - 1] == 0:          # "exp" smoothing: 1/2, 1/4, ... match
            smooth *= 2
            precisions[n - 1] = 100.0 / (smooth * totals[n - 1])
        else:
            precisions[n - 1] = 100.0 * counts[n - 1] / totals[n - 1]
    # sacrebleu floors log(0) at -9999999999 rather than failing
    logs = [math.log(p) if p > 0 else -9999999999 for p in precisions[:order]]
    score = bp * math.exp(sum(logs) / order)
    return BleuResult(score, precisions, counts, totals, bp, sys_len, ref_len)


def _corpus_stats(hypotheses: list[str], references: list[str], max_n: int):
    """Summed clipped matches, hypothesis n-grams and lengths over a corpus."""
    counts, totals = [0] * max_n, [0] * max_n
    sys_len = ref_len = 0
    for hyp, ref in zip(hypotheses, references):
        hyp_tokens, ref_tokens = hyp.split(), ref.split()
        sys_len += len(hyp_tokens)
        ref_len += len(ref_tokens)
        ref_ngrams = _ngrams(ref_tokens, max_n)
        for ngram, k in _ngrams(hyp_tokens, max_n).items():
            totals[len(ngram) - 1] += k
            counts[len(ngram) - 1] += min(k, ref_ngrams[ngram])    # clipping
    return counts, totals, sys_len, ref_len


def corpus_bleu_details(hypotheses, references, max_n: int = 4) -> BleuResult:
    """Corpus BLEU with its precisions, brevity penalty and lengths."""
    if not 1 <= max_n:
        raise ValueError(f"corpus_bleu: max_n must be >= 1, got {max_n}")
    hypotheses, references = _check_corpus(hypotheses, references, "corpus_bleu")
    return _bleu_from_stats(*_corpus_stats(hypotheses, references, max_n), max_n)


def corpus_bleu(hypotheses, references, max_n: int = 4) -> float:
    """Corpus BLEU (0..100) of whitespace-tokenized sentences; empty lists raise ValueError."""
    return corpus_bleu_details(hypotheses, references, max_n).score


def sentence_bleu(hypothesis: str, reference: str, max_n: int = 4) -> float:
    """BLEU of one sentence, as sacrebleu.sentence_bleu (exp smoothing, effective order)."""
    hyps, refs = _check_corpus([hypothesis], [reference], "sentence_bleu")
    return _bleu_from_stats(*_corpus_stats(hyps, refs, max_n), max_n,
                            effective_order=True).score


def edit_distance(a, b) -> int:
    """Levenshtein distance between two token sequences (unit costs)."""
    a, b = list(a), list(b)
    previous = list(range(len(b) + 1))  # distances from a[:0] to each b[:j]
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1,            # delete x
                               current[j - 1] + 1,         # insert y
                               previous[j - 1] + (x != y)))  # substitute or match
        previous = current
    return previous[-1]


def wer(hypotheses, references) -> float:
    """Corpus word error rate: total word edits / total reference words."""
    hypotheses, references = _check_corpus(hypotheses, references, "wer")
    edits = sum(edit_distance(h.split(), r.split()) for h, r in zip(hypotheses, references))
    words = sum(len(r.split()) for r in references)
    if words == 0:
        raise ValueError("wer: the references contain no words, so WER is undefined")
    return edits / words
