"""A custom `autograd.Function` with several outputs: one node shared by all of them, as in
PyTorch (`grad_fn`, `output_nr`, `next_functions`, node hooks, `autograd.grad` through some of
them), side by side with PyTorch (minigrad/autograd/function.py, function_nodes.py)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def split3(lib, materialize=True):
    """x -> (2x, x^2, int count of positives): two differentiable outputs and an integer."""
    class Split3(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            n = (x > 0).sum()
            ctx.mark_non_differentiable(n)
            return x * k, x * x, n

        @staticmethod
        def backward(ctx, ga, gb, gn):
            (x,) = ctx.saved_tensors
            ctx.got = (ga is None, gb is None, gn is None)
            out = 0
            if ga is not None:
                out = out + ga * 2
            if gb is not None:
                out = out + 2 * gb * x
            return out, None
    return Split3


def _leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def test_outputs_share_one_node_with_output_numbers(torch):
    seen = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        a, b, n = split3(lib).apply(x, 2.0)
        assert a.grad_fn is b.grad_fn and n.grad_fn is None
        assert (a.output_nr, b.output_nr, x.output_nr) == (0, 1, 0)
        node = a.grad_fn
        c, d = a * 3, b * 3
        seen.append((node.name(), [type(f).__name__ for f, _ in node.next_functions],
                     c.grad_fn.next_functions[0][0] is node, c.grad_fn.next_functions[0][1],
                     d.grad_fn.next_functions[0][0] is node, d.grad_fn.next_functions[0][1]))
    assert seen[0] == seen[1] == ("Split3Backward", ["AccumulateGrad"], True, 0, True, 1)


@pytest.mark.parametrize("materialize", [True, False])
def test_backward_gets_a_gradient_for_every_output(torch, materialize):
    seen = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        a, b, _ = split3(lib, materialize).apply(x, 2.0)
        (b * 3).sum().backward()
        seen.append((x.grad.tolist(), b.grad_fn.got))
    assert seen[0] == seen[1]
    assert seen[1][1] == ((False, False, False) if materialize else (True, False, True))


def test_node_hooks_and_tensor_hooks(torch):
    seen = {}
    for lib in (torch, mg):
        calls = seen[lib.__name__] = []
        x = _leaf(lib, [0.5, -1.5])
        a, b, _ = split3(lib).apply(x, 2.0)
        node = a.grad_fn
        b.register_hook(lambda g: calls.append(("tensor b", g.tolist())) or g * 10)
        node.register_prehook(lambda go: calls.append(
            ("pre", [None if g is None else g.tolist() for g in go])))
        node.register_prehook(lambda go: (go[0], go[1] + 1, go[2]))
        node.register_hook(lambda gi, go: calls.append(
            ("post", [g.tolist() for g in gi], [None if g is None else g.tolist() for g in go])))
        gone = node.register_hook(lambda gi, go: calls.append("removed"))
        gone.remove()
        node.register_hook(lambda gi, go: (gi[0] * 0.5,))
        (a.sum() + b.sum()).backward()
        calls.append(("x.grad", x.grad.tolist()))
    assert seen["minigrad"] == seen["torch"]
    assert seen["minigrad"][-1] == ("x.grad", [0.5 * (2 + 2 * 0.5 * 11), 0.5 * (2 - 2 * 1.5 * 11)])


def test_autograd_grad_through_one_output_and_its_consumer(torch):
    seen = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        a, b, _ = split3(lib).apply(x, 2.0)
        y, z = a * 5, b * 7
        loss = (y + z).sum()
        got = [lib.autograd.grad(loss, [y], retain_graph=True)[0].tolist(),
               lib.autograd.grad(loss, [b], retain_graph=True)[0].tolist(),
               lib.autograd.grad(y.sum(), [x], retain_graph=True)[0].tolist(),
               lib.autograd.grad(loss, [a, x])[1].tolist()]
        seen.append(got)
    assert seen[0] == seen[1]


def test_retain_grad_and_mixed_dtype_consumers_keep_their_output(torch):
    seen = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        a, b, _ = split3(lib).apply(x, 2.0)
        a.retain_grad()
        b.retain_grad()
        loss = (a * lib.ones(2, dtype=lib.float32)).sum() + (b * 3).sum()  # a cast stand-in
        loss.backward()
        seen.append((a.grad.tolist(), b.grad.tolist(), x.grad.tolist(),
                     a.retains_grad, b.retains_grad))
    assert seen[0] == seen[1]


def test_an_output_written_in_place_keeps_its_edge(torch):
    seen = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        a, b, _ = split3(lib).apply(x, 2.0)
        b.mul_(3)
        a.add_(b)
        a.sum().backward()
        seen.append((x.grad.tolist(), a.grad_fn.name(), b.grad_fn.name()))
    assert seen[0] == seen[1]


def test_detached_in_place_output_is_a_leaf_again(torch):
    for lib in (torch, mg):
        x = _leaf(lib, [0.5, -1.5])
        _, b, _ = split3(lib).apply(x, 2.0)
        b.detach_()
        assert b.is_leaf and b.output_nr == 0 and not b.requires_grad
        b.requires_grad_()
        (b * 2).sum().backward()
        assert b.grad.tolist() == [2.0, 2.0] and x.grad is None


def two_outputs(lib):
    class SinCosMix(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x.sin() * y, x * y.cos()

        @staticmethod
        def backward(ctx, ga, gb):
            x, y = ctx.saved_tensors
            return (ga * x.cos() * y + gb * y.cos(),
                    ga * x.sin() - gb * x * y.sin())
    return SinCosMix


def test_gradcheck_and_gradgradcheck_of_a_two_output_function(torch):
    rng = np.random.default_rng(3)
    x, y = (mg.tensor(rng.uniform(-1, 1, (3,)), requires_grad=True) for _ in range(2))
    fn = two_outputs(mg).apply
    assert gradcheck(lambda *a: mg.stack(fn(*a)), (x, y))  # both outputs, each weighted
    assert gradgradcheck(lambda *a: mg.stack(fn(*a)), (x, y))
    tx, ty = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, y))
    got = mg.autograd.grad([o.sum() for o in fn(x, y)], [x, y], create_graph=True)
    want = torch.autograd.grad([o.sum() for o in two_outputs(torch).apply(tx, ty)], [tx, ty],
                               create_graph=True)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=1e-12)
    second = mg.autograd.grad(sum(g.sum() for g in got), [x, y])
    second_t = torch.autograd.grad(sum(g.sum() for g in want), [tx, ty])
    for g, w in zip(second, second_t):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)
