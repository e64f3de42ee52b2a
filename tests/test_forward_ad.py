"""Forward mode (minigrad.autograd.forward_ad): the tangent of every op with a rule equals the
Jacobian-vector product through reverse mode (autograd.functional.jvp) and PyTorch's forward
mode on the same inputs; an op without a rule raises, naming the op."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from helpers import differentiable_ops
from minigrad.autograd.functional import jvp
from helpers import square_function
from test_double_backward import OPS

# every op program of the double-backward table; the first ones run in the fast suite
FAST = ("mul_broadcast", "pow_tensor", "gelu", "where", "var", "getitem_advanced", "cat",
        "matmul_vector", "linear", "softmax_dim0", "log_softmax", "layer_norm",
        "cross_entropy_smooth_none")


NO_TORCH_TANGENT = ("scatter_reduce_prod",)


def _tangents(arrays, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(a.shape) for a in arrays]


def _forward_mode(lib, fw, program, arrays, tangents):
    with fw.dual_level():
        duals = [fw.make_dual(lib.tensor(a), lib.tensor(t)) for a, t in zip(arrays, tangents)]
        out = program(lib, *duals)
        primal, tangent = fw.unpack_dual(out)
        return primal.detach().numpy().copy(), None if tangent is None else tangent.numpy().copy()


@pytest.mark.parametrize("name", [pytest.param(n, marks=() if n in FAST else pytest.mark.slow)
                                  for n in OPS])
def test_tangent_matches_reverse_mode_and_torch(name, torch):
    program, arrays = OPS[name]
    tangents = _tangents(arrays)
    primal, tangent = _forward_mode(mg, fwAD, program, arrays, tangents)
    _, reverse = jvp(lambda *xs: program(mg, *xs), tuple(mg.tensor(a) for a in arrays),
                     tuple(mg.tensor(t) for t in tangents))
    if name != "embedding_padding":  # PyTorch's reverse mode leaves out the padding row,
        # its forward mode does not; minigrad does as PyTorch in each
        np.testing.assert_allclose(tangent, reverse.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)
    t_primal, t_tangent = _forward_mode(torch, torch.autograd.forward_ad, program, arrays,
                                        tangents)
    np.testing.assert_allclose(primal, t_primal, rtol=1e-12, err_msg=name)
    if t_tangent is None:  # PyTorch has no forward-mode formula for it (no tangent, no error)
        assert name in NO_TORCH_TANGENT, name
        return
    np.testing.assert_allclose(tangent, t_tangent, rtol=1e-9, atol=1e-12, err_msg=name)


def test_unpack_dual_is_a_named_pair_and_the_level_closes():
    x = mg.tensor([1.0, 2.0], dtype=mg.float64)
    with fwAD.dual_level():
        d = fwAD.make_dual(x, mg.tensor([1.0, 0.0], dtype=mg.float64))
        u = fwAD.unpack_dual(d * d)
        assert u.tangent.numpy().tolist() == [2.0, 0.0]
        assert u.primal.numpy().tolist() == [1.0, 4.0] and not u.primal.requires_grad
        assert fwAD.unpack_dual(mg.ones(2)).tangent is None
    assert fwAD.unpack_dual(d).tangent is None  # the level closed


def test_a_primal_that_requires_grad_keeps_its_graph():
    w = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    with fwAD.dual_level():
        d = fwAD.make_dual(w, mg.tensor([1.0, 1.0], dtype=mg.float64))
        primal, tangent = fwAD.unpack_dual((d * d).sum())
    primal.backward()
    np.testing.assert_allclose(w.grad.numpy(), [1.0, -2.0])
    np.testing.assert_allclose(tangent.numpy(), 2 * (0.5 - 1.0))


Square = square_function()


def test_every_op_has_a_rule():
    from minigrad.jvp_rules import JVP_RULES
    ops = differentiable_ops()
    assert {"GRUGates", "LSTMGates"} <= {op.__name__ for op in ops}  # the layers' fused ops too
    assert sorted(op.__name__ for op in ops - set(JVP_RULES)) == []


def test_an_op_without_a_rule_names_itself():
    with fwAD.dual_level():
        d = fwAD.make_dual(mg.tensor([3.0, 4.0]), mg.tensor([1.0, 0.0]))
        with pytest.raises(RuntimeError, match="Square: forward-mode AD has no rule"):
            Square.apply(d)


def test_misuse_is_refused():
    x = mg.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no forward AD level"):
        fwAD.make_dual(x, x)
    with fwAD.dual_level():
        with pytest.raises(ValueError, match="does not match"):
            fwAD.make_dual(x, mg.ones(3))
        with pytest.raises(RuntimeError, match="nested"):
            fwAD.enter_dual_level()
        with mg.no_grad(), pytest.raises(RuntimeError, match="grad mode"):
            fwAD.make_dual(x, x)


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
def test_recurrent_gates_push_tangents_forward(name, torch):
    """The fused GRU and LSTM gates' forward rules: the tangent of the whole layer's output
    equals PyTorch's jvp, and with padded steps (lengths=) central differences of minigrad's
    own forward pass."""
    rng = np.random.default_rng(4)
    torch.manual_seed(0)
    theirs = getattr(torch.nn, name)(3, 4, batch_first=True).double()
    layer = getattr(mg.nn, name)(3, 4, batch_first=True).to(mg.float64)
    layer.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                           theirs.state_dict().items()})
    x, t = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 3))
    for lengths in (None, [5, 3]):
        with fwAD.dual_level():
            out = layer(fwAD.make_dual(mg.tensor(x), mg.tensor(t)), lengths=lengths)[0]
            tangent = fwAD.unpack_dual(out).tangent.numpy()
        if lengths is None:
            _, ref = torch.func.jvp(lambda a: theirs(a)[0], (torch.tensor(x),),
                                    (torch.tensor(t),))
            ref = ref.detach().numpy()
        else:
            with mg.no_grad():
                f = [layer(mg.tensor(x + s * 1e-6 * t), lengths=lengths)[0].numpy()
                     for s in (1, -1)]
            ref = (f[0] - f[1]) / 2e-6
        np.testing.assert_allclose(tangent, ref, rtol=1e-6, atol=1e-8)
