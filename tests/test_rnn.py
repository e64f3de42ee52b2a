"""Recurrent layers (`minigrad.nn.rnn`) and attention scores (`minigrad.nn.scores`).

Float64 gradchecks for every cell, a 2-layer bidirectional GRU (with padding), every score,
`attend` and the diversity regulariser; PyTorch's parameter names, shapes and outputs (the
output checks skip without torch); the padding mask behaving like packed sequences.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn.rnn import GRU, RNN, GRUCell, RNNCell
from minigrad.nn.scores import (AdditiveScore, BilinearScore, DotScore, ScaledDotScore, attend,
                                diversity_penalty, make_score)


def rand(*shape, seed=0, grad=True):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape), requires_grad=grad)


def check_module_grads(module, fn, inputs):
    """gradcheck `fn` with respect to the inputs AND every parameter of `module` (float64)."""
    params = list(module.parameters())
    assert params and all(p.dtype == np.float64 for p in params)
    assert gradcheck(lambda *args: fn(*args[:len(inputs)]), list(inputs) + params)


def flat(*tensors):
    return mg.cat([t.reshape(-1) for t in tensors])


# --- gradchecks ---------------------------------------------------------------------------------

@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_cell_gradcheck(nonlinearity):
    mg.manual_seed(0)
    cell = RNNCell(3, 4, nonlinearity=nonlinearity).double()
    check_module_grads(cell, cell, [rand(2, 3), rand(2, 4, seed=1)])


@pytest.mark.parametrize("bias", [True, False])
def test_gru_cell_gradcheck(bias):
    mg.manual_seed(0)
    cell = GRUCell(3, 4, bias=bias).double()
    check_module_grads(cell, cell, [rand(2, 3), rand(2, 4, seed=1)])
    check_module_grads(cell, cell, [rand(3, seed=2)])  # unbatched, zero initial state


def test_gru_two_layers_bidirectional_gradcheck_with_padding():
    mg.manual_seed(0)
    gru = GRU(3, 2, num_layers=2, bidirectional=True, batch_first=True).double()
    mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1], [1, 0, 0, 0]], dtype=bool)
    for m in (None, mask):
        check_module_grads(gru, lambda x, h0: flat(*gru(x, h0, mask=m)),
                           [rand(3, 4, 3), rand(4, 3, 2, seed=1)])


# --- PyTorch's names, shapes, initialisation and outputs ------------------------------------

def test_gru_parameter_names_and_shapes_are_pytorchs():
    gru = GRU(5, 4, num_layers=2, bidirectional=True)
    expected = []
    for layer, d_in in ((0, 5), (1, 8)):
        for sfx in ("", "_reverse"):
            expected += [(f"weight_ih_l{layer}{sfx}", (12, d_in)),
                         (f"weight_hh_l{layer}{sfx}", (12, 4)),
                         (f"bias_ih_l{layer}{sfx}", (12,)), (f"bias_hh_l{layer}{sfx}", (12,))]
    assert [(k, tuple(p.shape)) for k, p in gru.named_parameters()] == expected
    cell = GRUCell(5, 4)
    assert [(k, tuple(p.shape)) for k, p in cell.named_parameters()] == [
        ("weight_ih", (12, 5)), ("weight_hh", (12, 4)), ("bias_ih", (12,)), ("bias_hh", (12,))]
    assert [k for k, _ in GRU(5, 4, bias=False).named_parameters()] == ["weight_ih_l0",
                                                                         "weight_hh_l0"]


def test_parameter_list_matches_torch():
    torch = pytest.importorskip("torch")
    mine = [(k, tuple(p.shape)) for k, p in
            GRU(5, 4, num_layers=2, bidirectional=True).named_parameters()]
    theirs = [(k, tuple(p.shape)) for k, p in
              torch.nn.GRU(5, 4, num_layers=2, bidirectional=True).named_parameters()]
    assert mine == theirs


def test_initialisation_is_uniform_within_one_over_sqrt_hidden():
    mg.manual_seed(0)
    bound = 1 / math.sqrt(16)
    for m in (GRU(8, 16, num_layers=2), GRUCell(8, 16), RNNCell(8, 16)):
        values = np.concatenate([p.numpy().ravel() for p in m.parameters()])
        assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound
        assert abs(values.mean()) < 0.02


def _torch_copy(torch, module, torch_module):
    torch_module.load_state_dict({k: torch.tensor(v.numpy()) for k, v in module.state_dict().items()})
    return torch_module.double()


@pytest.mark.parametrize("cls,tcls,kw", [(GRUCell, "GRUCell", {}), (RNNCell, "RNNCell", {}),
                                         (RNNCell, "RNNCell", {"nonlinearity": "relu"})])
def test_cells_match_torch(cls, tcls, kw):
    torch = pytest.importorskip("torch")
    mg.manual_seed(1)
    cell = cls(5, 4, **kw).double()
    tcell = _torch_copy(torch, cell, getattr(torch.nn, tcls)(5, 4, **kw))
    x, h = rand(3, 5, grad=False), rand(3, 4, seed=1, grad=False)
    expected = tcell(torch.tensor(x.numpy()), torch.tensor(h.numpy())).detach().numpy()
    np.testing.assert_allclose(cell(x, h).numpy(), expected, atol=1e-12)


@pytest.mark.parametrize("batch_first", [False, True])
def test_gru_matches_torch(batch_first):
    torch = pytest.importorskip("torch")
    mg.manual_seed(2)
    kw = dict(num_layers=2, bidirectional=True, batch_first=batch_first)
    gru = GRU(5, 4, **kw).double()
    tgru = _torch_copy(torch, gru, torch.nn.GRU(5, 4, **kw))
    x = rand(3, 6, 5, grad=False)  # B = 3, T = 6 in the layout `batch_first` names
    x = x if batch_first else x.transpose(0, 1)
    h0 = rand(4, 3, 4, seed=1, grad=False)
    out, h_n = gru(x, h0)
    t_out, t_h = tgru(torch.tensor(x.numpy()), torch.tensor(h0.numpy()))
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), t_h.detach().numpy(), atol=1e-12)


def test_gru_mask_matches_torch_packed_sequences():
    torch = pytest.importorskip("torch")
    mg.manual_seed(3)
    gru = GRU(5, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    tgru = _torch_copy(torch, gru, torch.nn.GRU(5, 4, num_layers=2, bidirectional=True,
                                                batch_first=True))
    x, lengths = rand(3, 6, 5, grad=False), np.array([6, 2, 4])
    out, h_n = gru(x, lengths=lengths)
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x.numpy()), torch.tensor(lengths),
                                                     batch_first=True, enforce_sorted=False)
    t_out, t_h = tgru(packed)
    t_out, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out, batch_first=True, total_length=6)
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n.numpy(), t_h.detach().numpy(), atol=1e-12)


def test_rnn_layer_matches_torch():
    torch = pytest.importorskip("torch")
    mg.manual_seed(4)
    rnn = RNN(5, 4, nonlinearity="relu", bidirectional=True).double()
    trnn = _torch_copy(torch, rnn, torch.nn.RNN(5, 4, nonlinearity="relu", bidirectional=True))
    x = rand(6, 2, 5, grad=False)
    np.testing.assert_allclose(rnn(x)[0].numpy(), trnn(torch.tensor(x.numpy()))[0].detach().numpy(),
                               atol=1e-12)


# --- behaviour without a reference ----------------------------------------------------------

def test_gru_layer_equals_its_cells_step_by_step():
    mg.manual_seed(5)
    gru, cell = GRU(3, 4).double(), GRUCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in gru.state_dict().items()})  # drop "_l0"
    x = rand(5, 2, 3, grad=False)
    h = mg.zeros(2, 4, dtype=mg.float64)
    out, h_n = gru(x)
    for t in range(5):
        h = cell(x[t], h)
        np.testing.assert_allclose(out.numpy()[t], h.numpy(), atol=1e-12)
    np.testing.assert_allclose(h_n.numpy()[0], h.numpy(), atol=1e-12)


def test_padding_is_skipped_like_a_shorter_sequence():
    """Each padded sequence gives the outputs and final states it gives alone, unpadded."""
    mg.manual_seed(6)
    gru = GRU(3, 4, bidirectional=True, batch_first=True).double()
    x = rand(2, 5, 3, grad=False)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=bool)
    out, h_n = gru(x, mask=mask)
    alone, alone_h = gru(x[:1, :3])
    np.testing.assert_allclose(out.numpy()[0, :3], alone.numpy()[0], atol=1e-12)
    assert np.all(out.numpy()[0, 3:] == 0)
    np.testing.assert_allclose(h_n.numpy()[:, 0], alone_h.numpy()[:, 0], atol=1e-12)


def test_batch_first_and_unbatched_inputs_agree():
    mg.manual_seed(7)
    gru = GRU(3, 4, num_layers=2).double()
    x = rand(5, 2, 3, grad=False)
    out, h_n = gru(x)
    gru.batch_first = True
    out_bf, h_bf = gru(x.transpose(0, 1))
    np.testing.assert_allclose(out_bf.numpy(), out.numpy().transpose(1, 0, 2), atol=1e-12)
    np.testing.assert_allclose(h_bf.numpy(), h_n.numpy(), atol=1e-12)
    out_1, h_1 = gru(x[:, 0])  # unbatched (T, D)
    np.testing.assert_allclose(out_1.numpy(), out.numpy()[:, 0], atol=1e-12)
    np.testing.assert_allclose(h_1.numpy(), h_n.numpy()[:, 0], atol=1e-12)


def test_dropout_between_layers_only_while_training():
    mg.manual_seed(8)
    gru = GRU(3, 4, num_layers=2, dropout=0.5)
    x = mg.randn(6, 2, 3)
    a, b = gru(x)[0].numpy(), gru(x)[0].numpy()
    assert not np.allclose(a, b)
    gru.eval()
    np.testing.assert_array_equal(gru(x)[0].numpy(), gru(x)[0].numpy())


def test_shape_errors_name_the_problem():
    gru = GRU(3, 4)
    with pytest.raises(RuntimeError, match=r"GRU: input.size\(-1\) must be equal to input_size. "
                                           r"Expected 3, got 7"):
        gru(mg.randn(5, 2, 7))
    with pytest.raises(RuntimeError, match=r"GRU: Expected hidden size \(1, 2, 4\), got \[2, 2, 4\]"):
        gru(mg.randn(5, 2, 3), mg.randn(2, 2, 4))
    with pytest.raises(ValueError, match=r"GRU: mask must have shape \(batch, time\) = \(2, 5\)"):
        gru(mg.randn(5, 2, 3), mask=np.ones((5, 2), bool))
    with pytest.raises(ValueError, match="nonlinearity"):
        RNNCell(3, 4, nonlinearity="sigmoid")


# --- attention scores ---------------------------------------------------------------------------

def _scores():
    mg.manual_seed(9)
    return [DotScore(), ScaledDotScore(), BilinearScore(4, 4).double(),
            AdditiveScore(4, 4, attn_dim=3).double()]


def _reference_scores(module, s, h):
    """The formulas in NumPy: s (B, L, D), h (B, S, D) -> (B, L, S)."""
    if isinstance(module, ScaledDotScore):
        return np.einsum("bld,bsd->bls", s, h) / math.sqrt(s.shape[-1])
    if isinstance(module, DotScore):
        return np.einsum("bld,bsd->bls", s, h)
    if isinstance(module, BilinearScore):
        return np.einsum("bld,de,bse->bls", s, module.W.weight.numpy(), h)
    W, U, b, v = (module.W.weight.numpy(), module.U.weight.numpy(), module.U.bias.numpy(),
                  module.v.numpy())
    hidden = np.tanh((s @ W.T)[:, :, None] + (h @ U.T + b)[:, None])
    return hidden @ v


@pytest.mark.parametrize("index", range(4), ids=["dot", "scaled_dot", "bilinear", "additive"])
def test_score_formulas_shapes_and_gradcheck(index):
    score = _scores()[index]
    h, s3, s2 = rand(2, 5, 4), rand(2, 3, 4, seed=1), rand(2, 4, seed=2)
    np.testing.assert_allclose(score(s3, h).numpy(), _reference_scores(score, s3.numpy(), h.numpy()),
                               atol=1e-12)
    assert score(s2, h).shape == (2, 5)
    np.testing.assert_allclose(score(s2, h).numpy(), score(s2.unsqueeze(1), h).numpy()[:, 0])
    # prepared keys give the same scores: a decoder prepares them once per source sentence
    np.testing.assert_allclose(score.score(s3, score.prepare_keys(h)).numpy(), score(s3, h).numpy())
    inputs = [s3, h] + list(score.parameters())
    assert gradcheck(lambda s, k, *p: score(s, k), inputs)
    assert gradcheck(lambda s, k, *p: score(s, k), [s2, h] + list(score.parameters()))


def test_make_score_builds_each_and_checks_dims():
    for name, cls in [("dot", DotScore), ("scaled_dot", ScaledDotScore),
                      ("bilinear", BilinearScore), ("additive", AdditiveScore)]:
        assert type(make_score(name, 6, 6)) is cls
    assert make_score("bilinear", 6, 8)(mg.randn(2, 6), mg.randn(2, 3, 8)).shape == (2, 3)
    with pytest.raises(ValueError, match="query_dim == key_dim"):
        make_score("dot", 6, 8)
    with pytest.raises(ValueError, match="unknown score"):
        make_score("cosine", 6, 6)


def test_attend_gradcheck_masking_and_fully_masked_rows():
    scores, values = rand(2, 3, 5), rand(2, 5, 4, seed=1)
    mask = np.array([[1, 1, 0, 1, 0], [0, 0, 0, 0, 0]], dtype=bool)
    context, weights = attend(scores, values, mask)
    assert context.shape == (2, 3, 4) and weights.shape == (2, 3, 5)
    np.testing.assert_allclose(weights.numpy()[0].sum(-1), 1.0)
    assert np.all(weights.numpy()[0][:, ~mask[0]] == 0)
    assert np.all(weights.numpy()[1] == 0) and np.all(context.numpy()[1] == 0)  # zeros, not NaN
    assert gradcheck(lambda s, v: attend(s, v, mask)[0], [scores, values])
    c2, w2 = attend(scores[:, 0], values, mask)  # one query per batch row: (B, S) scores
    np.testing.assert_allclose(c2.numpy(), context.numpy()[:, 0], atol=1e-12)
    assert gradcheck(lambda s, v: flat(*attend(s, v)), [rand(2, 5, seed=2), values])


def test_diversity_penalty_values_and_gradcheck():
    one_hot = np.eye(3, 5)  # three heads on three different keys: orthonormal rows
    assert diversity_penalty(mg.tensor(one_hot)).item() == pytest.approx(0.0)
    same = np.full((2, 4), 0.25)  # two heads, both uniform over 4 keys: A A^T = all 1/4
    assert diversity_penalty(mg.tensor(same)).item() == pytest.approx(2 * 0.75 ** 2 + 2 * 0.25 ** 2)
    batch = np.stack([one_hot, np.full((3, 5), 0.2)])
    expected = (0.0 + 3 * 0.8 ** 2 + 6 * 0.2 ** 2) / 2  # mean over the batch
    assert diversity_penalty(mg.tensor(batch)).item() == pytest.approx(expected)
    A = mg.tensor(np.random.default_rng(0).random((2, 3, 5)), requires_grad=True)
    assert gradcheck(diversity_penalty, [A])
    heads = rand(2, 3, 4, 5).softmax(-1)  # (B, H, L, S) from multi-head attention
    assert diversity_penalty(heads.transpose(1, 2)).shape == ()
