"""`nn.LSTM`, `nn.LSTMCell` and the recurrent layers' PyTorch parity.

State dicts go both ways between minigrad's and PyTorch's layers, and the two then agree on
outputs, final states and the gradients of the inputs and of every parameter, for several
layers, both directions, batch_first, given (h_0, c_0), proj_size and packed sequences of
different lengths. Float64 gradchecks of the fused gates, the cell and the layer; PyTorch's
errors; dropout between layers only.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.nn import LSTM, RNN, LSTMCell
from minigrad.nn.rnn_steps import LSTMGates
from rnn_parity import assert_same, copy_into_minigrad, copy_into_torch

F64 = np.float64


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def rand(*shape, seed=0):
    return mg.tensor(randn(*shape, seed=seed), requires_grad=True)


def flat(*tensors):
    return mg.cat([t.reshape(-1) for t in tensors])


def lstm_call(lib, layer, x, h0=None, c0=None):
    out, (h, c) = layer(x) if h0 is None else layer(x, (h0, c0))
    return out, h, c


LSTM_CONFIGS = [
    dict(num_layers=2),
    dict(bidirectional=True, batch_first=True),
    dict(num_layers=2, bidirectional=True, proj_size=2),
    dict(num_layers=2, bias=False, batch_first=True, proj_size=3),
]


@pytest.mark.parametrize("kw", LSTM_CONFIGS,
                         ids=lambda kw: "-".join(f"{k}={v}" for k, v in kw.items()))
@pytest.mark.parametrize("given_state", [False, True])
def test_lstm_loads_torchs_state_dict_and_matches_it(torch, kw, given_state):
    torch.manual_seed(0)
    t_lstm = torch.nn.LSTM(3, 4, dtype=torch.float64, **kw)
    lstm = LSTM(3, 4, dtype=mg.float64, **kw)
    copy_into_minigrad(torch, t_lstm, lstm)
    T, B, L = 5, 2, kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    x = randn(B, T, 3) if kw.get("batch_first") else randn(T, B, 3)
    states = [randn(L, B, kw.get("proj_size") or 4, seed=1), randn(L, B, 4, seed=2)]
    assert_same(torch, lstm, t_lstm, lstm_call, [x] + (states if given_state else []))


def test_state_dict_goes_from_minigrad_to_torch(torch):
    mg.manual_seed(0)
    lstm = LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2, dtype=mg.float64)
    t_lstm = torch.nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2,
                           dtype=torch.float64)
    copy_into_torch(torch, lstm, t_lstm)
    assert [(k, tuple(p.shape)) for k, p in lstm.named_parameters()] == [
        (k, tuple(p.shape)) for k, p in t_lstm.named_parameters()]
    assert_same(torch, lstm, t_lstm, lstm_call, [randn(4, 3, 3)])


def test_unbatched_input_matches_torch(torch):
    t_lstm = torch.nn.LSTM(3, 4, num_layers=2, proj_size=2, dtype=torch.float64)
    lstm = LSTM(3, 4, num_layers=2, proj_size=2, dtype=mg.float64)
    copy_into_minigrad(torch, t_lstm, lstm)
    assert_same(torch, lstm, t_lstm, lstm_call, [randn(5, 3), randn(2, 2, seed=1),
                                                 randn(2, 4, seed=2)])


@pytest.mark.parametrize("cls,kw", [("LSTM", dict(num_layers=2, bidirectional=True, proj_size=2)),
                                    ("GRU", dict(num_layers=2, bidirectional=True)),
                                    ("RNN", dict(nonlinearity="relu", bidirectional=True))])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequences_match_torch(torch, cls, kw, enforce_sorted):
    """Packed output, final states at each sequence's own last step, and every gradient."""
    t_layer = getattr(torch.nn, cls)(3, 4, batch_first=True, dtype=torch.float64, **kw)
    layer = getattr(mg.nn, cls)(3, 4, batch_first=True, dtype=mg.float64, **kw)
    copy_into_minigrad(torch, t_layer, layer)
    lengths = np.array([6, 4, 4, 1]) if enforce_sorted else np.array([2, 6, 1, 4])
    L = layer.num_layers * layer.num_directions
    states = [randn(L, 4, kw.get("proj_size") or 4, seed=1)] + (
        [randn(L, 4, 4, seed=2)] if cls == "LSTM" else [])

    def call(lib, layer, x, *hx):
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_padded_sequence(x, lengths.tolist(), batch_first=True,
                                          enforce_sorted=enforce_sorted)
        out, h = layer(packed, tuple(hx) if cls == "LSTM" else hx[0])
        assert isinstance(out, rnn.PackedSequence)
        padded, out_lengths = rnn.pad_packed_sequence(out, batch_first=True, total_length=7)
        return out.data, padded, out_lengths, h

    assert_same(torch, layer, t_layer, call, [randn(4, 7, 3)] + states)


def test_lstm_cell_matches_torch(torch):
    t_cell = torch.nn.LSTMCell(3, 4, dtype=torch.float64)
    cell = LSTMCell(3, 4, dtype=mg.float64)
    copy_into_minigrad(torch, t_cell, cell)
    step = lambda lib, m, x, h, c: m(x, (h, c))  # noqa: E731
    assert_same(torch, cell, t_cell, step, [randn(2, 3), randn(2, 4, seed=1), randn(2, 4, seed=2)])
    assert_same(torch, cell, t_cell, step, [randn(3), randn(4, seed=1), randn(4, seed=2)])
    assert_same(torch, cell, t_cell, lambda lib, m, x: m(x), [randn(2, 3)])


# --- float64 gradchecks ---------------------------------------------------------------------------

def test_lstm_gates_gradcheck_with_and_without_padding():
    gi, gh, c = rand(3, 8), rand(3, 8, seed=1), rand(3, 2, seed=2)
    keep = np.array([[True], [False], [True]])
    for k in (None, keep):
        assert gradcheck(lambda a, b, s: LSTMGates.apply(a, b, s, keep=k), [gi, gh, c])
    out = LSTMGates.apply(gi, gh, c, keep=keep).numpy()
    np.testing.assert_array_equal(out[1, 2:], c.numpy()[1])  # a padded step keeps its cell


def check_module_grads(module, fn, inputs):
    params = list(module.parameters())
    assert params and all(p.dtype == F64 for p in params)
    assert gradcheck(lambda *args: fn(*args[:len(inputs)]), list(inputs) + params)


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_gradcheck(bias):
    mg.manual_seed(0)
    cell = LSTMCell(3, 2, bias=bias, dtype=mg.float64)
    check_module_grads(cell, lambda x, h, c: flat(*cell(x, (h, c))),
                       [rand(2, 3), rand(2, 2, seed=1), rand(2, 2, seed=2)])
    check_module_grads(cell, lambda x: flat(*cell(x)), [rand(3, seed=3)])


def test_lstm_layer_gradcheck_with_projection_and_padding():
    mg.manual_seed(0)
    lstm = LSTM(2, 2, num_layers=2, bidirectional=True, proj_size=1, batch_first=True,
                dtype=mg.float64)

    def fn(x, h, c):
        out, (h_n, c_n) = lstm(x, (h, c), lengths=np.array([3, 1]))
        return flat(out, h_n, c_n)
    check_module_grads(lstm, fn, [rand(2, 3, 2), rand(4, 2, 1, seed=1), rand(4, 2, 2, seed=2)])


@pytest.mark.parametrize("nonlinearity", ["tanh", "relu"])
def test_rnn_layer_gradcheck_on_packed_input(nonlinearity):
    mg.manual_seed(1)
    rnn = RNN(2, 3, num_layers=2, nonlinearity=nonlinearity, bidirectional=True,
              dtype=mg.float64)
    pack = mg.nn.utils.rnn.pack_padded_sequence

    def fn(x, h):
        out, h_n = rnn(pack(x, [2, 4, 3], enforce_sorted=False), h)
        return flat(out.data, h_n)
    check_module_grads(rnn, fn, [rand(4, 3, 2), rand(4, 3, 3, seed=1)])


# --- PyTorch's names, initialisation, errors; dropout ---------------------------------------------

def test_initialisation_is_uniform_within_one_over_sqrt_hidden():
    mg.manual_seed(0)
    bound = 1 / math.sqrt(16)
    for m in (LSTM(8, 16, num_layers=2, proj_size=4), LSTMCell(8, 16), RNN(8, 16)):
        values = np.concatenate([p.numpy().ravel() for p in m.parameters()])
        assert np.abs(values).max() <= bound and np.abs(values).max() > 0.9 * bound
        assert abs(values.mean()) < 0.02


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001  (comparing whatever each library raises)
        return e
    raise AssertionError("no error raised")


def _same_error(torch, make):
    """Both libraries raise the same exception type; minigrad's message is PyTorch's, with the
    layer's name in front (and sometimes the shapes after)."""
    theirs, mine = _error(lambda: make(torch)), _error(lambda: make(mg))
    assert type(mine) is type(theirs), (mine, theirs)
    return str(theirs), str(mine)


ERRORS = {
    "input size": lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 7)),
    "4-D input": lambda lib: lib.nn.LSTM(3, 4)(lib.zeros(5, 2, 3, 1)),
    "h_0 batch": lambda lib: lib.nn.LSTM(3, 4, num_layers=2)(
        lib.zeros(5, 2, 3), (lib.zeros(2, 3, 4), lib.zeros(2, 2, 4))),
    "c_0 size": lambda lib: lib.nn.LSTM(3, 4, proj_size=2)(
        lib.zeros(5, 2, 3), (lib.zeros(1, 2, 2), lib.zeros(1, 2, 2))),
    "unbatched with 3-D states": lambda lib: lib.nn.LSTM(3, 4)(
        lib.zeros(5, 3), (lib.zeros(1, 1, 4), lib.zeros(1, 1, 4))),
    "batched with 2-D state": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 3), lib.zeros(1, 4)),
    "GRU hidden": lambda lib: lib.nn.GRU(3, 4)(lib.zeros(5, 2, 3), lib.zeros(2, 2, 4)),
    "cell input size": lambda lib: lib.nn.LSTMCell(3, 4)(lib.zeros(2, 7)),
    "cell 3-D input": lambda lib: lib.nn.LSTMCell(3, 4)(lib.zeros(2, 3, 3)),
    "cell batch": lambda lib: lib.nn.LSTMCell(3, 4)(lib.zeros(2, 3), (lib.zeros(3, 4),) * 2),
    "cell hidden": lambda lib: lib.nn.GRUCell(3, 4)(lib.zeros(2, 3), lib.zeros(2, 5)),
    "proj_size too big": lambda lib: lib.nn.LSTM(3, 4, proj_size=4),
    "dropout": lambda lib: lib.nn.LSTM(3, 4, num_layers=2, dropout=1.5),
    "num_layers": lambda lib: lib.nn.LSTM(3, 4, num_layers=0),
    "nonlinearity": lambda lib: lib.nn.RNN(3, 4, nonlinearity="sigmoid"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_are_pytorchs_and_name_the_layer(torch, name):
    theirs, mine = _same_error(torch, ERRORS[name])
    assert theirs in mine, f"minigrad: {mine!r}; PyTorch: {theirs!r}"
    assert mine.split(":")[0] in ("LSTM", "LSTMCell", "GRU", "GRUCell", "RNN"), mine


def test_dropout_only_between_layers_and_only_in_training(torch):
    mg.manual_seed(0)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        LSTM(3, 4, dropout=0.5)
    lstm = LSTM(3, 4, num_layers=2, dropout=0.5, dtype=mg.float64)
    plain = LSTM(3, 4, num_layers=2, dtype=mg.float64)
    plain.load_state_dict(lstm.state_dict())
    x = mg.tensor(randn(6, 2, 3))
    (a, (h_a, _)), (b, _) = lstm(x), lstm(x)
    _, (h_p, _) = plain(x)
    assert not np.allclose(a.numpy(), b.numpy())  # fresh masks on every call
    # the first layer sees the undropped input; its output is dropped before the second layer
    np.testing.assert_allclose(h_a.numpy()[0], h_p.numpy()[0], atol=1e-12)
    assert not np.allclose(h_a.numpy()[1], h_p.numpy()[1])
    # nothing is dropped after the last layer: its output is its own final hidden state
    np.testing.assert_allclose(a.numpy()[-1], h_a.numpy()[1], atol=1e-12)
    lstm.eval()
    np.testing.assert_allclose(lstm(x)[0].numpy(), plain(x)[0].numpy(), atol=1e-12)


def test_reprs_and_pytorch_helpers_match(torch):
    for make in (lambda lib: lib.nn.LSTM(3, 4, num_layers=2, bias=False, proj_size=2),
                 lambda lib: lib.nn.LSTMCell(3, 4, bias=False),
                 lambda lib: lib.nn.RNNCell(3, 4, nonlinearity="relu"),
                 lambda lib: lib.nn.GRU(3, 4, batch_first=True, bidirectional=True)):
        assert repr(make(mg)) == repr(make(torch))
    lstm, t_lstm = LSTM(3, 4, bidirectional=True), torch.nn.LSTM(3, 4, bidirectional=True)
    lstm.flatten_parameters()
    assert [[tuple(p.shape) for p in w] for w in lstm.all_weights] == [
        [tuple(p.shape) for p in w] for w in t_lstm.all_weights]
    assert isinstance(lstm, mg.nn.RNNBase) and isinstance(t_lstm, torch.nn.RNNBase)
    assert isinstance(LSTMCell(3, 4), mg.nn.RNNCellBase)
    base = mg.nn.RNNBase("GRU", 3, 4, num_layers=2)  # PyTorch's signature: mode first
    assert [k for k, _ in base.named_parameters()] == [
        k for k, _ in torch.nn.RNNBase("GRU", 3, 4, num_layers=2).named_parameters()]
    with pytest.raises(ValueError, match="Unrecognized RNN mode: 'CONV'"):
        mg.nn.RNNBase("CONV", 3, 4)


def test_layers_and_cells_agree_step_by_step():
    mg.manual_seed(5)
    lstm, cell = LSTM(3, 4, dtype=mg.float64), LSTMCell(3, 4, dtype=mg.float64)
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})  # drop "_l0"
    x = mg.tensor(randn(5, 2, 3))
    h = c = mg.zeros(2, 4, dtype=mg.float64)
    out, (h_n, c_n) = lstm(x)
    for t in range(5):
        h, c = cell(x[t], (h, c))
        np.testing.assert_allclose(out.numpy()[t], h.numpy(), atol=1e-12)
    np.testing.assert_allclose(c_n.numpy()[0], c.numpy(), atol=1e-12)
