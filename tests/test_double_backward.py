"""Double backward (create_graph=True) through every op with a tensor-level rule: float64
gradgradcheck (second derivatives against central differences of the first), and the same
second derivatives as PyTorch on the same inputs. Ops without a rule raise, naming the op."""
import numpy as np
import pytest

import minigrad as mg
from helpers import differentiable_ops
from minigrad.autograd import grad, gradgradcheck
from minigrad.autograd.op import Op
from helpers import square_function

RNG = np.random.default_rng(7)


def _u(*shape, low=-2.0, high=2.0):
    return RNG.uniform(low, high, shape)


def _pos(*shape):
    return _u(*shape, low=0.5, high=2.0)


def F(lib):
    return lib.nn.functional


IDX = np.array([2, 0, 2])
GATHER = np.array([[0, 3], [1, 1], [3, 2]])
TARGET = np.array([1, 0, 3])
PROB = np.random.default_rng(11).uniform(0.05, 0.95, (3, 4))  # a target in (0, 1)
MASK = np.array([[True, False, True, False]] * 3)

# name -> (program(lib, *tensors), input arrays); every input requires grad
OPS = {
    "add_broadcast": (lambda lib, a, b: a + b, (_u(3, 4), _u(4))),
    "sub": (lambda lib, a, b: a - b, (_u(3, 4), _u(3, 1))),
    "mul_broadcast": (lambda lib, a, b: a * b * a, (_u(3, 4), _u(4))),
    "div": (lambda lib, a, b: a / b, (_u(3, 4), _pos(3, 4))),
    "pow_tensor": (lambda lib, a, b: a ** b, (_pos(3, 4), _u(3, 4))),
    "pow_scalar": (lambda lib, a: a ** 3, (_u(3, 4),)),
    "maximum": (lambda lib, a, b: lib.maximum(a, b) * a, (_u(3, 4), _u(3, 4))),
    "minimum": (lambda lib, a, b: lib.minimum(a, b) * b, (_u(3, 4), _u(3, 4))),
    "neg": (lambda lib, a: -a * a, (_u(3, 4),)),
    "exp": (lambda lib, a: a.exp(), (_u(3, 4),)),
    "log": (lambda lib, a: a.log(), (_pos(3, 4),)),
    "sqrt": (lambda lib, a: a.sqrt(), (_pos(3, 4),)),
    "abs": (lambda lib, a: a.abs() * a, (_u(3, 4),)),
    "tanh": (lambda lib, a: a.tanh(), (_u(3, 4),)),
    "sigmoid": (lambda lib, a: a.sigmoid(), (_u(3, 4),)),
    "relu": (lambda lib, a: a.relu() * a, (_u(3, 4),)),
    "leaky_relu": (lambda lib, a: F(lib).leaky_relu(a, 0.1) * a, (_u(3, 4),)),
    "gelu": (lambda lib, a: F(lib).gelu(a), (_u(3, 4),)),
    "gelu_tanh": (lambda lib, a: F(lib).gelu(a, approximate="tanh"), (_u(3, 4),)),
    "silu": (lambda lib, a: F(lib).silu(a), (_u(3, 4),)),
    "clamp": (lambda lib, a: a.clamp(-1.0, 1.0) * a, (_u(3, 4),)),
    "sin_cos": (lambda lib, a: a.sin() * a.cos(), (_u(3, 4),)),
    "where": (lambda lib, a, b: lib.where(lib.tensor(MASK), a * a, b * b), (_u(3, 4), _u(3, 4))),
    "masked_fill": (lambda lib, a: (a * a).masked_fill(lib.tensor(MASK), 0.5), (_u(3, 4),)),
    "sum": (lambda lib, a: (a * a).sum(1), (_u(3, 4),)),
    "mean_keepdim": (lambda lib, a: (a * a).mean(0, keepdim=True) * a, (_u(3, 4),)),
    "amax": (lambda lib, a: (a * a).amax(1), (_u(3, 4),)),
    "max_dim": (lambda lib, a: (a * a).max(1).values, (_u(3, 4),)),
    "var": (lambda lib, a: a.var(1), (_u(3, 4),)),
    "std": (lambda lib, a: a.std(0), (_u(3, 4),)),
    "binary_cross_entropy": (lambda lib, a: F(lib).binary_cross_entropy(
        a.sigmoid(), lib.tensor(PROB)), (_u(3, 4),)),
    "logsumexp": (lambda lib, a: a.logsumexp(1), (_u(3, 4),)),
    "cumsum": (lambda lib, a: (a * a).cumsum(1), (_u(3, 4),)),
    "reshape_permute": (lambda lib, a: (a * a).reshape(2, 6).permute(1, 0), (_u(3, 4),)),
    "expand": (lambda lib, a: (a * a).expand(2, 3, 4), (_u(3, 4),)),
    "getitem_basic": (lambda lib, a: (a * a)[1:, ::2], (_u(3, 4),)),
    "getitem_advanced": (lambda lib, a: (a * a)[lib.tensor(IDX)], (_u(3, 4),)),
    "gather": (lambda lib, a: (a * a).gather(1, lib.tensor(GATHER)), (_u(3, 4),)),
    "index_select": (lambda lib, a: (a * a).index_select(0, lib.tensor(IDX)), (_u(3, 4),)),
    "embedding": (lambda lib, w: F(lib).embedding(lib.tensor(GATHER), w * w), (_u(4, 3),)),
    "embedding_padding": (lambda lib, w: F(lib).embedding(lib.tensor(GATHER), w * w,
                                                          padding_idx=1), (_u(4, 3),)),
    "index_put": (lambda lib, a, b: (a * a).index_put((lib.tensor(IDX[:2]),), b * b),
                  (_u(3, 4), _u(2, 4))),
    "index_add": (lambda lib, a, b: (a * a).index_add(0, lib.tensor(IDX), b * b),
                  (_u(3, 4), _u(3, 4))),
    "scatter": (lambda lib, a, b: (a * a).scatter(1, lib.tensor(GATHER[:, :1]), b * b),
                (_u(3, 4), _u(3, 1))),
    "scatter_add": (lambda lib, a, b: (a * a).scatter_add(1, lib.tensor(GATHER), b * a[:, :2]),
                    (_u(3, 4), _u(3, 2))),
    "scatter_reduce_sum": (lambda lib, a, b: (a * a).scatter_reduce(
        1, lib.tensor(GATHER), b * b, "sum", include_self=False), (_u(3, 4), _u(3, 2))),
    "scatter_reduce_mean": (lambda lib, a, b: (a * a).scatter_reduce(
        1, lib.tensor(GATHER), b * a[:, :2], "mean"), (_u(3, 4), _u(3, 2))),
    "scatter_reduce_amax": (lambda lib, a, b: (a * a).scatter_reduce(
        0, lib.tensor(GATHER[:2, :2] % 3), b * b, "amax"), (_u(3, 4), _u(2, 2))),
    "scatter_reduce_prod": (lambda lib, a, b: (a * b).scatter_reduce(
        1, lib.tensor(GATHER), b[:, :2] * b[:, 1:3], "prod", include_self=False),
                            (_u(3, 4), _u(3, 4))),
    "cat": (lambda lib, a, b: lib.cat([a * a, b * a[:2]], 0), (_u(3, 4), _u(2, 4))),
    "stack": (lambda lib, a, b: lib.stack([a * b, b], 1), (_u(3, 4), _u(3, 4))),
    "matmul": (lambda lib, a, b: a @ b, (_u(3, 4), _u(4, 2))),
    "matmul_batched": (lambda lib, a, b: a @ b, (_u(2, 3, 4), _u(4, 2))),
    "matmul_vector": (lambda lib, a, b: (a @ b) * (b @ a.t()).sum(), (_u(3, 4), _u(4))),
    "linear": (lambda lib, x, w, b: F(lib).linear(x, w, b).tanh(), (_u(2, 3, 4), _u(5, 4), _u(5))),
    "softmax": (lambda lib, a: a.softmax(-1), (_u(3, 4),)),
    "softmax_dim0": (lambda lib, a: a.softmax(0), (_u(3, 4),)),
    "log_softmax": (lambda lib, a: a.log_softmax(-1), (_u(3, 4),)),
    "layer_norm": (lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b), (_u(3, 4), _u(4), _u(4))),
    "layer_norm_plain": (lambda lib, x: F(lib).layer_norm(x, (4,)), (_u(2, 3, 4),)),
    "cross_entropy": (lambda lib, x: F(lib).cross_entropy(x, lib.tensor(TARGET)), (_u(3, 4),)),
    "cross_entropy_smooth_none": (lambda lib, x: F(lib).cross_entropy(
        x, lib.tensor(TARGET), reduction="none", label_smoothing=0.1), (_u(3, 4),)),
    "einsum": (lambda lib, a, b: lib.einsum("ij,jk->ik", a, b * b), (_u(3, 4), _u(4, 2))),
    "einsum_batched": (lambda lib, a, b: lib.einsum("bij,j->bi", a * a, b),
                       (_u(2, 3, 4), _u(4))),
    "norm_2": (lambda lib, a: a.norm(dim=1), (_u(3, 4),)),
    "norm_3": (lambda lib, a: a.norm(p=3), (_u(3, 4),)),
    "mse_loss": (lambda lib, x, y: F(lib).mse_loss(x * x, y), (_u(3, 4), _u(3, 4))),
}

FAST = ("mul_broadcast", "pow_tensor", "tanh", "gelu", "var", "getitem_advanced", "matmul_vector",
        "linear", "softmax", "log_softmax", "layer_norm", "cross_entropy", "cat")


def _params(names):
    return [pytest.param(n, marks=() if n in FAST else pytest.mark.slow) for n in names]


def _inputs(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("name", _params(OPS))
def test_gradgradcheck(name):
    program, arrays = OPS[name]
    assert gradgradcheck(lambda *xs: program(mg, *xs), _inputs(mg, arrays))


def _second_derivatives(lib, program, arrays):
    """grad(out, xs, v, create_graph) then the gradients of (grads * w).sum() w.r.t. xs, v."""
    xs = _inputs(lib, arrays)
    out = program(lib, *xs)
    rng = np.random.default_rng(3)
    v = lib.tensor(rng.standard_normal(tuple(out.shape)), requires_grad=True)
    firsts = lib.autograd.grad(out, xs, v, create_graph=True)
    total = sum((g * lib.tensor(rng.standard_normal(tuple(g.shape)))).sum() for g in firsts)
    seconds = lib.autograd.grad(total, xs + [v], allow_unused=True)
    return ([g.detach().numpy() for g in firsts],
            [None if s is None else s.detach().numpy() for s in seconds])


@pytest.mark.parametrize("name", _params(OPS))
def test_second_derivatives_match_torch(name, torch):
    program, arrays = OPS[name]
    mine = _second_derivatives(mg, program, arrays)
    theirs = _second_derivatives(torch, program, arrays)
    for m, t in zip(mine[0] + mine[1], theirs[0] + theirs[1]):
        if t is None or m is None:  # an unused input: PyTorch's None, minigrad's None or zeros
            assert m is None or not np.any(m), name
            assert t is None or not np.any(t), name
            continue
        np.testing.assert_allclose(m, t, rtol=1e-7, atol=1e-9, err_msg=name)


def test_triple_backward_of_a_cube():
    x = mg.tensor([1.5, -2.0], dtype=mg.float64, requires_grad=True)
    (g1,) = grad((x ** 3).sum(), x, create_graph=True)
    (g2,) = grad(g1.sum(), x, create_graph=True)
    (g3,) = grad(g2.sum(), x)
    np.testing.assert_allclose(g1.numpy(), 3 * x.numpy() ** 2)
    np.testing.assert_allclose(g2.numpy(), 6 * x.numpy())
    np.testing.assert_allclose(g3.numpy(), [6.0, 6.0])


def test_every_op_has_a_rule_and_a_custom_function_is_named():
    from minigrad.graph_rules import RULES
    ops = differentiable_ops()
    assert {"GRUGates", "LSTMGates"} <= {op.__name__ for op in ops}  # the layers' fused ops too
    assert sorted(op.__name__ for op in ops - set(RULES)) == []

    Square = square_function()
    x = mg.tensor([3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="SquareBackward"):
        (Square.apply(x.exp()) * 2).sum().backward(create_graph=True)


def test_create_graph_grad_of_dropout_uses_the_same_mask():
    x = mg.tensor(_u(4, 6), requires_grad=True)
    y = mg.dropout(x * x, p=0.5, seed=11)
    (g,) = grad(y.sum(), x, create_graph=True)
    (h,) = grad(g.sum(), x)
    mask = (mg.dropout(mg.ones(4, 6, dtype=mg.float64), p=0.5, seed=11)).numpy()
    np.testing.assert_allclose(g.numpy(), 2 * x.numpy() * mask)
    np.testing.assert_allclose(h.numpy(), 2 * mask)


ALLOWED = np.array([[True, True, False, True]] * 3)
FUSED = {  # a fused op and the same computation from separate ops
    "masked_softmax_dropout": (
        lambda x: mg.ops.MaskedSoftmaxDropout.apply(x * x, allowed=ALLOWED, p=0.3, seed=5),
        lambda x: mg.dropout((x * x).masked_fill(mg.tensor(~ALLOWED), float("-inf")).softmax(-1),
                             p=0.3, seed=5), (_u(2, 3, 4),)),
    "dropout_add_layer_norm": (
        lambda x, s, w, b: mg.ops.DropoutAddLayerNorm.apply(x, s * s, w, b, p=0.4, seed=3),
        lambda x, s, w, b: mg.nn.functional.layer_norm(x + mg.dropout(s * s, p=0.4, seed=3),
                                                       (4,), w, b),
        (_u(3, 4), _u(3, 4), _u(4), _u(4))),
    "dropout_add": (lambda x, s: mg.ops.DropoutAdd.apply(x * s, s * s, p=0.4, seed=3),
                    lambda x, s: x * s + mg.dropout(s * s, p=0.4, seed=3), (_u(3, 4), _u(3, 4))),
    "relu_dropout": (lambda x: mg.ops.ReluDropout.apply(x * x - 1, p=0.4, seed=3) * x,
                     lambda x: mg.dropout((x * x - 1).relu(), p=0.4, seed=3) * x, (_u(3, 4),)),
}


@pytest.mark.parametrize("name", FUSED)
def test_fused_ops_differentiate_twice_as_their_parts(name):
    fused, parts, arrays = FUSED[name]
    program = {"fused": lambda lib, *xs: fused(*xs), "parts": lambda lib, *xs: parts(*xs)}
    firsts, seconds = _second_derivatives(mg, program["fused"], arrays)
    want_firsts, want_seconds = _second_derivatives(mg, program["parts"], arrays)
    for got, want in zip(firsts + seconds, want_firsts + want_seconds):
        if got is None or want is None:  # unused: None in one, zeros or None in the other
            assert not np.any(want if got is None else got), name
            continue
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=name)
    assert gradgradcheck(fused, _inputs(mg, arrays))


def test_scatter_from_a_larger_source():
    """src larger than index: only its leading block is written (PyTorch's own double
    backward refuses this case, so it is checked against finite differences only)."""
    index = mg.tensor(GATHER[:, :1])
    assert gradgradcheck(lambda a, b: (a * a).scatter(1, index, b * b),
                         _inputs(mg, (_u(3, 4), _u(3, 2))))


class Cube(Op):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a ** 3

    @staticmethod
    def backward(ctx, g):
        return 3 * g * ctx.saved[0] ** 2


def test_gradgradcheck_catches_a_wrong_rule():
    from minigrad.graph_rules import RULES, rule, saved_input
    x = mg.tensor(_u(3), requires_grad=True)
    try:
        @rule(Cube)
        def wrong(ctx, g):  # the right first derivative, built so its own derivative is off
            a = saved_input(ctx, 0, ctx.saved[0])
            return 3 * g * a * a.detach()
        with pytest.raises(AssertionError, match="gradcheck: input 0"):
            gradgradcheck(Cube.apply, [x])

        @rule(Cube)
        def right(ctx, g):
            a = saved_input(ctx, 0, ctx.saved[0])
            return 3 * g * a * a
        assert gradgradcheck(Cube.apply, [x])
    finally:
        RULES.pop(Cube, None)


def test_float32_second_derivatives_stay_float32(torch):
    res, xs, ws = [], _u(3, 4).astype(np.float32), _u(4, 2).astype(np.float32)
    for lib in (mg, torch):
        x, w = lib.tensor(xs, requires_grad=True), lib.tensor(ws, requires_grad=True)
        (g,) = lib.autograd.grad(F(lib).gelu(x @ w).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), w)
        assert str(g.dtype).endswith("float32") and str(h.dtype).endswith("float32")
        res.append(h.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_gradient_penalty_through_a_training_transformer_layer(norm_first):
    """A penalty on the weights' gradients, through every fused op a Transformer layer runs
    in training (masked softmax + dropout, ReLU + dropout, dropout + add (+ layer norm)):
    its derivative in the input against central differences (dropout masks from one seed)."""
    from minigrad.autograd import gradcheck
    mg.manual_seed(0)
    layer = mg.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.2,
                                          batch_first=True, norm_first=norm_first).double()
    weights = list(layer.parameters())[:4]
    causal = mg.tensor(np.triu(np.ones((3, 3), bool), 1))

    def penalty(x):
        mg.manual_seed(1)
        with mg.enable_grad():  # gradcheck evaluates it under no_grad for its differences
            out = layer(x, src_mask=causal)
            gs = grad((out * out).sum(), weights, create_graph=True)
            return sum((g * g).sum() for g in gs)

    assert gradcheck(penalty, [mg.tensor(_u(2, 3, 8), requires_grad=True)])
