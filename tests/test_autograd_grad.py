"""autograd.grad and backward(gradient, retain_graph, create_graph, inputs): PyTorch's values,
its errors, and what each leaves in `.grad`."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import grad

A = np.array([[0.5, -1.0, 2.0], [1.5, 0.3, -0.7]])
B = np.array([0.2, -0.4, 1.1])


def _pair(lib):
    return (lib.tensor(A, requires_grad=True), lib.tensor(B, requires_grad=True))


def _program(lib, a, b):
    h = (a * b).tanh()
    return (h * a).sum(), h.exp()


def test_grad_returns_without_touching_grad(torch):
    for lib in (mg, torch):
        a, b = _pair(lib)
        loss, _ = _program(lib, a, b)
        ga, gb = lib.autograd.grad(loss, [a, b])
        assert a.grad is None and b.grad is None
        if lib is mg:
            mine = (ga.numpy(), gb.numpy())
            assert not ga.requires_grad
        else:
            np.testing.assert_allclose(mine[0], ga.numpy(), rtol=1e-12)
            np.testing.assert_allclose(mine[1], gb.numpy(), rtol=1e-12)


def test_grad_of_several_outputs_with_grad_outputs(torch):
    res = []
    for lib in (mg, torch):
        a, b = _pair(lib)
        loss, h = _program(lib, a, b)
        v = lib.tensor(np.arange(6.0).reshape(2, 3))
        res.append([g.detach().numpy() for g in lib.autograd.grad([loss, h], (a, b),
                                                                   [None, v])])
    for m, t in zip(*res):
        np.testing.assert_allclose(m, t, rtol=1e-12)


def test_grad_of_a_non_leaf_input_stops_there(torch):
    res = []
    for lib in (mg, torch):
        a, b = _pair(lib)
        h = a * b
        loss = (h.sin() * a).sum()
        gh, ga = lib.autograd.grad(loss, [h, a])
        res.append((gh.numpy(), ga.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


@pytest.mark.parametrize("case, match", [
    ("unused", "appears to not have been used in the graph"),
    ("non_scalar", "grad can be implicitly created only for scalar outputs"),
    ("input_no_grad", "does not require grad"),
    ("output_no_grad", "does not require grad and does not have a grad_fn"),
    ("shape", "mismatch in shape"),
])
def test_grad_errors_are_pytorchs(case, match, torch):
    for lib in (torch, mg):
        a, b = _pair(lib)
        c = lib.tensor(B, requires_grad=True)
        plain = lib.tensor(B)
        args = {"unused": ((a * 2).sum(), [a, c]), "non_scalar": (a * 2, a),
                "input_no_grad": ((a * 2).sum(), plain), "output_no_grad": (plain * 2, a),
                "shape": ((a * 2), a)}[case]
        kwargs = {"grad_outputs": lib.ones(3)} if case == "shape" else {}
        with pytest.raises(RuntimeError, match=match if lib is mg else None):
            lib.autograd.grad(*args, **kwargs)


def test_allow_unused_and_materialize_grads(torch):
    for lib in (torch, mg):
        a, b = _pair(lib)
        ga, gb = lib.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)
        assert gb is None
        ga, gb = lib.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)
        assert gb.shape == b.shape and not np.any(gb.numpy())
        with pytest.raises(ValueError, match="allow_unused"):
            lib.autograd.grad((a * 2).sum(), [a, b], allow_unused=False, materialize_grads=True)


def test_is_grads_batched_gives_one_result_per_vector(torch):
    res = []
    for lib in (mg, torch):
        a, b = _pair(lib)
        h = (a * b).tanh()
        vs = lib.tensor(np.random.default_rng(0).standard_normal((5, 2, 3)))
        res.append([g.numpy() for g in lib.autograd.grad(h, [a, b], vs,
                                                         is_grads_batched=True)])
    for m, t in zip(*res):
        assert m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=1e-12)


def test_grad_frees_the_graph_unless_retained():
    a, b = _pair(mg)
    loss, _ = _program(mg, a, b)
    grad(loss, a)
    with pytest.raises(RuntimeError, match="second time"):
        grad(loss, a)
    loss, _ = _program(mg, a, b)
    first = grad(loss, a, retain_graph=True)[0].numpy()
    np.testing.assert_array_equal(grad(loss, a)[0].numpy(), first)


def test_backward_inputs_accumulates_only_there(torch):
    res = []
    for lib in (mg, torch):
        a, b = _pair(lib)
        h = a * b
        h.retain_grad()
        loss = (h.sin() * a).sum()
        loss.backward(inputs=[b, h], retain_graph=True)
        assert a.grad is None
        loss.backward(inputs=b)  # adds up, as every backward does
        res.append((b.grad.numpy(), h.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_backward_create_graph_keeps_a_graph_in_grad(torch):
    res = []
    for lib in (mg, torch):
        a, b = _pair(lib)
        ((a * a * b).sum()).backward(create_graph=True)
        assert a.grad.requires_grad
        penalty = (a.grad * a.grad).sum()  # a gradient penalty
        a.grad = b.grad = None
        penalty.backward()
        res.append((a.grad.numpy(), b.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0])
    np.testing.assert_allclose(res[0][1], res[1][1])


def test_backward_retain_graph_defaults_to_create_graph():
    a, b = _pair(mg)
    loss = (a * b).exp().sum()
    loss.backward(create_graph=True)
    loss.backward()  # the graph was retained by the first call, not by this one
    with pytest.raises(RuntimeError, match="second time"):
        loss.backward()


def test_hooks_see_and_replace_gradients_under_create_graph():
    a, b = _pair(mg)
    h = a * b
    seen = []
    h.register_hook(lambda g: seen.append(g.requires_grad) or g * 2)
    (ga,) = grad((h * h).sum(), a, create_graph=True)
    assert seen == [True]
    np.testing.assert_allclose(ga.numpy(), 4 * A * B * B)


def test_first_order_grad_equals_backward():
    a, b = _pair(mg)
    loss, _ = _program(mg, a, b)
    ga, gb = grad(loss, [a, b], retain_graph=True)
    loss.backward()
    np.testing.assert_array_equal(ga.numpy(), a.grad.numpy())
    np.testing.assert_array_equal(gb.numpy(), b.grad.numpy())


def _mlp(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.LayerNorm(8), nn.GELU(), nn.Linear(8, 1)).double()


def test_gradient_penalty_through_a_model_matches_torch(torch):
    """WGAN-GP's penalty: (|d critic / d input| - 1)^2, trained through its own gradient."""
    x = np.random.default_rng(4).standard_normal((5, 4))
    res = []
    mine = _mlp(mg)
    theirs = _mlp(torch)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in mine.state_dict().items()})
    for lib, model in ((mg, mine), (torch, theirs)):
        inp = lib.tensor(x, requires_grad=True)
        (g,) = lib.autograd.grad(model(inp).sum(), inp, create_graph=True)
        penalty = ((g.pow(2).sum(1).sqrt() - 1) ** 2).mean()
        penalty.backward()
        res.append([penalty.detach().numpy()] + [0 if p.grad is None else p.grad.numpy()
                                                 for p in model.parameters()])
    for m, t in zip(*res):
        np.testing.assert_allclose(m, t, rtol=1e-9, atol=1e-12)


def test_hessian_vector_product_of_a_model_equals_the_full_hessian():
    model = _mlp(mg)
    x = mg.tensor(np.random.default_rng(5).standard_normal((3, 4)))
    w = model[3].weight  # (1, 8): the Hessian of the loss in these 8 weights

    def loss_of(weight):
        h = model[2](model[1](model[0](x)))
        y = h @ weight.t()
        return (y.tanh() ** 2).mean() + (y ** 3).mean()

    full = mg.autograd.functional.hessian(loss_of, w.detach()).numpy().reshape(8, 8)
    v = mg.tensor(np.random.default_rng(6).standard_normal((1, 8)))
    _, hv = mg.autograd.functional.hvp(loss_of, w.detach(), v)
    (g,) = grad(loss_of(w), w, create_graph=True)  # the same by hand: grad of (g . v)
    (by_hand,) = grad((g * v).sum(), w)
    np.testing.assert_allclose(hv.numpy().reshape(8), full @ v.numpy().reshape(8), rtol=1e-10)
    np.testing.assert_allclose(by_hand.numpy(), hv.numpy(), rtol=1e-10)
    np.testing.assert_allclose(full, full.T, rtol=1e-10, atol=1e-12)


def test_first_order_backward_never_enters_the_general_engine(monkeypatch):
    """backward() without create_graph or inputs stays on autograd.run_backward, the
    benchmarked first-order core; the general engine runs only when asked for."""
    import minigrad.autograd.gradients as api

    def refuse(*args, **kwargs):
        raise AssertionError("the general engine ran")
    monkeypatch.setattr(api, "execute", refuse)
    a, b = _pair(mg)
    loss, _ = _program(mg, a, b)
    loss.backward(retain_graph=True)
    loss.backward()
    assert a.grad is not None
    with pytest.raises(AssertionError, match="general engine"):
        _program(mg, a, b)[0].backward(create_graph=True)


def test_gradcheck_of_a_function_that_takes_a_gradient(torch):
    """gradcheck evaluates the function with grad mode on for its differences too, as
    PyTorch's does, so a function built on grad(create_graph=True) can be checked."""
    def first_derivative(lib):
        def f(x):
            (g,) = lib.autograd.grad((x ** 3).sin().sum(), x, create_graph=True)
            return g
        return f
    x = np.random.default_rng(2).uniform(-1, 1, 5)
    assert torch.autograd.gradcheck(first_derivative(torch),
                                    (torch.tensor(x, requires_grad=True),))
    assert mg.autograd.gradcheck(first_derivative(mg), (mg.tensor(x, requires_grad=True),))
