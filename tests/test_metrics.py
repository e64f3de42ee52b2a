"""BLEU must agree with sacrebleu (tokenize="none"); WER is checked by hand."""
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad.translate.metrics import (BleuResult, corpus_bleu, corpus_bleu_details,
                                     edit_distance, sentence_bleu, wer)

sacrebleu = pytest.importorskip("sacrebleu")


def reference_bleu(hyps, refs, max_n=4):
    """sacrebleu's corpus BLEU on whitespace tokens."""
    metric = sacrebleu.metrics.BLEU(tokenize="none", max_ngram_order=max_n)
    return metric.corpus_score(hyps, [refs])


def random_corpus(rng: random.Random):
    """Random references from a tiny vocabulary, and perturbed hypotheses."""
    vocab = [f"w{i}" for i in range(rng.randint(2, 10))]
    refs = [" ".join(rng.choices(vocab, k=rng.choice([0, 1, 2, 3, 5, 8, 12])))
            for _ in range(rng.randint(1, 8))]
    hyps = []
    for ref in refs:
        words = ref.split()
        if rng.random() < 0.3:                      # unrelated hypothesis
            words = rng.choices(vocab, k=rng.randint(0, 8))
        for _ in range(rng.randint(0, 3)):          # a few random edits
            op = rng.random()
            if op < 0.33 and words:
                del words[rng.randrange(len(words))]
            elif op < 0.66:
                words.insert(rng.randint(0, len(words)), rng.choice(vocab))
            elif words:
                words[rng.randrange(len(words))] = rng.choice(vocab)
        hyps.append(" ".join(words))
    return hyps, refs


def test_matches_sacrebleu_on_random_corpora():
    rng = random.Random(1234)
    for _ in range(400):
        hyps, refs = random_corpus(rng)
        for max_n in (4, rng.randint(1, 3)):
            ours = corpus_bleu_details(hyps, refs, max_n=max_n)
            theirs = reference_bleu(hyps, refs, max_n)
            assert ours.score == pytest.approx(theirs.score, abs=0.01), (hyps, refs)
            assert ours.bp == pytest.approx(theirs.bp)
            assert list(ours.counts) == list(theirs.counts)
            assert list(ours.totals) == list(theirs.totals)
            assert ours.precisions == pytest.approx(list(theirs.precisions))
            assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)


sentence = st.lists(st.sampled_from("a b c d e".split()), max_size=7).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(sentence, sentence), min_size=1, max_size=6))
def test_matches_sacrebleu_property(pairs):
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    assert corpus_bleu(hyps, refs) == pytest.approx(reference_bleu(hyps, refs).score,
                                                    abs=0.01)


@settings(max_examples=200, deadline=None)
@given(sentence, sentence)
def test_sentence_bleu_matches_sacrebleu(hyp, ref):
    theirs = sacrebleu.sentence_bleu(hyp, [ref], tokenize="none").score
    assert sentence_bleu(hyp, ref) == pytest.approx(theirs, abs=0.01)


def test_perfect_translation_scores_100():
    refs = ["the cat sat on the mat", "a dog ran to the big house today"]
    assert corpus_bleu(refs, refs) == pytest.approx(100.0)
    assert sentence_bleu(refs[0], refs[0]) == pytest.approx(100.0)


def test_short_sentences_quirk_follows_sacrebleu():
    # Perfect, but no hypothesis has 4 words: there are no 4-grams at all, so
    # the 4-gram precision is 0 and (like sacrebleu) BLEU is 0.
    refs = ["a b", "c d e", "f"]
    assert corpus_bleu(refs, refs) == reference_bleu(refs, refs).score == 0.0
    assert corpus_bleu(refs, refs, max_n=2) == pytest.approx(100.0)


def test_zero_matches_for_an_order_uses_exp_smoothing():
    hyps, refs = ["a b c d x y"], ["a b x c d y"]      # no 3- or 4-gram matches
    ours = corpus_bleu_details(hyps, refs)
    assert ours.counts[2:] == [0, 0]
    assert ours.precisions[2] == pytest.approx(100 / (2 * 4))   # 1st empty order
    assert ours.precisions[3] == pytest.approx(100 / (4 * 3))   # 2nd empty order
    assert ours.score == pytest.approx(reference_bleu(hyps, refs).score)


def test_empty_hypotheses():
    refs = ["a b c d", "e f g h"]
    assert corpus_bleu(["", ""], refs) == reference_bleu(["", ""], refs).score == 0.0
    hyps = ["a b c d", ""]
    assert corpus_bleu(hyps, refs) == pytest.approx(reference_bleu(hyps, refs).score)
    details = corpus_bleu_details(["", ""], refs)
    assert details.bp == 0.0 and details.sys_len == 0


def test_details_and_str():
    result = corpus_bleu_details(["a b c d e"], ["a b c d f g"])
    assert isinstance(result, BleuResult)
    assert result.ratio == pytest.approx(5 / 6)
    assert result.bp == pytest.approx(np.exp(1 - 6 / 5))
    assert str(result).startswith(f"BLEU = {result.score:.2f} 80.0/75.0/66.7/50.0")


def test_bleu_input_errors():
    with pytest.raises(ValueError, match="no sentences"):
        corpus_bleu([], [])
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        corpus_bleu(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="single str"):
        corpus_bleu("a b c", "a b c")


@pytest.mark.parametrize("hyp, ref, expected", [
    ("a b c", "a b c", 0.0),
    ("a x c", "a b c", 1 / 3),          # one substitution
    ("a b c d", "a b c", 1 / 3),        # one insertion
    ("a c", "a b c", 1 / 3),            # one deletion
    ("", "a b c", 1.0),                 # empty hypothesis: all deleted
    ("x y z w", "a b", 2.0),            # WER can exceed 1
    ("b c a", "a b c", 2 / 3),          # rotation: delete a, insert a
])
def test_wer_by_hand(hyp, ref, expected):
    assert wer([hyp], [ref]) == pytest.approx(expected)


def test_wer_is_pooled_over_the_corpus():
    # (0 + 3 edits) / (2 + 3 words), not the mean of per-sentence rates
    assert wer(["a b", "x"], ["a b", "p q r"]) == pytest.approx(3 / 5)


def test_wer_errors():
    with pytest.raises(ValueError, match="no words"):
        wer(["a"], [""])
    with pytest.raises(ValueError, match="no sentences"):
        wer([], [])


def test_edit_distance():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance([], ["a", "b"]) == 2
    assert edit_distance(["a", "b"], []) == 2
    assert edit_distance("abc", "abc") == 0
