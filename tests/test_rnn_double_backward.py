"""Gradients of gradients through GRU, LSTM and their cells, whose gates are fused ops
(`GRUGates`, `LSTMGates`) with tensor-level rules: float64 gradgradcheck (second derivatives
against central differences of the first), a gradient penalty's derivatives against PyTorch's
on the same weights, and forward mode against reverse mode."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from minigrad.autograd import grad, gradgradcheck
from minigrad.autograd.functional import jvp
from minigrad.nn.rnn_steps import GRUGates, LSTMGates
from rnn_parity import copy_into_minigrad

KEEP = np.array([[True], [False], [True]])  # the middle row is a padded step: state carried over
GATES = {"GRUGates": (GRUGates, 3), "LSTMGates": (LSTMGates, 4)}


def _arrays(seed, *shapes):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _leaves(arrays):
    return [mg.tensor(a, requires_grad=True) for a in arrays]


def _gate_arrays(name, H=2):
    blocks = GATES[name][1]
    return _arrays(1, (3, blocks * H), (3, blocks * H), (3, H))


@pytest.mark.parametrize("keep", [None, KEEP], ids=["all_real", "padded"])
@pytest.mark.parametrize("name", GATES)
def test_gates_gradgradcheck(name, keep):
    op = GATES[name][0]
    xs = _leaves(_gate_arrays(name))
    assert gradgradcheck(lambda a, b, s: op.apply(a, b, s, keep=keep), xs)  # leaves as inputs
    assert gradgradcheck(lambda a, b, s: op.apply(a * 1.5, b * b, s.tanh(), keep=keep), xs)


@pytest.mark.parametrize("name", GATES)
def test_gates_third_derivative(name):
    """The rules are themselves made of ops with rules (the gate values rebuilt by
    SigmoidValue and TanhValue), so the second derivative can be differentiated again."""
    op = GATES[name][0]
    xs = _leaves(_gate_arrays(name))
    v = mg.tensor(np.random.default_rng(2).standard_normal(op.apply(*xs, keep=KEEP).shape))

    def first(a, b, s):
        gs = grad(op.apply(a, b, s, keep=KEEP), [a, b, s], v, create_graph=True)
        return mg.cat([g.reshape(-1) for g in gs])
    assert gradgradcheck(first, xs)


@pytest.mark.parametrize("keep", [None, KEEP], ids=["all_real", "padded"])
@pytest.mark.parametrize("name", GATES)
def test_gates_forward_mode_matches_reverse_mode(name, keep):
    """The forward rule's tangent against jvp by reverse mode (the double-vjp trick, which
    runs the tensor-level rule), with a tangent on every input."""
    op = GATES[name][0]
    arrays = _gate_arrays(name)
    tangents = _arrays(3, *(a.shape for a in arrays))
    with fwAD.dual_level():
        duals = [fwAD.make_dual(mg.tensor(a), mg.tensor(t)) for a, t in zip(arrays, tangents)]
        forward = fwAD.unpack_dual(op.apply(*duals, keep=keep)).tangent.numpy()
    _, reverse = jvp(lambda a, b, s: op.apply(a, b, s, keep=keep),
                     tuple(mg.tensor(a) for a in arrays), tuple(mg.tensor(t) for t in tangents))
    np.testing.assert_allclose(forward, reverse.numpy(), rtol=1e-10, atol=1e-12)


# --- the layers and cells: gradgradcheck --------------------------------------------------------

def _tensors(out):
    """Every tensor of a layer's or cell's result: the output (a packed one's data), the
    states."""
    if hasattr(out, "batch_sizes"):
        return [out.data]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    return [out]


def _flat(out):
    return mg.cat([t.reshape(-1) for t in _tensors(out)])


def _state_shapes(name, n, B, H, P=0):
    return [(n, B, P or H), (n, B, H)] if name.startswith("LSTM") else [(n, B, H)]


@pytest.mark.parametrize("with_state", [True, False], ids=["hx", "zeros"])
@pytest.mark.parametrize("name", ["GRUCell", "LSTMCell"])
def test_cells_gradgradcheck(name, with_state):
    mg.manual_seed(0)
    cell = getattr(mg.nn, name)(2, 2).double()
    states = _leaves(_arrays(4, *[(3, 2)] * (2 if name == "LSTMCell" else 1) * with_state))
    n = 1 + len(states)

    def program(x, *rest):
        hx = rest[:n - 1]
        hx = None if not hx else (tuple(hx) if name == "LSTMCell" else hx[0])
        return _flat(cell(x, hx))
    assert gradgradcheck(program, _leaves(_arrays(5, (3, 2))) + states + list(cell.parameters()))


# name -> (layer, its keyword arguments, input: "padded" (lengths=), "packed" or "dense",
# initial state given)
LAYERS = {
    "gru": ("GRU", {}, "dense", True),
    "lstm": ("LSTM", {}, "dense", True),
    "gru_2_layers_bidirectional_batch_first": (
        "GRU", {"num_layers": 2, "bidirectional": True, "batch_first": True}, "dense", False),
    "lstm_2_layers_bidirectional_batch_first": (
        "LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, "dense", True),
    "gru_bidirectional_packed": ("GRU", {"bidirectional": True}, "packed", True),
    "lstm_packed": ("LSTM", {}, "packed", False),
    "lstm_bidirectional_padded": ("LSTM", {"bidirectional": True}, "padded", True),
    "lstm_projection": ("LSTM", {"proj_size": 1}, "dense", True),
}
FAST_LAYERS = ("gru", "lstm", "lstm_packed")  # gradgradcheck's slowest cases take 5-30 s
LENGTHS = [3, 1]  # batch of 2, T = 3: the second sequence is one step long
T, B, D, H = 3, 2, 2, 2


def _params(names, fast):
    return [pytest.param(n, marks=() if n in fast else pytest.mark.slow) for n in names]


def _layer_inputs(key):
    name, kw, kind, with_state = LAYERS[key]
    n = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    shapes = [(B, T, D) if kw.get("batch_first") else (T, B, D)]
    if with_state:
        shapes += _state_shapes(name, n, B, H, kw.get("proj_size", 0))
    return _arrays(6, *shapes)


def _call(lib, layer, key, x, *hx):
    """The layer on x (packed, or with lengths=, as the case says) and the given states."""
    name, kw, kind, _ = LAYERS[key]
    state = None if not hx else (tuple(hx) if name == "LSTM" else hx[0])
    if kind == "packed":
        pack = lib.nn.utils.rnn.pack_padded_sequence
        return layer(pack(x, LENGTHS, batch_first=kw.get("batch_first", False),
                          enforce_sorted=False), state)
    if kind == "padded":  # minigrad only: padding without packing
        return layer(x, state, lengths=LENGTHS)
    return layer(x, state)


@pytest.mark.parametrize("key", _params(LAYERS, FAST_LAYERS))
def test_layers_gradgradcheck(key):
    name, kw, _, _ = LAYERS[key]
    mg.manual_seed(0)
    layer = getattr(mg.nn, name)(D, H, **kw).double()
    xs = _leaves(_layer_inputs(key))
    n = len(xs)
    assert gradgradcheck(lambda *args: _flat(_call(mg, layer, key, *args[:n])),
                         xs + list(layer.parameters()))


# --- the same second derivatives as PyTorch ---------------------------------------------------

def _penalty_grads(lib, layer, call, arrays):
    """A gradient penalty: g = the gradient of a random weighting of every output w.r.t. the
    inputs, recorded; returns g and the gradients of sum(g^2) w.r.t. every parameter and
    input."""
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    rng = np.random.default_rng(8)
    loss = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum()
               for o in _tensors(call(lib, layer, *xs)))
    firsts = lib.autograd.grad(loss, xs, create_graph=True)
    penalty = sum((g * g).sum() for g in firsts)
    params = [p for _, p in layer.named_parameters()]
    seconds = lib.autograd.grad(penalty, params + xs)
    return [g.detach().numpy() for g in list(firsts) + list(seconds)]


def _compare(torch, name, kw, call, arrays):
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(D, H, **kw).double()
    mine = getattr(mg.nn, name)(D, H, **kw).double()
    copy_into_minigrad(torch, theirs, mine)
    got = _penalty_grads(mg, mine, call, arrays)
    want = _penalty_grads(torch, theirs, call, arrays)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=f"{name} result {i}")


@pytest.mark.parametrize("key", [k for k in LAYERS if LAYERS[k][2] != "padded"])
def test_layer_gradient_penalty_matches_torch(key, torch):
    name, kw, _, _ = LAYERS[key]
    _compare(torch, name, kw, lambda lib, layer, *xs: _call(lib, layer, key, *xs),
             _layer_inputs(key))


@pytest.mark.parametrize("with_state", [True, False], ids=["hx", "zeros"])
@pytest.mark.parametrize("name", ["GRUCell", "LSTMCell"])
def test_cell_gradient_penalty_matches_torch(name, with_state, torch):
    lstm = name == "LSTMCell"
    shapes = [(3, D)] + ([(3, H)] * (2 if lstm else 1) if with_state else [])

    def call(lib, cell, x, *hx):
        return cell(x, None if not hx else (tuple(hx) if lstm else hx[0]))
    _compare(torch, name, {}, call, _arrays(9, *shapes))


# --- forward mode against reverse mode --------------------------------------------------------

@pytest.mark.parametrize("key", LAYERS)
def test_layer_forward_mode_matches_reverse_mode(key):
    """The tangent of every output and final state for tangents of the input and the initial
    state, against jvp by reverse mode."""
    name, kw, _, _ = LAYERS[key]
    mg.manual_seed(0)
    layer = getattr(mg.nn, name)(D, H, **kw).double()
    arrays = _layer_inputs(key)
    tangents = _arrays(10, *(a.shape for a in arrays))
    with fwAD.dual_level():
        duals = [fwAD.make_dual(mg.tensor(a), mg.tensor(t)) for a, t in zip(arrays, tangents)]
        forward = fwAD.unpack_dual(_flat(_call(mg, layer, key, *duals))).tangent.numpy()
    _, reverse = jvp(lambda *xs: _flat(_call(mg, layer, key, *xs)),
                     tuple(mg.tensor(a) for a in arrays), tuple(mg.tensor(t) for t in tangents))
    np.testing.assert_allclose(forward, reverse.numpy(), rtol=1e-10, atol=1e-12)
