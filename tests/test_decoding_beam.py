"""Beam search's shortcuts change no answer (`minigrad.models.beam`).

`beam_search` retires a sentence as soon as its answer is fixed and picks each step's K best
continuations among a few candidate words per hypothesis. Both are checked against the
definition written out plainly below (one sentence at a time, every continuation of every
hypothesis scored, no cache, run until all K hypotheses end): the same tokens, the same scores.
Also: a sentence's answer does not depend on the sentences batched with it, and retired
sentences really leave the batch.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from minigrad.models import Seq2SeqTransformer, beam_search
from minigrad.models import beam as beam_mod
from minigrad.models.beam import Beams, _select_all, length_penalty

import minigrad as mg
from minigrad.autograd import no_grad

try:  # tests/ is not a package: pytest puts it on sys.path (the default "prepend" import mode)
    from test_decoding import EOS, PAD, random_model, random_src, valid_positions
except ImportError:  # pragma: no cover - when tests/ is imported as a package
    from tests.test_decoding import EOS, PAD, random_model, random_src, valid_positions

BOS = 1


@no_grad()
def definition_beam(model, src_row, K, max_len, alpha):
    """Beam search as defined, for one sentence: keep the K best of all K * V continuations by
    log-probability / length_penalty (ties to the lower (beam, word)); an ended hypothesis only
    extends itself with padding, at no cost; stop when all K have ended or at max_len; answer
    the best by log-probability / length_penalty. Returns (tokens up to <eos>, score, steps)."""
    model.eval()
    memory, src_pad = model.encode(src_row[None])
    hyps = [([], 0.0, False)] + [([], -np.inf, False)] * (K - 1)  # (tokens, logprob, ended)
    for step in range(1, max_len + 1):
        cands = []
        for k, (toks, s, ended) in enumerate(hyps):
            V = model.generator.weight.shape[0]
            if ended:
                cands.append((s / length_penalty(len(toks), alpha), k * V + PAD, toks, s, True))
                continue
            prefix = np.array([[BOS] + toks])
            hidden = model.decode(prefix, memory, src_pad)
            logp = model.generator(hidden[:, -1]).log_softmax(-1).numpy()[0].astype(np.float64)
            logp[PAD] = -np.inf
            for v in range(V):
                c = s + logp[v]
                cands.append((c / length_penalty(step, alpha), k * V + v, toks + [v], c, v == EOS))
        cands.sort(key=lambda c: (-c[0], c[1]))
        hyps = [(toks, s, ended) for _, _, toks, s, ended in cands[:K]]
        if all(ended for _, _, ended in hyps):
            break
    finals = [s / length_penalty(max(len(toks), 1), alpha) for toks, s, _ in hyps]
    best = int(np.argmax(finals))
    return hyps[best][0], finals[best], step


def answers(out):
    """Each row's tokens up to and including its first <eos>, as lists."""
    return [list(row[ok]) for row, ok in zip(out.tokens, valid_positions(out.tokens))]


def wide_model(seed, eos_bias):
    """An untrained float64 model over 300 words: enough for the candidate shortcut to leave
    most words out (groups of 128)."""
    mg.manual_seed(seed)
    model = Seq2SeqTransformer(300, 300, d_model=16, nhead=2, num_encoder_layers=1,
                               num_decoder_layers=2, dim_feedforward=32, dropout=0.0,
                               max_len=16, pad_id=PAD).to(np.float64)
    model.generator.weight.numpy()[...] *= 8  # sharper distributions, so some beams end early
    model.generator.bias.numpy()[EOS] += eos_bias
    return model.eval()


# The wide cases' definition scores 300 words per hypothesis in Python (5-15 s a case): one
# runs in the fast suite, the others with the slow ones.
CASES = [("narrow", seed, bias) for seed in (0, 1, 2) for bias in (0.0, 1.5, 3.0)] + \
        [("wide", 0, 2.0)] + \
        [pytest.param("wide", seed, bias, marks=pytest.mark.slow)
         for seed, bias in ((0, 4.0), (1, 2.0), (1, 4.0))]


@pytest.mark.parametrize("kind,seed,eos_bias", CASES)
def test_beam_search_gives_the_definitions_answers(kind, seed, eos_bias, monkeypatch):
    if kind == "narrow":  # 11 words: groups of 5 words make the shortcut leave some out
        monkeypatch.setattr(beam_mod, "GROUPS", 5)
        model, src = random_model(seed, eos_bias=eos_bias), random_src(seed, B=6)
    else:
        model = wide_model(seed, eos_bias)
        src = np.random.default_rng(seed).integers(3, 300, (6, 5))
        src[1:, 3:] = PAD
    for K in (1, 2, 4):
        for alpha in (0.0, 0.6, 1.5, -0.5):  # -0.5: a penalty that favours long outputs
            expected = [definition_beam(model, row, K, 10, alpha) for row in src]
            for use_cache in (True, False):
                out = beam_search(model, src, beam_size=K, max_len=10, alpha=alpha,
                                  use_cache=use_cache)
                assert answers(out) == [toks for toks, _, _ in expected], (K, alpha, use_cache)
                np.testing.assert_allclose(out.scores, [s for _, s, _ in expected], rtol=1e-9)


def test_a_sentences_answer_does_not_depend_on_its_batch_neighbours():
    """Alone, without padding, or beside sentences that end sooner or later (and so leave the
    batch at other steps), a sentence gets the same answer, score and cross-attention."""
    model = wide_model(0, eos_bias=2.0)
    src = np.random.default_rng(5).integers(3, 300, (8, 6))
    src[2:, 4:] = PAD
    batch = beam_search(model, src, beam_size=4, max_len=12)
    for b in range(len(src)):
        S = int((src[b] != PAD).sum())
        alone = beam_search(model, src[b:b + 1, :S], beam_size=4, max_len=12)
        L = valid_positions(alone.tokens).sum()
        assert answers(alone) == [answers(batch)[b]]
        np.testing.assert_allclose(alone.scores, batch.scores[b:b + 1], rtol=1e-12)
        for a, c in zip(alone.cross_attention, batch.cross_attention):
            np.testing.assert_allclose(a[0, :, :L], c[b, :, :L, :S], atol=1e-12)
            assert not c[b, :, :, S:].any()  # padding got no attention
            assert not c[b, :, L:].any()  # nor did the positions after <eos>


def decoder_rows(model, run):
    """The number of rows the decoder was given at each step of `run()`."""
    rows = []
    hook = model.transformer.decoder.register_forward_hook(
        lambda module, args, out: rows.append(args[0].shape[0]))
    try:
        run()
    finally:
        hook.remove()
    return rows


def test_sentences_leave_the_batch_once_their_answer_is_fixed():
    """Each step decodes K rows per sentence still open, and a sentence is open no longer than
    the definition runs on it (until all K hypotheses end); here most close sooner."""
    model = wide_model(1, eos_bias=4.0)
    src = np.random.default_rng(2).integers(3, 300, (8, 6))
    K = 3
    rows = decoder_rows(model, lambda: beam_search(model, src, beam_size=K, max_len=12))
    assert rows[0] == 8 * K
    assert all(r % K == 0 for r in rows) and rows == sorted(rows, reverse=True)
    steps = np.array([definition_beam(model, row, K, 12, 0.6)[2] for row in src])
    open_in_definition = [K * (steps >= t).sum() for t in range(1, len(rows) + 1)]
    assert all(r <= d for r, d in zip(rows, open_in_definition))
    assert sum(rows) < K * steps.sum()  # fewer rows than waiting for every hypothesis to end
    assert rows[-1] < rows[0]


def test_a_sentence_whose_first_word_ends_it_leaves_after_one_step():
    """With <eos> far likelier than any word, the one-token answer <eos> beats anything the
    other hypotheses could still reach: one decoder step, although they have not ended."""
    model = wide_model(0, eos_bias=60.0)
    src = np.random.default_rng(0).integers(3, 300, (4, 5))
    out = None

    def run():
        nonlocal out
        out = beam_search(model, src, beam_size=4, max_len=12)
    assert decoder_rows(model, run) == [16]
    assert (out.tokens == EOS).all() and out.tokens.shape == (4, 1)
    expected = [definition_beam(model, row, 4, 12, 0.6) for row in src]
    assert answers(out) == [toks for toks, _, _ in expected]


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_candidate_shortcut_picks_what_scoring_every_word_picks(data):
    """`Beams._select` (a few candidate words per hypothesis) against `_select_all` (every
    word) on made-up log-probabilities with many ties and -inf, ended hypotheses, dead beams."""
    B, K = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 4))
    groups = data.draw(st.integers(K + 1, 8))
    V = data.draw(st.integers(groups * 2, groups * 4))
    values = st.sampled_from([-np.inf, -9.0, -3.0, -2.5, -1.0, -0.5, 0.0])
    logp = np.array(data.draw(st.lists(values, min_size=B * K * V, max_size=B * K * V)),
                    np.float32).reshape(B * K, V)
    beams = Beams(B, K, max_len=20, alpha=data.draw(st.sampled_from([0.0, 0.6])),
                  eos_id=EOS, pad_id=PAD, groups=groups)
    score = st.sampled_from([-np.inf, -4.0, -1.0, -0.5, 0.0])
    beams.scores = np.array(data.draw(st.lists(score, min_size=B * K, max_size=B * K))).reshape(B, K)
    beams.finished = np.array(data.draw(st.lists(st.booleans(), min_size=B * K,
                                                 max_size=B * K))).reshape(B, K)
    beams.lengths = np.where(beams.finished, data.draw(st.integers(1, 5)), 0)
    step = 6
    logp[:, PAD] = -np.inf
    pen = length_penalty(np.where(beams.finished, beams.lengths, step), beams.alpha)
    got = beams._select(logp.copy(), pen, step)
    want = _select_all(logp.reshape(B, K, V), beams.scores, beams.finished, pen, PAD)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_retirement_waits_if_a_log_probability_was_ever_above_zero():
    """The bound on what a live hypothesis can reach assumes log-probabilities <= 0 (true of
    log_softmax); once one above 0 is seen, only sentences whose beams all ended retire."""
    logp = np.full((2, 11), -5.0, np.float32)
    logp[0, EOS], logp[0, 3] = -0.01, -1.0
    for above_zero, retires in ((False, True), (True, False)):
        beams = Beams(1, 2, max_len=10, alpha=0.6, eos_id=EOS, pad_id=PAD, groups=128)
        logp[1, 4] = 1e-7 if above_zero else -5.0  # in the dead second beam: never picked
        tok, _ = beams.advance(logp.copy(), 1, [])
        assert list(tok) == [EOS, 3]
        # <eos> at -0.01 beats -1.0 however long that one grows, if nothing can rise
        assert (beams.retire(1) is not None) == retires


@pytest.mark.parametrize("alpha", [1.0, -0.5])
def test_a_sentence_retires_only_when_no_live_hypothesis_can_catch_up(alpha):
    """After step 3 of at most 10: an ended hypothesis (3 tokens, log-probability -2) and a live
    one at log-probability s. Words of probability ~1 keep s while the length penalty moves
    towards its most favourable value over lengths 4..10, so the live one could still win
    exactly when s / max(length_penalty(4..10)) >= -2 / length_penalty(3)."""
    pen = length_penalty(np.arange(4, 11), alpha)
    ended = -2.0 / length_penalty(3, alpha)
    best_reach = ended * pen.max()  # the s at which the live one can just tie
    for s, retires in ((best_reach * 1.01, True), (best_reach * 0.99, False)):
        beams = Beams(1, 2, max_len=10, alpha=alpha, eos_id=EOS, pad_id=PAD)
        beams.scores = np.array([[-2.0, s]])
        beams.finished = np.array([[True, False]])
        beams.lengths = np.array([[3, 3]])
        beams.steps = [[np.array([EOS, 5]), np.arange(2), [], None]]  # the step just taken
        assert (beams.retire(3) is not None) == retires, (s, retires)
    assert pen.max() > length_penalty(4, alpha) or alpha < 0  # not just the next length's


def test_an_empty_batch_gives_empty_outputs():
    for model in (random_model(0), wide_model(0, eos_bias=0.0)):
        out = beam_search(model, np.zeros((0, 5), np.int64), beam_size=4, max_len=6)
        assert out.tokens.shape == (0, 1) and out.scores.shape == (0,)
        assert all(a.shape[0] == 0 for a in out.cross_attention)
