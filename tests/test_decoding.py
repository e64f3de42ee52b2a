"""Greedy decoding and beam search (`minigrad.models.decoding`).

Beam 1 is greedy; the key/value cache changes nothing but the speed; the returned shapes,
attention weights and padding follow `Decoded`'s contract; on the trained copy-task model beam
search finds outputs at least as likely as greedy's. The copy-task model comes from
tests/test_transformer.py (trained once per session).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from minigrad.models import Decoded, Seq2SeqTransformer, beam_search, greedy_decode
from minigrad.models.decoding import length_penalty

import minigrad as mg
from minigrad.autograd import no_grad

try:  # tests/ is not a package: pytest puts it on sys.path (the default "prepend" import mode)
    from test_transformer import BOS, COPY_LEN, EOS, PAD, trained_copy_model
except ImportError:  # pragma: no cover - when tests/ is imported as a package
    from tests.test_transformer import BOS, COPY_LEN, EOS, PAD, trained_copy_model

VOCAB, MAX_LEN = 11, 16  # ids 0, 1, 2 are <pad>, <bos>, <eos>; 3..10 are words
NUM_LAYERS, HEADS = 2, 2
SEEDS = (0, 1, 2)


def random_model(seed, eos_bias=0.0, dtype=np.float64):
    """An untrained model; `eos_bias` raises the logit of <eos> so some outputs end early."""
    mg.manual_seed(seed)
    model = Seq2SeqTransformer(VOCAB, VOCAB, d_model=16, nhead=HEADS,
                               num_encoder_layers=NUM_LAYERS, num_decoder_layers=NUM_LAYERS,
                               dim_feedforward=32, dropout=0.1, max_len=MAX_LEN, pad_id=PAD)
    model.to(dtype)
    model.generator.bias.numpy()[EOS] += eos_bias
    return model


def random_src(seed, B=5, S=7):
    """Token ids with padding of several lengths (row 0 unpadded)."""
    rng = np.random.default_rng(seed)
    src = rng.integers(3, VOCAB, (B, S))
    for b in range(1, B):
        src[b, S - b % (S - 1):] = PAD  # 0 to S - 2 padded positions
    assert (src[:, 0] != PAD).all()
    return src


@pytest.fixture(scope="module")
def random_models():
    return [(random_model(s), random_src(s)) for s in SEEDS]


@pytest.fixture(scope="module")
def eos_model():
    """A model whose outputs end at different steps: some before max_len, some not at all."""
    model, src = random_model(3, eos_bias=1.5), random_src(3, B=8)
    ends = (greedy_decode(model, src, max_len=12).tokens == EOS).any(1)
    assert ends.any() and not ends.all()  # precondition of the tests that use it
    return model, src


@pytest.fixture(scope="module")
def copy_task():
    return trained_copy_model()


@pytest.fixture(scope="module")
def half_trained_copy_model(copy_task):
    """The copy model after 120 of its 400 training steps: it hesitates, so beam search and
    greedy decoding part ways."""
    model = Seq2SeqTransformer(**copy_task.model.config)
    model.load_state_dict(copy_task.early_state)
    return model.eval()


@pytest.fixture(scope="module", params=["trained", "half-trained"])
def copy_model(request, copy_task):
    if request.param == "trained":
        return copy_task.model
    return request.getfixturevalue("half_trained_copy_model")


def valid_positions(tokens):
    """(B, L) bool: the generated tokens up to and including the first <eos>."""
    L = tokens.shape[1]
    is_eos = tokens == EOS
    last = np.where(is_eos.any(1), is_eos.argmax(1), L - 1)
    return np.arange(L)[None, :] <= last[:, None]


def sequence_logprob(model, src, tokens):
    """log p(tokens | src) under the model by teacher forcing, summed up to the first <eos>."""
    tgt_in = np.concatenate([np.full((len(src), 1), BOS), tokens[:, :-1]], axis=1)
    was = model.training
    model.eval()
    with no_grad():
        logp = model(src, tgt_in).log_softmax(-1).numpy()
    model.train(was)
    picked = np.take_along_axis(logp, tokens[:, :, None], axis=2)[:, :, 0]
    return np.where(valid_positions(tokens), picked, 0.0).sum(1)


# --- beam 1 is greedy -----------------------------------------------------------------------

@pytest.mark.parametrize("use_cache", [True, False])
def test_beam_1_equals_greedy_on_random_models(random_models, eos_model, use_cache):
    for model, src in random_models + [eos_model]:
        greedy = greedy_decode(model, src, max_len=12, use_cache=use_cache)
        beam = beam_search(model, src, beam_size=1, max_len=12, use_cache=use_cache)
        assert np.array_equal(beam.tokens, greedy.tokens)
        for g, b in zip(greedy.cross_attention, beam.cross_attention):
            np.testing.assert_allclose(b, g, atol=1e-12)


def test_beam_1_equals_greedy_on_the_copy_model(copy_task, copy_model):
    src = copy_task.test_src[:20]
    greedy = greedy_decode(copy_model, src, max_len=COPY_LEN + 1)
    beam = beam_search(copy_model, src, beam_size=1, max_len=COPY_LEN + 1)
    assert np.array_equal(beam.tokens, greedy.tokens)


# --- the cache changes nothing but the speed ------------------------------------------------

def decode(kind, model, src, use_cache, max_len=12):
    if kind == "greedy":
        return greedy_decode(model, src, max_len=max_len, use_cache=use_cache)
    return beam_search(model, src, beam_size=4, max_len=max_len, use_cache=use_cache)


@pytest.mark.parametrize("kind", ["greedy", "beam4"])
def test_cached_and_uncached_decoding_agree(random_models, eos_model, kind):
    for model, src in random_models + [eos_model]:
        cached, uncached = decode(kind, model, src, True), decode(kind, model, src, False)
        assert np.array_equal(cached.tokens, uncached.tokens)
        valid = valid_positions(cached.tokens)
        for a, b in zip(cached.cross_attention, uncached.cross_attention):
            assert a.shape == b.shape
            # every head and source position, at every real target position
            diff = np.abs(a - b).max(axis=(1, 3))
            assert diff[valid].max() < 1e-5
        if kind == "beam4":
            np.testing.assert_allclose(cached.scores, uncached.scores, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["greedy", "beam4"])
def test_cached_and_uncached_decoding_agree_on_the_copy_model(copy_task, copy_model, kind):
    model, src = copy_model, copy_task.test_src[:20]
    cached = decode(kind, model, src, True, max_len=COPY_LEN + 1)
    uncached = decode(kind, model, src, False, max_len=COPY_LEN + 1)
    assert np.array_equal(cached.tokens, uncached.tokens)
    for a, b in zip(cached.cross_attention, uncached.cross_attention):
        np.testing.assert_allclose(a, b, atol=1e-5)


@pytest.mark.parametrize("kind", ["greedy", "beam4"])
def test_cross_attention_after_eos_does_not_depend_on_the_cache(eos_model, kind):
    """The whole `cross_attention` arrays agree, including the rows of the positions after a
    sequence's <eos> (which hold padding in `tokens`): what `Decoded` returns must not depend
    on `use_cache`."""
    model, src = eos_model
    cached, uncached = decode(kind, model, src, True), decode(kind, model, src, False)
    assert np.array_equal(cached.tokens, uncached.tokens)
    for layer, (a, b) in enumerate(zip(cached.cross_attention, uncached.cross_attention)):
        diff = np.abs(a - b).max(axis=(1, 3))
        bad = np.argwhere(diff > 1e-5)
        assert bad.size == 0, (
            f"layer {layer}: cached and uncached cross-attention differ by up to "
            f"{diff.max():.3g} at (sequence, position) {bad[:4].tolist()}; tokens there are "
            f"{[int(cached.tokens[b, t]) for b, t in bad[:4]]} (padding after <eos>)")


# --- the shape of what comes back -----------------------------------------------------------

@pytest.mark.parametrize("kind", ["greedy", "beam4"])
@pytest.mark.parametrize("use_cache", [True, False])
def test_decoded_shapes_attention_and_padding(eos_model, kind, use_cache):
    model, src = eos_model
    B, S = src.shape
    out = decode(kind, model, src, use_cache, max_len=12)
    assert isinstance(out, Decoded)
    assert out.tokens.dtype == np.int64 and out.tokens.ndim == 2
    assert out.tokens.shape[0] == B and 1 <= out.tokens.shape[1] <= 12
    L = out.tokens.shape[1]
    if kind == "greedy":
        assert out.scores is None
    else:
        assert out.scores.shape == (B,) and np.isfinite(out.scores).all()
    assert len(out.cross_attention) == NUM_LAYERS
    pad = src == PAD
    valid = valid_positions(out.tokens)
    for att in out.cross_attention:
        assert isinstance(att, np.ndarray) and att.shape == (B, HEADS, L, S)
        assert (att >= 0).all()
        # padded source positions get no attention, the real ones share all of it
        assert np.abs(att * pad[:, None, None, :]).max() == 0
        sums = att.sum(-1)  # (B, H, L)
        np.testing.assert_allclose(sums.transpose(0, 2, 1)[valid], 1.0, atol=1e-6)
    # nothing but padding after <eos>, no padding before it, <bos> never output after step 1
    tokens = out.tokens
    for row, ok in zip(tokens, valid):
        assert (row[~ok] == PAD).all()
        assert (row[ok] != PAD).all()
        assert (row == EOS).sum() <= 1


@pytest.mark.parametrize("kind", ["greedy", "beam4"])
def test_decoding_stops_when_every_sequence_has_ended(copy_task, kind):
    src = copy_task.test_src[:5]
    out = decode(kind, copy_task.model, src, True, max_len=15)
    ended = (out.tokens == EOS).any(1)
    assert ended.all()  # the copy model ends every copy (about 11 tokens), well before 15
    last = valid_positions(out.tokens).sum(1).max()  # where the longest output ends
    L = out.tokens.shape[1]
    # not one step more (the other hypotheses of a beam may run on, but are not returned)
    assert L == last
    assert (out.tokens[:, last:] == PAD).all()
    assert all(a.shape == (5, 4, L, COPY_LEN) for a in out.cross_attention)


@pytest.mark.parametrize("kind", ["greedy", "beam4"])
@pytest.mark.parametrize("training", [True, False])
def test_decoding_runs_in_eval_mode_and_restores_training(random_models, kind, training):
    model, src = random_models[0]
    seen = []

    def record(module, args, out):
        seen.append((module.training, mg.is_grad_enabled()))

    hooks = [m.register_forward_hook(record)
             for m in (model.transformer.encoder, model.transformer.decoder.layers[0])]
    try:
        model.train(training)
        decode(kind, model, src, True, max_len=4)
    finally:
        for h in hooks:
            h.remove()
    assert seen and not any(t for t, _ in seen)  # dropout was off while decoding
    assert not any(g for _, g in seen)  # and no graph was recorded
    assert mg.is_grad_enabled()
    assert model.training is training
    assert all(m.training is training for m in model.modules())
    # restored even when decoding fails half-way (a source longer than the positional table)
    too_long = np.full((1, MAX_LEN + 1), 5)
    with pytest.raises(ValueError, match="max_len"):
        decode(kind, model, too_long, True, max_len=4)
    assert model.training is training
    model.eval()


def test_decoding_is_deterministic_for_a_model_left_in_training_mode(random_models):
    model, src = random_models[1]
    model.train()
    try:
        first = greedy_decode(model, src, max_len=8)
        second = greedy_decode(model, src, max_len=8)
    finally:
        model.eval()
    assert np.array_equal(first.tokens, second.tokens)


@pytest.mark.parametrize("decoder", [greedy_decode, beam_search])
def test_max_len_beyond_the_models_max_len_errors_clearly(random_models, decoder):
    model, src = random_models[0]
    with pytest.raises(ValueError, match="max_len"):
        decoder(model, src, max_len=MAX_LEN + 1)
    with pytest.raises(ValueError, match="max_len"):
        decoder(model, src, max_len=0)
    with pytest.raises(ValueError, match=r"\(B, S\)"):
        decoder(model, src[0], max_len=4)


@pytest.mark.parametrize("decoder", [greedy_decode, beam_search])
def test_max_len_equal_to_the_models_max_len_is_allowed(random_models, decoder):
    """A model built with max_len=16 has positions 0..15: <bos> and 15 generated tokens are fed
    to the decoder, so 16 tokens can be generated (the 16th is never fed back)."""
    model, src = random_models[0]
    assert model.pos.max_len == MAX_LEN
    out = decoder(model, src, max_len=MAX_LEN)
    assert out.tokens.shape[1] <= MAX_LEN


def test_beam_search_rejects_beam_size_0(random_models):
    model, src = random_models[0]
    with pytest.raises(ValueError, match="beam_size"):
        beam_search(model, src, beam_size=0, max_len=4)


# --- beam search finds likelier outputs -----------------------------------------------------

def test_beam_scores_are_the_models_log_probabilities(eos_model, copy_task):
    for model, src, max_len in ((*eos_model, 12), (copy_task.model, copy_task.test_src[:10],
                                                   COPY_LEN + 1)):
        for alpha in (0.0, 0.6):
            out = beam_search(model, src, beam_size=4, max_len=max_len, alpha=alpha)
            lengths = valid_positions(out.tokens).sum(1)
            expected = sequence_logprob(model, src, out.tokens) / length_penalty(lengths, alpha)
            np.testing.assert_allclose(out.scores, expected, rtol=1e-4, atol=1e-4)


def copy_inputs(copy_task):
    """The 50 unseen length-10 sequences, shorter padded ones and longer ones (length 15): the
    model never saw either length in training and is less sure of itself on the long ones."""
    rng = np.random.default_rng(7)
    short = rng.integers(3, VOCAB, (20, COPY_LEN))
    for i, n in enumerate(rng.integers(4, 9, 20)):
        short[i, n:] = PAD
    long = rng.integers(3, VOCAB, (20, 15))
    return [copy_task.test_src, short, long]


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_beam_4_scores_at_least_as_well_as_greedy_on_the_copy_model(copy_task, copy_model,
                                                                    alpha):
    model, improved = copy_model, 0
    for src in copy_inputs(copy_task):
        greedy = greedy_decode(model, src, max_len=15)
        beam = beam_search(model, src, beam_size=4, max_len=15, alpha=alpha)
        g_lp = sequence_logprob(model, src, greedy.tokens)
        b_lp = sequence_logprob(model, src, beam.tokens)
        g_len = valid_positions(greedy.tokens).sum(1)
        b_len = valid_positions(beam.tokens).sum(1)
        # beam search's objective: log-probability over the length penalty
        g_obj, b_obj = g_lp / length_penalty(g_len, alpha), b_lp / length_penalty(b_len, alpha)
        # beam search is a heuristic: it can prune the greedy path and end worse on a single
        # sentence, but not on average and only rarely
        assert b_obj.mean() >= g_obj.mean() - 1e-4
        assert (b_obj >= g_obj - 1e-4).mean() >= 0.9, np.argwhere(b_obj < g_obj - 1e-4)
        if alpha == 0.0:  # then the objective is the log-probability itself
            assert b_lp.mean() >= g_lp.mean() - 1e-4
        improved += int((b_obj > g_obj + 1e-3).sum())
    if model is not copy_task.model:  # the hesitant model: the search must find better outputs
        assert improved >= 5


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_top_k_equals_a_stable_sort_cut_to_k(data):
    """Beam search's partition-based top-k picks what a full stable sort would, ties included."""
    from minigrad.models.beam import _top_k

    rows = data.draw(st.integers(1, 4))
    n = data.draw(st.integers(1, 30))
    k = data.draw(st.integers(1, n + 2))
    # few distinct values (and -inf) so that ties across the k-th place are common
    values = st.sampled_from([-np.inf, -2.0, -1.0, -0.5, 0.0, 3.0])
    x = np.array(data.draw(st.lists(st.lists(values, min_size=n, max_size=n),
                                    min_size=rows, max_size=rows)))
    expected = np.argsort(-x, axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(_top_k(x, k), expected)
