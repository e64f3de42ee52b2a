"""Relative position representations and the diversity regulariser as options of
MultiheadAttention and the Transformer: gradients, leak tests, cached decoding."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.autograd import gradcheck
from minigrad.models import Seq2SeqTransformer, greedy_decode
from minigrad.nn.scores import diversity_penalty


def _mha(**kw):
    mg.manual_seed(0)
    return nn.MultiheadAttention(8, 2, batch_first=True, **kw).double()


def test_relative_mha_gradcheck():
    m = _mha(relative_positions=2)
    x = mg.randn(2, 5, 8, dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda x, rk, rv: m(x, x, x, is_causal=True)[0], [x, m.rel_k, m.rel_v])


def test_relative_tables_clip_distances():
    m = _mha(relative_positions=2)
    rk, _ = m._relative_tables(4, 4)
    # distance j - i = 3 is clipped to 2, the last row of the table
    assert np.allclose(rk.numpy()[0, 3], m.rel_k.numpy()[4])
    assert np.allclose(rk.numpy()[3, 0], m.rel_k.numpy()[0])
    assert np.allclose(rk.numpy()[1, 1], m.rel_k.numpy()[2])


def test_relative_mha_is_not_permutation_equivariant():
    m = _mha(relative_positions=3)
    x = mg.randn(1, 5, 8, dtype=mg.float64)
    perm = [4, 2, 0, 1, 3]
    out = m(x, x, x)[0].numpy()
    out_p = m(x[:, perm], x[:, perm], x[:, perm])[0].numpy()
    assert not np.allclose(out[:, perm], out_p)
    plain = _mha()
    assert np.allclose(plain(x, x, x)[0].numpy()[:, perm], plain(x[:, perm], x[:, perm], x[:, perm])[0].numpy())


def test_relative_causal_leak():
    m = _mha(relative_positions=2)
    x = mg.randn(1, 6, 8, dtype=mg.float64)
    y = x.numpy().copy()
    y[:, 4:] += 1.0
    a = m(x, x, x, is_causal=True)[0].numpy()
    b = m(mg.tensor(y), mg.tensor(y), mg.tensor(y), is_causal=True)[0].numpy()
    assert np.allclose(a[:, :4], b[:, :4])
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_relative_padding_leak():
    m = _mha(relative_positions=2)
    x = mg.randn(2, 6, 8, dtype=mg.float64)
    pad = np.zeros((2, 6), bool)
    pad[1, 4:] = True
    y = x.numpy().copy()
    y[1, 4:] = 7.0
    a = m(x, x, x, key_padding_mask=pad)[0].numpy()
    b = m(mg.tensor(y), mg.tensor(y), mg.tensor(y), key_padding_mask=pad)[0].numpy()
    assert np.allclose(a[:, :4], b[:, :4])
    assert np.allclose(a[0], b[0])


def test_relative_cached_decoding_matches_full_decoding():
    mg.manual_seed(1)
    model = Seq2SeqTransformer(15, 15, d_model=16, nhead=2, num_encoder_layers=1,
                               num_decoder_layers=2, dim_feedforward=32, dropout=0.0,
                               relative_positions=3)
    src = np.random.default_rng(0).integers(3, 15, (3, 7))
    a = greedy_decode(model, src, max_len=9, use_cache=True)
    b = greedy_decode(model, src, max_len=9, use_cache=False)
    assert (a.tokens == b.tokens).all()
    for x, y in zip(a.cross_attention, b.cross_attention):
        assert np.allclose(x, y, atol=1e-5)


def test_relative_transformer_leaks_and_learns():
    mg.manual_seed(2)
    model = Seq2SeqTransformer(12, 12, d_model=16, nhead=2, num_encoder_layers=1,
                               num_decoder_layers=1, dim_feedforward=32, dropout=0.0,
                               relative_positions=2)
    rng = np.random.default_rng(0)
    src = rng.integers(3, 12, (4, 6))
    tgt = rng.integers(3, 12, (4, 6))
    logits = model(src, tgt).numpy()
    tgt2 = tgt.copy()
    tgt2[:, 3:] = rng.integers(3, 12, (4, 3))
    assert np.allclose(logits[:, :3], model(src, tgt2).numpy()[:, :3], atol=1e-6)
    names = [n for n, _ in model.named_parameters()]
    assert "transformer.encoder.layers.0.self_attn.rel_k" in names
    assert "transformer.decoder.layers.0.multihead_attn.rel_k" not in names


def test_diversity_penalty_values_and_gradcheck():
    # two heads on disjoint single keys: A A^T = I, no penalty
    A = mg.tensor(np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]))
    assert diversity_penalty(A).item() == pytest.approx(0.0)
    # two identical uniform heads: A A^T = [[1/3, 1/3], [1/3, 1/3]] -> 2 (2/3)^2 + 2 (1/3)^2
    B = mg.tensor(np.full((2, 3), 1 / 3))
    assert diversity_penalty(B).item() == pytest.approx(2 * (2 / 3) ** 2 + 2 * (1 / 3) ** 2)
    m = _mha(diversity=True)
    x = mg.randn(2, 4, 8, dtype=mg.float64, requires_grad=True)

    def f(x):
        m(x, x, x)
        return m.diversity_penalty

    assert gradcheck(f, [x])


def test_diversity_penalty_training_pushes_heads_apart():
    m = _mha(diversity=True)
    from minigrad import optim
    opt = optim.Adam(m.parameters(), lr=0.05)
    x = mg.randn(4, 6, 8, dtype=mg.float64)
    m(x, x, x)
    first = m.diversity_penalty.item()
    for _ in range(60):
        m(x, x, x)
        opt.zero_grad()
        m.diversity_penalty.backward()
        opt.step()
    m(x, x, x)
    assert m.diversity_penalty.item() < 0.5 * first
