"""`Seq2SeqRNN`: shapes, padding never leaks, greedy decoding, a float64 gradcheck, and
learning to reverse sequences, where attention beats the single context vector."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.models.rnn_seq2seq import Seq2SeqRNN, build_seq2seq_rnn
from minigrad.optim import Adam

PAD, BOS, EOS = 0, 1, 2
ATTENTIONS = [None, "dot", "scaled_dot", "bilinear", "additive"]


def reversal_batch(rng, batch, lengths, vocab):
    """Random words 3..vocab-1 of a random length in `lengths` (inclusive), right-padded;
    the target is the source reversed -> (src (B, S), tgt_in (B, S+1), tgt_out (B, S+1))."""
    n = rng.integers(lengths[0], lengths[1] + 1, batch)
    S = n.max()
    src, tgt_in, tgt_out = (np.full((batch, S + k), PAD, np.int64) for k in (0, 1, 1))
    for b in range(batch):
        words = rng.integers(3, vocab, n[b])
        src[b, :n[b]] = words
        tgt_in[b, :n[b] + 1] = [BOS, *words[::-1]]
        tgt_out[b, :n[b] + 1] = [*words[::-1], EOS]
    return src, tgt_in, tgt_out


def train_reversal(attention, lengths, steps, seed=0, vocab=12, lr=1e-2):
    """Train on fresh batches; returns (model, first-10-step mean loss, held-out loss)."""
    mg.manual_seed(seed)
    model = Seq2SeqRNN(vocab, vocab, emb_dim=16, hidden=32, attention=attention)
    opt = Adam(model.parameters(), lr=lr)
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(steps):
        loss = model.loss(*reversal_batch(rng, 32, lengths, vocab))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with mg.no_grad():
        held_out = model.loss(*reversal_batch(np.random.default_rng(1000 + seed), 200, lengths,
                                              vocab)).item()
    return model, float(np.mean(losses[:10])), held_out


def exact_match(model, lengths, vocab=12, n=200):
    src, _, tgt_out = reversal_batch(np.random.default_rng(2000), n, lengths, vocab)
    tokens, _ = model.greedy_decode(src, max_len=tgt_out.shape[1], bos_id=BOS, eos_id=EOS)
    hits = [np.array_equal(tokens[b, :(tgt_out[b] != PAD).sum()], tgt_out[b][tgt_out[b] != PAD])
            for b in range(n)]
    return float(np.mean(hits))


# --- shapes, padding, decoding --------------------------------------------------------------

@pytest.mark.parametrize("attention", ATTENTIONS)
def test_shapes_and_attention_weights(attention):
    mg.manual_seed(0)
    model = Seq2SeqRNN(9, 11, emb_dim=8, hidden=6, attention=attention)
    src, tgt_in, _ = reversal_batch(np.random.default_rng(0), 4, (2, 5), 9)
    logits, weights = model(src, tgt_in, return_attention=True)
    assert logits.shape == (4, tgt_in.shape[1], 11)
    if attention is None:
        assert weights is None
    else:
        assert weights.shape == (4, tgt_in.shape[1], src.shape[1])
        np.testing.assert_allclose(weights.numpy().sum(-1), 1.0, rtol=1e-5)
        assert np.all(weights.numpy()[np.broadcast_to((src == PAD)[:, None], weights.shape)] == 0)


@pytest.mark.parametrize("attention", ATTENTIONS)
def test_padding_tokens_do_not_leak(attention):
    """Whatever sits in the padded source positions, the decoder's outputs are the same."""
    mg.manual_seed(1)
    model = Seq2SeqRNN(9, 9, emb_dim=8, hidden=6, attention=attention)
    model.eval()
    src, tgt_in, _ = reversal_batch(np.random.default_rng(1), 4, (2, 6), 9)
    pad = src == PAD
    assert pad.any()
    with mg.no_grad():
        before = model(src, tgt_in).numpy()
        # swap the padding embedding for a random vector: if padded steps were read at all,
        # the outputs would move (changing the ids would only change the mask)
        model.src_embed.weight.numpy()[PAD] = np.random.default_rng(2).standard_normal(8)
        after = model(src, tgt_in).numpy()
    np.testing.assert_allclose(before, after, rtol=0, atol=1e-6)
    # and a longer padded tail changes nothing either
    wider = np.concatenate([src, np.full((4, 3), PAD)], axis=1)
    with mg.no_grad():
        np.testing.assert_allclose(model(wider, tgt_in).numpy(), after, atol=1e-6)


def test_decoder_is_causal():
    mg.manual_seed(2)
    model = Seq2SeqRNN(9, 9, emb_dim=8, hidden=6, attention="additive").eval()
    src, tgt_in, _ = reversal_batch(np.random.default_rng(3), 3, (4, 4), 9)
    changed = tgt_in.copy()
    changed[:, 3:] = 5
    with mg.no_grad():
        np.testing.assert_allclose(model(src, tgt_in).numpy()[:, :3],
                                   model(src, changed).numpy()[:, :3], rtol=0, atol=1e-6)


@pytest.mark.parametrize("attention", [None, "bilinear"])
def test_greedy_decode_matches_teacher_forcing_on_its_own_output(attention):
    mg.manual_seed(3)
    model = Seq2SeqRNN(9, 9, emb_dim=8, hidden=6, attention=attention)
    src, _, _ = reversal_batch(np.random.default_rng(4), 5, (2, 6), 9)
    tokens, weights = model.greedy_decode(src, max_len=7, bos_id=BOS, eos_id=EOS)
    assert model.training  # restored
    assert tokens.dtype == np.int64 and tokens.shape[0] == 5 and 1 <= tokens.shape[1] <= 7
    assert (weights is None) == (attention is None)
    model.eval()
    with mg.no_grad():
        logits, tf_weights = model(src, np.concatenate([np.full((5, 1), BOS), tokens[:, :-1]], 1),
                                   return_attention=True)
    for b in range(5):  # each row, up to its <eos>, is the argmax of teacher forcing on itself
        n = tokens.shape[1]
        if (tokens[b] == EOS).any():
            n = int(np.argmax(tokens[b] == EOS)) + 1
            assert np.all(tokens[b, n:] == PAD)
        scores = logits.numpy()[b, :n].copy()
        scores[:, PAD] = -np.inf
        np.testing.assert_array_equal(tokens[b, :n], scores.argmax(-1))
        if weights is not None:
            np.testing.assert_allclose(weights[b, :n], tf_weights.numpy()[b, :n], atol=1e-6)


def test_factory_and_errors():
    assert build_seq2seq_rnn("rnn", 7, 8).score is None
    model = build_seq2seq_rnn("rnn-attention", 7, 8, hidden=16, dropout=0.1)
    assert model.attention == "additive" and model.hidden == 16
    assert build_seq2seq_rnn("rnn-attention", 7, 8, attention="dot").attention == "dot"
    with pytest.raises(ValueError, match="arch must be one of"):
        build_seq2seq_rnn("lstm", 7, 8)
    with pytest.raises(ValueError, match="has no attention"):
        build_seq2seq_rnn("rnn", 7, 8, attention="dot")
    with pytest.raises(ValueError, match="attention must be None or one of"):
        Seq2SeqRNN(7, 8, attention="cosine")
    with pytest.raises(ValueError, match="must be even"):
        Seq2SeqRNN(7, 8, hidden=7)
    no_bi = Seq2SeqRNN(7, 8, hidden=7, bidirectional_encoder=False, attention="dot")
    assert no_bi(np.array([[3, 4, 0]]), np.array([[1, 5]])).shape == (1, 2, 8)


@pytest.mark.parametrize("attention", [None, "additive"])
def test_whole_model_gradcheck_float64(attention):
    mg.manual_seed(4)
    model = Seq2SeqRNN(5, 5, emb_dim=3, hidden=4, attention=attention).double()
    src = np.array([[3, 4, 3], [4, 0, 0]])
    tgt_in, tgt_out = np.array([[1, 3, 4], [1, 4, 0]]), np.array([[3, 4, 2], [4, 2, 0]])
    params = list(model.parameters())
    assert gradcheck(lambda *p: model.loss(src, tgt_in, tgt_out), params)


# --- learning -------------------------------------------------------------------------------

def test_attention_model_learns_to_reverse_short_sequences():
    model, first, held_out = train_reversal("additive", (3, 6), steps=150)
    assert first > 2.0 and held_out < 0.3, (first, held_out)
    assert exact_match(model, (3, 6)) > 0.6


def test_attention_beats_the_single_context_vector_on_longer_sequences():
    """Reversing 8-10 words: one vector c must hold the whole sentence, attention need not."""
    _, first_c, held_c = train_reversal(None, (8, 10), steps=150)
    _, first_a, held_a = train_reversal("dot", (8, 10), steps=150)
    assert held_c < 0.6 * first_c and held_a < 0.2 * first_a  # both learn something ...
    assert held_a < 0.4 * held_c, (held_a, held_c)  # ... attention far more
