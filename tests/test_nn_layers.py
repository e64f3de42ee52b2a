"""minigrad.nn: Module machinery, layers, normalisation, init and state dicts (and PyTorch parity).

Numerical gradients are checked with `minigrad.autograd.gradcheck` in float64 (modules are
converted with `Module.double()`). Tests that compare with PyTorch take the `torch` fixture and
are skipped when PyTorch is not installed.
"""
import math
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import gradcheck
from minigrad.nn import init
from helpers import t32, t64


def away_from_zero(rng, shape, low=0.2, high=2.0):
    """Values with |x| in [low, high]: kinks (relu, leaky relu, abs) stay out of the difference."""
    return rng.uniform(low, high, shape) * rng.choice([-1.0, 1.0], shape)


def module_gradcheck(module, *inputs, **kw):
    """gradcheck of module(*inputs) w.r.t. the inputs that require grad and every parameter."""
    module.double()
    params = list(module.parameters())
    n = len(inputs)
    assert gradcheck(lambda *a: module(*a[:n]), list(inputs) + params, **kw)


class Block(nn.Module):
    def __init__(self, d=8, h=2):
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, h)
        self.linear1 = nn.Linear(d, 2 * d)
        self.norm = nn.LayerNorm(d)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.encoder = nn.Module()
        self.encoder.layers = nn.ModuleList([Block(), Block()])
        self.heads = nn.ModuleDict({"cls": nn.Linear(8, 3), "reg": nn.Linear(8, 1, bias=False)})
        self.scale = nn.Parameter(np.ones(1, np.float32))


# --- registration and traversal -------------------------------------------------------------

def test_attribute_assignment_registers_parameters_and_modules():
    m = nn.Module()
    m.w = nn.Parameter(np.zeros((2, 3), np.float32))
    m.sub = nn.Linear(3, 4)
    m.plain = mg.tensor([1.0, 2.0])  # a plain tensor is not a parameter
    m.number = 3
    assert [n for n, _ in m.named_parameters()] == ["w", "sub.weight", "sub.bias"]
    assert list(m.children()) == [m.sub]
    assert m.num_parameters() == 6 + 12 + 4
    with pytest.raises(TypeError, match="cannot assign 'int' as parameter 'w'"):
        m.w = 5  # as in PyTorch: a weight never silently becomes a plain attribute
    with pytest.raises(TypeError, match="cannot assign 'Tensor' as child module 'sub'"):
        m.sub = mg.tensor([1.0])
    m.w = None  # None is allowed: the parameter has no value and is skipped
    assert [n for n, _ in m.named_parameters()] == ["sub.weight", "sub.bias"]
    del m.sub
    assert list(m.named_parameters()) == [] and list(m.children()) == []
    assert isinstance(nn.Parameter(np.zeros(2, np.float32)), mg.Tensor)
    assert nn.Parameter(np.zeros(2, np.float32)).requires_grad


def test_setattr_before_super_init_is_a_clear_error():
    class Bad(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(np.zeros(2, np.float32))

    with pytest.raises(AttributeError, match="super\\(\\).__init__"):
        Bad()


def test_named_parameters_dotted_names_nested_modulelist_moduledict():
    names = [n for n, _ in Net().named_parameters()]
    expected = ["scale", "embed.weight"]
    for i in range(2):
        p = f"encoder.layers.{i}."
        expected += [p + "self_attn.in_proj_weight", p + "self_attn.in_proj_bias",
                     p + "self_attn.out_proj.weight", p + "self_attn.out_proj.bias",
                     p + "linear1.weight", p + "linear1.bias", p + "norm.weight", p + "norm.bias"]
    expected += ["heads.cls.weight", "heads.cls.bias", "heads.reg.weight"]
    assert sorted(names) == sorted(expected)
    assert len(names) == len(set(names))
    # PyTorch's order: a module's own parameters, then its children's in registration order
    assert names[:2] == ["scale", "embed.weight"]
    assert names[2] == "encoder.layers.0.self_attn.in_proj_weight"
    assert names[-3:] == ["heads.cls.weight", "heads.cls.bias", "heads.reg.weight"]
    assert dict(Net().named_parameters())["encoder.layers.1.norm.bias"].shape == (8,)


def test_shared_parameter_is_listed_once():
    m = nn.Module()
    m.a = nn.Linear(3, 3)
    m.b = nn.Linear(3, 3)
    m.b.weight = m.a.weight
    assert [n for n, _ in m.named_parameters()] == ["a.weight", "a.bias", "b.bias"]
    assert m.num_parameters() == 9 + 3 + 3


def test_state_dict_of_tied_weights_has_both_names_as_pytorch():
    # PyTorch's state_dict keeps a shared parameter under every name it is registered with
    # (torch: ['emb.weight', 'gen.weight']); named_parameters lists it once. A checkpoint of a
    # model with tied embedding/output weights must load either way.
    m = nn.Module()
    m.emb = nn.Embedding(5, 3)
    m.gen = nn.Linear(3, 5, bias=False)
    m.gen.weight = m.emb.weight
    assert [n for n, _ in m.named_parameters()] == ["emb.weight"]
    assert list(m.state_dict()) == ["emb.weight", "gen.weight"]
    w = np.arange(15, dtype=np.float32).reshape(5, 3)
    m.load_state_dict({"emb.weight": w, "gen.weight": w})
    np.testing.assert_array_equal(m.gen.weight.numpy(), w)


def test_children_and_named_modules():
    net = Net()
    assert [type(c).__name__ for c in net.children()] == ["Embedding", "Module", "ModuleDict"]
    assert [n for n, _ in net.named_children()] == ["embed", "encoder", "heads"]
    names = [n for n, _ in net.named_modules()]
    assert names[:4] == ["", "embed", "encoder", "encoder.layers"]
    assert names[4:9] == ["encoder.layers.0", "encoder.layers.0.self_attn",
                          "encoder.layers.0.self_attn.out_proj", "encoder.layers.0.linear1",
                          "encoder.layers.0.norm"]
    assert names[-3:] == ["heads", "heads.cls", "heads.reg"]
    mods = dict(net.named_modules())
    assert mods["encoder.layers.1.self_attn"] is net.encoder.layers[1].self_attn
    assert len(list(net.modules())) == len(names)


def test_containers_index_len_iter_and_sequential_names():
    layers = [nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 1)]
    seq = nn.Sequential(*layers)
    assert len(seq) == 3 and seq[0] is layers[0] and seq[-1] is layers[2]
    assert list(seq) == layers
    named = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.Tanh())]))
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]
    ml = nn.ModuleList([nn.Linear(1, 1)])
    ml.append(nn.Linear(1, 1)).extend([nn.Linear(1, 1)])
    assert len(ml) == 3 and [n for n, _ in ml.named_parameters()][-1] == "2.bias"
    md = nn.ModuleDict({"a": nn.Linear(1, 1)})
    md["b"] = nn.Linear(1, 2)
    assert "b" in md and list(md.keys()) == ["a", "b"] and len(md) == 2
    assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias", "b.weight", "b.bias"]


def test_train_eval_flags_propagate():
    net = Net()
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    assert net.train() is net
    assert all(m.training for m in net.modules())
    net.encoder.train(False)
    assert net.training and not net.encoder.layers[0].self_attn.out_proj.training


def _frozen_stem_net(nn_lib):
    class FrozenStem(nn_lib.Module):
        """Keeps its dropout in evaluation mode whatever train() says, by overriding train()."""

        def __init__(self):
            super().__init__()
            self.drop = nn_lib.Dropout(0.5)

        def train(self, mode=True):
            super().train(mode)
            self.drop.train(False)
            return self

    return nn_lib.Sequential(FrozenStem(), nn_lib.Linear(2, 2), nn_lib.Dropout(0.1))


def test_train_runs_each_childs_own_train_as_in_pytorch(torch):
    ours, theirs = _frozen_stem_net(nn), _frozen_stem_net(torch.nn)
    for net in (ours, theirs):
        net.eval()
        net.train()
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    assert [m.training for m in ours.modules()] == [True, True, False, True, True]


def test_zero_grad_set_to_none_true_and_false():
    m = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
    x = t32(np.ones((4, 3)))
    m(x).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    for p in m.parameters():
        assert p.grad is not None and p.grad.shape == p.shape
        assert not p.grad.numpy().any()
    m(x).sum().backward()
    assert any(p.grad.numpy().any() for p in m.parameters())
    m.zero_grad()  # default: set_to_none=True
    assert all(p.grad is None for p in m.parameters())


def test_apply_visits_children_first_then_self():
    inner = nn.Sequential(nn.ReLU(), nn.Linear(2, 2))
    m = nn.Sequential(nn.Linear(2, 2), inner)
    seen = []
    assert m.apply(lambda mod: seen.append(mod)) is m
    assert seen == [m[0], inner[0], inner[1], inner, m]

    def zero_linear(mod):
        if isinstance(mod, nn.Linear):
            init.zeros_(mod.weight)
            init.ones_(mod.bias)
    m.apply(zero_linear)
    np.testing.assert_array_equal(m[0].weight.numpy(), 0)
    np.testing.assert_array_equal(inner[1].bias.numpy(), 1)


def test_forward_hook_modifies_output_and_handle_removes_it():
    lin = nn.Linear(3, 2)
    x = t32(np.arange(6).reshape(2, 3))
    base = lin(x).numpy().copy()
    calls = []

    def hook(module, args, output):
        calls.append((module, args[0]))
        return output * 2

    handle = lin.register_forward_hook(hook)
    np.testing.assert_allclose(lin(x).numpy(), 2 * base, rtol=1e-6)
    assert calls[0][0] is lin and calls[0][1] is x
    handle.remove()
    np.testing.assert_array_equal(lin(x).numpy(), base)
    assert len(calls) == 1
    # a hook returning None leaves the output alone
    h2 = lin.register_forward_hook(lambda m, a, o: None)
    np.testing.assert_array_equal(lin(x).numpy(), base)
    h2.remove()
    # a pre-hook can replace the input
    pre = lin.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    np.testing.assert_allclose(lin(x).numpy(), np.broadcast_to(lin.bias.numpy(), base.shape), rtol=1e-6)
    pre.remove()


def test_same_hook_registered_twice_runs_twice_and_handles_are_independent():
    # As PyTorch: every registration gets its own handle (torch gives 4x, then 2x after one remove)
    lin = nn.Linear(2, 2)
    x = t32(np.ones((1, 2)))
    base = lin(x).numpy().copy()

    def double(m, a, o):
        return o * 2

    h1 = lin.register_forward_hook(double)
    lin.register_forward_hook(double)
    np.testing.assert_allclose(lin(x).numpy(), 4 * base, rtol=1e-6)
    h1.remove()
    np.testing.assert_allclose(lin(x).numpy(), 2 * base, rtol=1e-6)


def test_hook_on_submodule_fires_inside_parent_forward():
    m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    grabbed = {}
    m[1].register_forward_hook(lambda mod, a, o: grabbed.setdefault("act", o.numpy().copy()))
    m(t32(np.ones((4, 2))))
    assert grabbed["act"].shape == (4, 3) and (grabbed["act"] >= 0).all()


def test_repr_prints_the_module_tree():
    m = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Sequential(nn.Tanh()))
    expected = ("Sequential(\n"
                "  (0): Linear(in_features=4, out_features=3, bias=True)\n"
                "  (1): ReLU()\n"
                "  (2): Sequential(\n"
                "    (0): Tanh()\n"
                "  )\n"
                ")")
    assert repr(m) == expected
    r = repr(Net())
    assert "(encoder): Module(" in r and "(self_attn): MultiheadAttention(" in r
    assert ("(out_proj): NonDynamicallyQuantizableLinear(in_features=8, out_features=8, "
            "bias=True)") in r  # PyTorch's name for it
    assert "(cls): Linear(in_features=8, out_features=3, bias=True)" in r


def test_repr_matches_torch(torch):
    ours = nn.Sequential(nn.Linear(4, 3), nn.ReLU(),
                         nn.Sequential(nn.Tanh(), nn.Linear(3, 1, bias=False)))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU(),
                                 torch.nn.Sequential(torch.nn.Tanh(),
                                                     torch.nn.Linear(3, 1, bias=False)))
    assert repr(ours) == repr(theirs)


def test_parameter_containers_and_loss_weights_print_and_save_as_torch(torch):
    """ParameterList names the dtype and ParameterDict the tensor type of each entry, sizes
    as 2x3; a loss's class weights are buffers (in state_dict, converted by double())."""
    texts, keys = [], []
    for lib in (torch, mg):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.plist = lib.nn.ParameterList([lib.nn.Parameter(lib.zeros(2)),
                                                   lib.nn.Parameter(lib.ones(2, 3).double())])
                self.pdict = lib.nn.ParameterDict({"a": lib.nn.Parameter(lib.zeros(()))})
                self.loss = lib.nn.CrossEntropyLoss(weight=lib.tensor([1.0, 2.0]))
                self.bce = lib.nn.BCEWithLogitsLoss(pos_weight=lib.tensor([3.0]))
        net = Net().double()
        texts.append(repr(net).replace("minigrad.", "torch."))
        keys.append((list(net.state_dict()), str(net.loss.weight.dtype).split(".")[-1],
                     list(lib.nn.NLLLoss().state_dict())))
    assert texts[1] == texts[0]
    assert keys[1] == keys[0]


def test_summary_lists_every_parameter_and_totals():
    net = Net()
    printed = []
    text = net.summary(print_fn=printed.append)
    assert printed == [text]
    lines = text.splitlines()
    for name, p in net.named_parameters():
        row = [ln for ln in lines if ln.split() and ln.split()[0] == name]
        assert len(row) == 1, name
        assert str(tuple(p.shape)) in row[0]
        assert row[0].rstrip().endswith(f"{p.numpy().size:,}")
    total = net.num_parameters()
    assert total == sum(p.numpy().size for p in net.parameters())
    assert f"{total:,}" in text
    # per-module totals
    for name in ("encoder", "encoder.layers.0.self_attn", "heads.cls"):
        sub = dict(net.named_modules())[name]
        row = [ln for ln in lines if ln.split() and ln.split()[0] == name]
        assert row and row[-1].rstrip().endswith(f"{sub.num_parameters():,}"), name
    # depth=1: the totals stop at the top-level sub-modules
    shallow = net.summary(depth=1, print_fn=None).splitlines()
    header = next(i for i, ln in enumerate(shallow) if ln.split()[:1] == ["module"])
    assert [ln.split()[0] for ln in shallow[header + 1:]] == ["Net", "embed", "encoder", "heads"]
    assert shallow[header + 1].rstrip().endswith(f"{total:,}")


# --- state dicts ----------------------------------------------------------------------------

class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 6)
        self.bn = nn.BatchNorm1d(6)
        self.fc2 = nn.Linear(6, 3)
        self.emb = nn.Embedding(7, 4, padding_idx=0)

    def forward(self, ids):
        return self.fc2(self.bn(self.fc1(self.emb(ids).sum(1))).relu())


def test_state_dict_round_trip_gives_identical_outputs():
    mg.manual_seed(0)
    a = Small()
    ids = mg.tensor(np.array([[1, 2, 0], [3, 4, 5], [6, 1, 1], [2, 2, 3]]))
    for _ in range(3):  # move the running statistics away from their defaults
        a(ids)
    a.eval()
    sd = a.state_dict()
    assert set(sd) == {"fc1.weight", "fc1.bias", "bn.weight", "bn.bias", "bn.running_mean",
                       "bn.running_var", "bn.num_batches_tracked", "fc2.weight", "fc2.bias",
                       "emb.weight"}
    assert int(sd["bn.num_batches_tracked"].numpy()) == 3
    mg.manual_seed(1)
    b = Small().eval()
    assert not np.allclose(b(ids).numpy(), a(ids).numpy())
    res = b.load_state_dict(sd)
    assert list(res.missing_keys) == [] and list(res.unexpected_keys) == []
    np.testing.assert_array_equal(b(ids).numpy(), a(ids).numpy())
    # numpy arrays load too
    mg.manual_seed(2)
    c = Small().eval()
    c.load_state_dict({k: np.array(v.numpy()) for k, v in sd.items()})
    np.testing.assert_array_equal(c(ids).numpy(), a(ids).numpy())
    assert c.bn.num_batches_tracked.numpy().dtype == np.int64


def test_state_dict_shares_memory_and_loading_copies(torch):
    # as PyTorch: state_dict()'s tensors are detached views of the weights (`sd[k].copy_(w)`
    # writes into the model; a snapshot must be copied), load_state_dict copies the values in
    for lib in (torch, mg):
        lin = lib.nn.Linear(2, 2)
        sd = lin.state_dict()
        assert not sd["weight"].requires_grad
        with lib.no_grad():
            sd["weight"].copy_(lib.full((2, 2), 123.0))
            lin.bias.add_(1.0)
        assert (lin.weight.detach().numpy() == 123.0).all(), lib.__name__
        assert (sd["bias"].numpy() == lin.bias.detach().numpy()).all(), lib.__name__
        assert lin.state_dict(keep_vars=True)["weight"] is lin.weight
    lin = nn.Linear(2, 2)
    arr = np.zeros((2, 2), np.float32)
    lin.load_state_dict({"weight": arr, "bias": np.zeros(2, np.float32)})
    arr[...] = 7.0
    np.testing.assert_array_equal(lin.weight.numpy(), 0)


def test_load_state_dict_strict_errors_list_every_problem():
    m = Small()
    sd = {k: np.array(v.numpy()) for k, v in m.state_dict().items()}
    del sd["fc1.bias"], sd["bn.running_var"]
    sd["fc3.weight"] = np.zeros((2, 2), np.float32)
    sd["extra"] = np.zeros(1, np.float32)
    sd["fc2.weight"] = np.zeros((5, 6), np.float32)
    sd["emb.weight"] = np.zeros((7, 5), np.float32)
    before = m.fc2.weight.numpy().copy()
    with pytest.raises(RuntimeError) as exc:
        m.load_state_dict(sd)
    msg = str(exc.value)
    for needle in ("missing", "fc1.bias", "bn.running_var", "unexpected", "fc3.weight", "extra",
                   "fc2.weight", "(5, 6)", "(3, 6)", "emb.weight", "(7, 5)", "(7, 4)"):
        assert needle in msg, needle
    np.testing.assert_array_equal(m.fc2.weight.numpy(), before)  # nothing loaded on error
    # strict=False: missing / unexpected are reported, shape mismatches still raise
    with pytest.raises(RuntimeError, match="fc2.weight"):
        m.load_state_dict(sd, strict=False)
    sd["fc2.weight"] = np.ones((3, 6), np.float32)
    sd["emb.weight"] = np.ones((7, 4), np.float32)
    res = m.load_state_dict(sd, strict=False)
    assert sorted(res.missing_keys) == ["bn.running_var", "fc1.bias"]
    assert sorted(res.unexpected_keys) == ["extra", "fc3.weight"]
    np.testing.assert_array_equal(m.fc2.weight.numpy(), 1)


def test_non_persistent_buffer_not_in_state_dict():
    pe = nn.PositionalEncoding(8, max_len=16)
    assert list(pe.state_dict()) == [] and list(pe.parameters()) == []


# --- gradchecks -----------------------------------------------------------------------------

def test_gradcheck_linear():
    rng = np.random.default_rng(0)
    module_gradcheck(nn.Linear(4, 3), t64(rng.standard_normal((2, 5, 4))))
    module_gradcheck(nn.Linear(3, 2, bias=False), t64(rng.standard_normal((4, 3))))
    lin = nn.Linear(3, 2).double()
    x = t64(rng.standard_normal((4, 3)))
    assert gradcheck(F.linear, [x, lin.weight, lin.bias])
    # a non-contiguous input (its rows cannot be a view): forward and backward reshape it
    xt = t64(rng.standard_normal((3, 5, 2)), requires_grad=False).permute(2, 1, 0)
    xt.requires_grad_()
    assert gradcheck(F.linear, [xt, lin.weight, lin.bias])


@pytest.mark.parametrize("rows", [(2, 5), (3,)])
def test_gradcheck_linear_through_blas_blocks(rows, monkeypatch):
    # Small products stay in NumPy; with the thresholds at 0 the forward is the blocks' addmm
    # (the gemm adds the bias) and the backward their matmul_and_sum (dX with the bias
    # gradient) and a weight gradient cut by rows (3 rows) or by K (10 rows, more than both
    # sides of W)
    from minigrad import kernels
    if not kernels.policy.USE_BLAS or kernels.policy.numpy_backend():
        pytest.skip("the numba backend's OpenBLAS blocks")
    monkeypatch.setattr(kernels.policy, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(kernels.policy, "SERIAL_MATMUL_MAX_WORK", 0)
    used = []
    for name in ("addmm", "matmul_and_sum"):  # what the linear op's products call on
        real = getattr(kernels.blas, name)  # the "blas_blocks" route
        monkeypatch.setattr(kernels.blas, name, lambda *a, name=name, real=real:
                            (used.append(name), real(*a))[1])
    rng = np.random.default_rng(3)
    module_gradcheck(nn.Linear(4, 3), t64(rng.standard_normal(rows + (4,))))
    assert {"addmm", "matmul_and_sum"} <= set(used)


def test_linear_bias_of_another_shape_or_dtype_through_blas_blocks(monkeypatch):
    # the gemm adds only a (D_out,) bias; a broadcast (1,) bias is added afterwards by NumPy's
    # in-place rules, as before; a float64 bias on float32 rows is PyTorch's RuntimeError
    from minigrad import kernels
    monkeypatch.setattr(kernels.policy, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(kernels.policy, "SERIAL_MATMUL_MAX_WORK", 0)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    for b in (np.float32([0.5]), rng.standard_normal(3).astype(np.float32)):
        y = F.linear(t32(x), t32(w), mg.tensor(b))
        assert y.dtype == mg.float32
        np.testing.assert_allclose(y.numpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)
    with pytest.raises(RuntimeError, match="bias float64"):
        F.linear(t32(x), t32(w), mg.tensor(rng.standard_normal(3)))


def test_linear_input_changed_in_place_after_forward_is_an_error():
    lin = nn.Linear(3, 2)
    x = mg.randn(2, 4, 3)
    y = lin(x)
    x.add_(1.0)  # backward would compute the weight gradient from the changed input
    with pytest.raises(RuntimeError, match="modified in place"):
        y.sum().backward()


def test_gradcheck_embedding_and_padding_row_gets_zero_grad():
    emb = nn.Embedding(6, 3, padding_idx=2).double()
    np.testing.assert_array_equal(emb.weight.numpy()[2], 0)
    ids = mg.tensor(np.array([[0, 2, 5], [2, 2, 1]]))
    # the padding row is frozen: autograd gives it zero even though it is read three times
    out = emb(ids)
    assert out.shape == (2, 3, 3)
    np.testing.assert_array_equal(out.numpy()[0, 1], 0)
    out.backward(mg.tensor(np.ones((2, 3, 3))))
    g = emb.weight.grad.numpy()
    np.testing.assert_array_equal(g[2], 0)
    np.testing.assert_array_equal(g[0], 1)
    np.testing.assert_array_equal(g[1], 1)
    np.testing.assert_array_equal(g[5], 1)
    np.testing.assert_array_equal(g[3], 0)
    # without padding_idx, a repeated id accumulates and the gradient is checked numerically
    emb2 = nn.Embedding(6, 3).double()
    ids2 = mg.tensor(np.array([[0, 4, 4], [1, 4, 0]]))
    module_gradcheck(emb2, ids2)
    # with padding_idx set but not read, every row's gradient is checked numerically
    module_gradcheck(nn.Embedding(6, 3, padding_idx=2), mg.tensor(np.array([[0, 4, 4], [1, 5, 0]])))
    emb3 = nn.Embedding(6, 3, padding_idx=-1)
    assert emb3.padding_idx == 5


def test_gradcheck_layernorm_int_and_tuple_shapes():
    rng = np.random.default_rng(1)
    ln = nn.LayerNorm(5)
    ln.weight.numpy()[...] = rng.standard_normal(5)
    ln.bias.numpy()[...] = rng.standard_normal(5)
    module_gradcheck(ln, t64(rng.standard_normal((3, 5))))
    ln2 = nn.LayerNorm((3, 4))
    assert ln2.weight.shape == (3, 4)
    ln2.weight.numpy()[...] = rng.standard_normal((3, 4))
    module_gradcheck(ln2, t64(rng.standard_normal((2, 3, 4))))
    module_gradcheck(nn.LayerNorm(4, elementwise_affine=False), t64(rng.standard_normal((2, 4))))


def test_gradcheck_batchnorm_train_2d_and_3d():
    rng = np.random.default_rng(2)
    for shape in [(5, 3), (4, 3, 2)]:
        bn = nn.BatchNorm1d(3)
        bn.weight.numpy()[...] = rng.standard_normal(3)
        bn.bias.numpy()[...] = rng.standard_normal(3)
        module_gradcheck(bn, t64(rng.standard_normal(shape)))


def test_gradcheck_batchnorm_eval():
    rng = np.random.default_rng(3)
    bn = nn.BatchNorm1d(3).double()
    bn.running_mean.numpy()[...] = rng.standard_normal(3)
    bn.running_var.numpy()[...] = rng.uniform(0.5, 2, 3)
    bn.eval()
    module_gradcheck(bn, t64(rng.standard_normal((4, 3, 2))))


@pytest.mark.parametrize("make", [nn.ReLU, lambda: nn.GELU(), lambda: nn.GELU("tanh"), nn.Tanh,
                                  nn.Sigmoid, lambda: nn.LeakyReLU(0.1), nn.LeakyReLU,
                                  lambda: nn.Softmax(-1), lambda: nn.Softmax(0), nn.Identity],
                         ids=["relu", "gelu", "gelu_tanh", "tanh", "sigmoid", "leaky0.1",
                              "leaky_default", "softmax-1", "softmax0", "identity"])
def test_gradcheck_activations(make):
    rng = np.random.default_rng(4)
    module_gradcheck(make(), t64(away_from_zero(rng, (3, 4), 0.1, 3.0)))


def test_activation_values():
    x = np.linspace(-4, 4, 17)
    xt = t64(x, requires_grad=False)
    np.testing.assert_allclose(nn.ReLU()(xt).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.LeakyReLU(0.2)(xt).numpy(), np.where(x > 0, x, 0.2 * x))
    np.testing.assert_allclose(nn.Tanh()(xt).numpy(), np.tanh(x))
    np.testing.assert_allclose(nn.Sigmoid()(xt).numpy(), 1 / (1 + np.exp(-x)))
    erf = np.vectorize(math.erf)
    np.testing.assert_allclose(nn.GELU()(xt).numpy(), 0.5 * x * (1 + erf(x / math.sqrt(2))),
                               rtol=1e-12, atol=1e-12)
    tanh_gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU("tanh")(xt).numpy(), tanh_gelu, rtol=1e-12, atol=1e-12)
    s = nn.Softmax(0)(t64(x.reshape(17, 1), False)).numpy()
    np.testing.assert_allclose(s[:, 0], np.exp(x) / np.exp(x).sum())
    assert nn.Identity()(xt) is xt


def test_activations_match_torch(torch):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 6)) * 3
    pairs = [(nn.ReLU(), torch.nn.ReLU()), (nn.GELU(), torch.nn.GELU()),
             (nn.GELU("tanh"), torch.nn.GELU("tanh")), (nn.Tanh(), torch.nn.Tanh()),
             (nn.Sigmoid(), torch.nn.Sigmoid()), (nn.LeakyReLU(0.3), torch.nn.LeakyReLU(0.3)),
             (nn.Softmax(1), torch.nn.Softmax(1)), (nn.Softmax(0), torch.nn.Softmax(0))]
    for ours, theirs in pairs:
        xt = t64(x)
        ours(xt).backward(t64(np.cos(x), False))
        tx = torch.tensor(x, requires_grad=True)
        theirs(tx).backward(torch.tensor(np.cos(x)))
        np.testing.assert_allclose(ours(xt).numpy(), theirs(tx).detach().numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=repr(ours))
        np.testing.assert_allclose(xt.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=repr(ours))


def test_gradcheck_sequential():
    rng = np.random.default_rng(6)
    mg.manual_seed(6)
    model = nn.Sequential(nn.Linear(3, 5), nn.Tanh(), nn.LayerNorm(5), nn.Linear(5, 2),
                          nn.Sigmoid())
    module_gradcheck(model, t64(rng.standard_normal((4, 3))))


@pytest.mark.parametrize("pad,value", [((1, 2), 0.0), ((0, 1, 2, 0), -1.5),
                                        ((1, 1, 0, 0, 1, 0), 3.0), ((0, 0), 0.0)])
def test_pad_values_and_gradcheck(pad, value):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 4))
    out = F.pad(t64(x, False), pad, value=value)
    widths = [(0, 0)] * 3
    for i in range(len(pad) // 2):
        widths[2 - i] = (pad[2 * i], pad[2 * i + 1])
    np.testing.assert_array_equal(out.numpy(), np.pad(x, widths, constant_values=value))
    assert gradcheck(lambda a: F.pad(a, pad, value=value), [t64(x)])


def test_pad_matches_torch(torch):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    ours = F.pad(t32(x), (1, 0, 0, 2), value=9.0).numpy()
    theirs = torch.nn.functional.pad(torch.tensor(x), (1, 0, 0, 2), value=9.0).numpy()
    np.testing.assert_array_equal(ours, theirs)


def test_pad_errors():
    # PyTorch's types and wording
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(t32(np.zeros((2, 2))), (1,))
    with pytest.raises(RuntimeError, match="Padding length should be less than or equal to two "
                                           "times the input dimension"):
        F.pad(t32(np.zeros((2,))), (1, 1, 1, 1))


# --- normalisation ----------------------------------------------------------------------------

def test_layernorm_output_has_mean_0_and_variance_1_before_affine():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3, 6)) * 5 + 3
    ln = nn.LayerNorm(6, elementwise_affine=False).double()
    y = ln(t64(x, False)).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-12)
    np.testing.assert_allclose(y.var(-1), 1, atol=1e-4)  # eps = 1e-5 inside the root
    ln2 = nn.LayerNorm((3, 6)).double()
    w, b = rng.standard_normal((3, 6)), rng.standard_normal((3, 6))
    ln2.weight.numpy()[...] = w
    ln2.bias.numpy()[...] = b
    z = (ln2(t64(x, False)).numpy() - b) / w
    np.testing.assert_allclose(z.mean((-2, -1)), 0, atol=1e-10)
    np.testing.assert_allclose(z.var((-2, -1)), 1, atol=1e-4)
    # the last dim alone is NOT normalised by a (3, 6) layer norm
    assert np.abs(z.mean(-1)).max() > 1e-3


def test_layernorm_formula_biased_variance_eps_inside_root():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((5, 4))
    ln = nn.LayerNorm(4, eps=0.5).double()
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 0.5)
    np.testing.assert_allclose(ln(t64(x, False)).numpy(), ref, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="normalized shape"):
        ln(t64(np.zeros((2, 5)), False))


def test_batchnorm_train_then_eval_uses_running_stats():
    rng = np.random.default_rng(10)
    bn = nn.BatchNorm1d(3, momentum=0.2).double()
    bn.weight.numpy()[...] = [1.0, 2.0, -1.0]
    bn.bias.numpy()[...] = [0.0, 0.5, 1.0]
    rm, rv = np.zeros(3), np.ones(3)
    for step in range(3):
        x = rng.standard_normal((6, 3, 2)) * (step + 1) + step
        y = bn(t64(x, False)).numpy()
        mean, var = x.mean((0, 2)), x.var((0, 2))
        ref = (x - mean[None, :, None]) / np.sqrt(var[None, :, None] + 1e-5)
        ref = ref * bn.weight.numpy()[None, :, None] + bn.bias.numpy()[None, :, None]
        np.testing.assert_allclose(y, ref, rtol=1e-10, atol=1e-12)
        rm = 0.8 * rm + 0.2 * mean
        rv = 0.8 * rv + 0.2 * x.var((0, 2), ddof=1)  # unbiased for the running estimate
        np.testing.assert_allclose(bn.running_mean.numpy(), rm, rtol=1e-12)
        np.testing.assert_allclose(bn.running_var.numpy(), rv, rtol=1e-12)
    assert int(bn.num_batches_tracked.numpy()) == 3
    bn.eval()
    x = rng.standard_normal((4, 3))
    y = bn(t64(x, False)).numpy()
    ref = (x - rm) / np.sqrt(rv + 1e-5) * bn.weight.numpy() + bn.bias.numpy()
    np.testing.assert_allclose(y, ref, rtol=1e-10)
    np.testing.assert_allclose(bn.running_mean.numpy(), rm)  # eval does not update
    assert int(bn.num_batches_tracked.numpy()) == 3
    # eval works on a single example; training mode normalises with batch statistics
    assert bn(t64(x[:1], False)).shape == (1, 3)


def test_batchnorm_2d_train_matches_formula():
    rng = np.random.default_rng(11)
    x = rng.standard_normal((8, 4)) * 3 + 1
    bn = nn.BatchNorm1d(4).double()
    y = bn(t64(x, False)).numpy()
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-10)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-12)


def test_batchnorm_one_sample_in_training_raises():
    bn = nn.BatchNorm1d(3)
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        bn(t32(np.ones((1, 3))))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        bn(t32(np.ones((1, 3, 1))))
    assert bn(t32(np.arange(6).reshape(1, 3, 2))).shape == (1, 3, 2)  # 2 values per channel
    bn.eval()
    assert bn(t32(np.ones((1, 3)))).shape == (1, 3)
    with pytest.raises(ValueError, match="BatchNorm1d"):
        bn(t32(np.ones((2, 4))))


def test_dropout_train_and_eval():
    mg.manual_seed(0)
    drop = nn.Dropout(0.25)
    x = t32(np.ones((200, 50)))
    y = drop(x).numpy()
    kept = y != 0
    assert 0.2 < 1 - kept.mean() < 0.3
    np.testing.assert_allclose(y[kept], 1 / 0.75, rtol=1e-6)
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())
    drop.train()
    # seeded: same seed, same mask
    mg.manual_seed(3)
    a = drop(x).numpy()
    mg.manual_seed(3)
    b = drop(x).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, drop(x).numpy())
    # gradient flows through the kept elements only, with the same scale
    xg = t32(np.ones((10, 10)), requires_grad=True)
    out = drop(xg)
    out.sum().backward()
    np.testing.assert_allclose(xg.grad.numpy(), out.numpy(), rtol=1e-6)
    assert nn.Dropout(0.0)(x) is x
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


# --- init -----------------------------------------------------------------------------------

def _param(shape):
    return nn.Parameter(np.zeros(shape, np.float32))


def test_xavier_statistics():
    mg.manual_seed(0)
    w = init.xavier_uniform_(_param((300, 200)))
    bound = math.sqrt(6 / 500)
    assert np.abs(w.numpy()).max() <= bound + 1e-7
    assert np.abs(w.numpy()).max() > 0.99 * bound
    assert abs(w.numpy().std() - bound / math.sqrt(3)) < 0.01 * bound
    assert abs(w.numpy().mean()) < 0.01 * bound
    w = init.xavier_uniform_(_param((300, 200)), gain=2.0)
    assert 1.98 * bound < np.abs(w.numpy()).max() <= 2 * bound + 1e-7
    w = init.xavier_normal_(_param((300, 200)))
    std = math.sqrt(2 / 500)
    assert abs(w.numpy().std() - std) < 0.02 * std and abs(w.numpy().mean()) < 0.02 * std


def test_kaiming_statistics():
    mg.manual_seed(1)
    w = init.kaiming_uniform_(_param((400, 250)))  # a=0: ReLU gain sqrt(2)
    bound = math.sqrt(6 / 250)
    assert bound * 0.99 < np.abs(w.numpy()).max() <= bound + 1e-7
    w = init.kaiming_uniform_(_param((400, 250)), mode="fan_out", nonlinearity="relu")
    bound = math.sqrt(6 / 400)
    assert bound * 0.99 < np.abs(w.numpy()).max() <= bound + 1e-7
    w = init.kaiming_normal_(_param((400, 250)))
    std = math.sqrt(2 / 250)
    assert abs(w.numpy().std() - std) < 0.02 * std
    w = init.kaiming_normal_(_param((400, 250)), mode="fan_out", nonlinearity="tanh")
    std = 5 / 3 / math.sqrt(400)
    assert abs(w.numpy().std() - std) < 0.02 * std
    # conv-style weights: fan_in = in_channels * kernel size
    w = init.kaiming_uniform_(_param((64, 16, 5)), nonlinearity="relu")
    bound = math.sqrt(6 / 80)
    assert bound * 0.98 < np.abs(w.numpy()).max() <= bound + 1e-7
    with pytest.raises(ValueError, match="mode"):
        init.kaiming_normal_(_param((2, 2)), mode="fan_avg")
    with pytest.raises(ValueError):
        init.xavier_uniform_(_param((5,)))


def test_simple_inits_and_gains():
    p = _param((3, 4))
    assert init.constant_(p, 2.5) is p
    np.testing.assert_array_equal(p.numpy(), 2.5)
    np.testing.assert_array_equal(init.zeros_(p).numpy(), 0)
    np.testing.assert_array_equal(init.ones_(p).numpy(), 1)
    mg.manual_seed(0)
    u = init.uniform_(_param((1000,)), -0.5, 2.0).numpy()
    assert u.min() >= -0.5 and u.max() < 2.0 and abs(u.mean() - 0.75) < 0.05
    n = init.normal_(_param((20000,)), 3.0, 0.5).numpy()
    assert abs(n.mean() - 3.0) < 0.02 and abs(n.std() - 0.5) < 0.02
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("linear") == 1.0


def test_gains_match_torch(torch):
    for args in [("relu",), ("tanh",), ("sigmoid",), ("linear",), ("leaky_relu",),
                 ("leaky_relu", 0.3), ("selu",)]:
        assert init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))


def test_seeded_init_is_deterministic():
    mg.manual_seed(42)
    a = Net()
    mg.manual_seed(42)
    b = Net()
    mg.manual_seed(43)
    c = Net()
    for (n, pa), (_, pb), (_, pc) in zip(a.named_parameters(), b.named_parameters(),
                                         c.named_parameters()):
        np.testing.assert_array_equal(pa.numpy(), pb.numpy(), err_msg=n)
        if pa.numpy().std() > 0:
            assert not np.array_equal(pa.numpy(), pc.numpy()), n
    mg.manual_seed(5)
    w1 = init.xavier_normal_(_param((4, 4))).numpy().copy()
    mg.manual_seed(5)
    np.testing.assert_array_equal(init.xavier_normal_(_param((4, 4))).numpy(), w1)


def test_default_inits_as_pytorch():
    mg.manual_seed(0)
    lin = nn.Linear(256, 300)
    bound = 1 / math.sqrt(256)
    assert bound * 0.99 < np.abs(lin.weight.numpy()).max() <= bound
    assert abs(lin.weight.numpy().std() - bound / math.sqrt(3)) < 0.02 * bound
    assert np.abs(lin.bias.numpy()).max() <= bound and lin.bias.numpy().std() > 0.5 * bound / math.sqrt(3)
    assert lin.weight.dtype == np.float32
    emb = nn.Embedding(500, 64)
    assert abs(emb.weight.numpy().std() - 1) < 0.02 and abs(emb.weight.numpy().mean()) < 0.02
    ln = nn.LayerNorm(7)
    np.testing.assert_array_equal(ln.weight.numpy(), 1)
    np.testing.assert_array_equal(ln.bias.numpy(), 0)
    bn = nn.BatchNorm1d(5)
    np.testing.assert_array_equal(bn.weight.numpy(), 1)
    np.testing.assert_array_equal(bn.bias.numpy(), 0)
    np.testing.assert_array_equal(bn.running_mean.numpy(), 0)
    np.testing.assert_array_equal(bn.running_var.numpy(), 1)
    E = 64
    mha = nn.MultiheadAttention(E, 4)
    xb = math.sqrt(6 / (E + 3 * E))  # xavier_uniform on the stacked (3E, E) matrix
    assert 0.98 * xb < np.abs(mha.in_proj_weight.numpy()).max() <= xb
    np.testing.assert_array_equal(mha.in_proj_bias.numpy(), 0)
    np.testing.assert_array_equal(mha.out_proj.bias.numpy(), 0)
    assert np.abs(mha.out_proj.weight.numpy()).max() <= 1 / math.sqrt(E)


def test_lecture_parameter_counts():
    assert nn.MultiheadAttention(512, 8, bias=False).num_parameters() == 1_048_576
    ffn = nn.Sequential(nn.Linear(512, 2048), nn.ReLU(), nn.Linear(2048, 512))
    assert ffn.num_parameters() == 2_099_712
    assert sum(p.numpy().size for p in ffn.parameters()) == 2_099_712
    assert nn.MultiheadAttention(512, 8).num_parameters() == 1_048_576 + 3 * 512 + 512


def test_double_converts_parameters_and_buffers():
    m = Small().double()
    assert all(p.dtype == np.float64 for p in m.parameters())
    assert m.bn.running_mean.dtype == np.float64
    assert m.bn.num_batches_tracked.dtype == np.int64
    assert all(p.dtype == np.float32 for p in m.float().parameters())


# --- parity with PyTorch through state dicts ------------------------------------------------

def _from_torch(ours, theirs):
    """Copy torch's weights into ours; the keys (in order) and shapes must be the same."""
    sd = {k: v.detach().numpy().copy() for k, v in theirs.state_dict().items()}
    assert list(ours.state_dict()) == list(sd)
    for k, v in ours.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    ours.load_state_dict(sd)
    return ours


def _backward_both(torch, ours, theirs, yo, yt, g, rtol=1e-4, atol=1e-5):
    """Backpropagate the array `g` from our output `yo` and PyTorch's `yt`: every parameter of
    `ours` gets the gradient its namesake in `theirs` gets."""
    yo.backward(t32(g))
    yt.backward(torch.tensor(g))
    tp = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), tp[name].grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=name)


def test_linear_matches_torch(torch):
    torch.manual_seed(0)
    theirs = torch.nn.Linear(5, 4)
    ours = _from_torch(nn.Linear(5, 4), theirs)
    x = np.random.default_rng(0).standard_normal((3, 2, 5)).astype(np.float32)
    xo, xt = t32(x, True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = np.cos(x[..., :4])
    _backward_both(torch, ours, theirs, yo, yt, g)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    # and our weights load into torch
    theirs2 = torch.nn.Linear(5, 4, bias=False)
    ours2 = nn.Linear(5, 4, bias=False)
    theirs2.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours2.state_dict().items()})
    np.testing.assert_allclose(theirs2(torch.tensor(x)).detach().numpy(), ours2(t32(x)).numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [4, (3, 4)])
def test_layernorm_matches_torch(torch, shape):
    torch.manual_seed(1)
    theirs = torch.nn.LayerNorm(shape)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = _from_torch(nn.LayerNorm(shape), theirs)
    x = (np.random.default_rng(1).standard_normal((2, 3, 4)) * 4 + 2).astype(np.float32)
    xo, xt = t32(x, True), torch.tensor(x, requires_grad=True)
    yo, yt = ours(xo), theirs(xt)
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    g = np.sin(x)
    _backward_both(torch, ours, theirs, yo, yt, g)
    np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batchnorm_matches_torch(torch, shape):
    torch.manual_seed(2)
    theirs = torch.nn.BatchNorm1d(3, momentum=0.3)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    ours = _from_torch(nn.BatchNorm1d(3, momentum=0.3), theirs)
    rng = np.random.default_rng(2)
    for step in range(3):
        x = (rng.standard_normal(shape) * (step + 2) + step).astype(np.float32)
        xo, xt = t32(x, True), torch.tensor(x, requires_grad=True)
        yo, yt = ours(xo), theirs(xt)
        np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        g = np.cos(x)
        ours.zero_grad()
        theirs.zero_grad()
        _backward_both(torch, ours, theirs, yo, yt, g)
        np.testing.assert_allclose(xo.grad.numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, err_msg=k)
    ours.eval()
    theirs.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(ours(t32(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_embedding_matches_torch(torch):
    torch.manual_seed(3)
    theirs = torch.nn.Embedding(9, 4, padding_idx=1)
    ours = _from_torch(nn.Embedding(9, 4, padding_idx=1), theirs)
    ids = np.array([[1, 2, 3], [8, 1, 2]])
    yo, yt = ours(mg.tensor(ids)), theirs(torch.tensor(ids))
    np.testing.assert_allclose(yo.numpy(), yt.detach().numpy())
    g = np.random.default_rng(3).standard_normal((2, 3, 4)).astype(np.float32)
    _backward_both(torch, ours, theirs, yo, yt, g, rtol=1e-6, atol=1e-7)


def test_multihead_attention_state_dict_matches_torch(torch):
    torch.manual_seed(4)
    for kwargs in [{}, {"bias": False}, {"kdim": 3, "vdim": 5}]:
        theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
        ours = _from_torch(nn.MultiheadAttention(8, 2, **kwargs), theirs)
        rng = np.random.default_rng(4)
        q = rng.standard_normal((3, 2, 8)).astype(np.float32)
        k = rng.standard_normal((4, 2, kwargs.get("kdim", 8))).astype(np.float32)
        v = rng.standard_normal((4, 2, kwargs.get("vdim", 8))).astype(np.float32)
        qo, qt = t32(q, True), torch.tensor(q, requires_grad=True)
        (yo, wo), (yt, wt) = ours(qo, t32(k), t32(v)), theirs(qt, torch.tensor(k), torch.tensor(v))
        np.testing.assert_allclose(yo.numpy(), yt.detach().numpy(), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(wo.numpy(), wt.detach().numpy(), rtol=1e-4, atol=1e-6)
        g = np.cos(q)
        _backward_both(torch, ours, theirs, yo, yt, g)
        np.testing.assert_allclose(qo.grad.numpy(), qt.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_nested_model_state_dict_keys_match_torch(torch):
    ours = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(),
                         nn.Sequential(nn.LayerNorm(6), nn.Linear(6, 2)))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(),
                                 torch.nn.Sequential(torch.nn.LayerNorm(6), torch.nn.Linear(6, 2)))
    tsd = theirs.state_dict()
    osd = ours.state_dict()
    assert set(osd) == set(tsd)
    assert all(tuple(osd[k].shape) == tuple(tsd[k].shape) for k in tsd)
    ours.load_state_dict({k: v.numpy() for k, v in tsd.items()})
    x = np.random.default_rng(5).standard_normal((5, 4)).astype(np.float32)
    ours.eval()
    theirs.eval()
    np.testing.assert_allclose(ours(t32(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)


def test_batchnorm_without_bias_matches_torch(torch):
    """PyTorch's keyword `bias=False` keeps the scale and drops the shift."""
    x = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    ours, theirs = nn.BatchNorm1d(3, bias=False), torch.nn.BatchNorm1d(3, bias=False)
    with torch.no_grad():
        theirs.weight.mul_(2.0)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert ours.bias is None and sorted(ours.state_dict()) == sorted(theirs.state_dict())
    np.testing.assert_allclose(ours(mg.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
