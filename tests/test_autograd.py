"""The autograd engine: backward, accumulation, graphs, hooks, grad modes, version counter,
anomaly detection and gradcheck itself."""
import re
import sys
import warnings
import weakref

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import AccumulateGrad, gradcheck
from minigrad.autograd.op import Op
from minigrad.autograd.adoption import ACCUMULATE_MIN_BYTES
from helpers import square_function


def leaf(values, dtype=mg.float64):
    return mg.tensor(values, dtype=dtype, requires_grad=True)


# --- deep graphs ----------------------------------------------------------------------------

def test_chain_of_100k_ops_backpropagates_without_recursion_error():
    limit = sys.getrecursionlimit()
    x = leaf(1.0)
    y = x
    for _ in range(100_000):
        y = y * 1.00001
    assert sys.getrecursionlimit() == limit
    y.backward()
    assert x.grad.item() == pytest.approx(1.00001 ** 100_000, rel=1e-9)
    del y  # freeing a 100,000-node graph must not overflow either


def test_wide_graph_sums_every_path():
    x = leaf([1.0, 2.0])
    total = x * 0
    for i in range(1, 501):
        total = total + x * float(i)
    total.sum().backward()
    assert x.grad.tolist() == [125250.0, 125250.0]


def test_diamond_graph_gradients_add():
    x = leaf([1.0, -2.0, 3.0])
    y = x * 2
    z = y * y + y  # dz/dx = (2y + 1) * 2
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (2 * 2 * x.numpy() + 1) * 2)


def test_same_tensor_used_twice_in_one_op():
    x = leaf([3.0, 4.0])
    (x * x).sum().backward()
    assert x.grad.tolist() == [6.0, 8.0]
    x.grad = None
    (x @ x).backward()
    assert x.grad.tolist() == [6.0, 8.0]


# --- accumulation, retain_graph -------------------------------------------------------------

def test_gradients_accumulate_across_backward_calls():
    x = leaf([1.0, 2.0])
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0, 6.0]


def test_zero_grad_style_reset():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    x.grad = None  # what Optimizer.zero_grad(set_to_none=True) does
    (x * 5).sum().backward()
    assert x.grad.tolist() == [5.0, 5.0]
    g = x.grad
    with mg.no_grad():
        x.grad.zero_()  # the other zero_grad style: in place
    (x * 7).sum().backward()
    assert x.grad.tolist() == [7.0, 7.0]
    assert x.grad.dtype == np.float64


def test_leaf_grads_are_fresh_arrays():
    # Add passes its incoming gradient through unchanged: the leaves must still get copies
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    g = np.array([1.0, 1.0])
    (x + w).backward(g)
    g[:] = 100.0
    assert x.grad.tolist() == [1.0, 1.0] and w.grad.tolist() == [1.0, 1.0]
    x.grad.mul_(5.0)
    assert w.grad.tolist() == [1.0, 1.0]


def test_one_fresh_gradient_for_two_leaves_gives_two_arrays():
    # Mul makes a new array and Add hands that one array to both leaves
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    ((x + w) * 2.0).sum().backward()
    assert x.grad.numpy() is not w.grad.numpy()
    x.grad.mul_(5.0)
    assert x.grad.tolist() == [10.0, 10.0] and w.grad.tolist() == [2.0, 2.0]


class _Handing(Op):
    """Identity whose backward returns new memory: an array (remembered weakly, or strongly
    if how == "keep"), a reshape of one, or half of a twice-as-long array."""

    seen = []

    @staticmethod
    def forward(ctx, a, how="fresh"):
        ctx.how = how
        return a.copy()

    @staticmethod
    def backward(ctx, g):
        if ctx.how == "half":
            out = np.concatenate([g, g])[:g.size]
        else:
            out = (g * 1.0).reshape(-1).reshape(g.shape) if ctx.how == "reshape" else g * 1.0
        _Handing.seen.append(out if ctx.how == "keep" else weakref.ref(out))
        return out


@pytest.mark.parametrize("how, adopted", [("fresh", True), ("reshape", True), ("keep", False),
                                          ("half", False)])
def test_a_gradient_nobody_else_holds_becomes_grad_without_a_copy(how, adopted):
    """The saving `adoption.adoptable` decides: a refactor that leaves one more reference on
    the way (the backward loop keeping its last gradients, a wrapper around `accumulate`)
    makes the fresh cases copy, and this fails."""
    _Handing.seen.clear()
    x = leaf([1.0, 2.0])
    _Handing.apply(x, how=how).backward(np.array([1.0, 1.0]))
    seen = _Handing.seen[0] if how == "keep" else _Handing.seen[0]()
    assert (x.grad.numpy() is seen) == adopted
    if seen is not None and not adopted:
        seen[:] = 7.0  # the memory someone else holds is not the gradient's
    assert x.grad.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("how, in_place", [("fresh", True), ("reshape", True), ("keep", False),
                                            ("half", False)])
def test_a_later_gradient_is_added_into_the_first_only_if_nobody_else_holds_it(how, in_place):
    """The saving `adoption.accumulable` decides: x's node receives two gradients; the second
    is added into the first where the engine's table alone holds that array (then the leaf
    adopts it), and memory anyone else holds (a kept array, the base of a slice) is never
    written."""
    _Handing.seen.clear()
    x = leaf(np.ones(ACCUMULATE_MIN_BYTES // 8))   # (float64: from the size it does that)
    (_Handing.apply(x, how=how) + _Handing.apply(x, how=how)).sum().backward()
    first = _Handing.seen[0] if how == "keep" else _Handing.seen[0]()
    assert (x.grad.numpy() is first) == in_place
    assert (x.grad.numpy() == 2.0).all()
    if how == "keep":
        assert all((a == 1.0).all() for a in _Handing.seen)


def test_small_gradients_are_added_into_a_new_array():
    """Below ACCUMULATE_MIN_BYTES the sum is a new array (cheaper there, see adoption.py)."""
    _Handing.seen.clear()
    x = leaf(np.ones(ACCUMULATE_MIN_BYTES // 8 - 1))
    (_Handing.apply(x) + _Handing.apply(x)).sum().backward()
    assert x.grad.numpy() is not _Handing.seen[0]() and (x.grad.numpy() == 2.0).all()


def test_retain_graph_allows_second_backward():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_second_backward_without_retain_graph_raises():
    x = leaf([1.0, 2.0])
    y = (x * x).exp().sum()
    y.backward()
    with pytest.raises(RuntimeError, match="second time"):
        y.backward()


def test_second_backward_raises_where_pytorch_freed_saved_tensors(torch):
    # PyTorch frees a node's saved tensors; a node that saved none can run again
    graphs = {"add and sum": lambda lib, x: (x + 1).sum(),
              "unfold": lambda lib, x: lib.nn.functional.unfold(x.view(1, 1, 2, 3), 2).sum(),
              "reshape and mean": lambda lib, x: x.reshape(3, 2).mean(),
              "exp": lambda lib, x: x.exp().sum(),
              "mul": lambda lib, x: (x * x).sum()}
    for name, graph in graphs.items():
        outcome = {}
        for lib in (torch, mg):
            x = lib.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], requires_grad=True)
            y = graph(lib, x)
            y.backward()
            try:
                y.backward()
                outcome[lib] = x.grad.tolist()
            except RuntimeError as e:
                assert "second time" in str(e), name
                outcome[lib] = "freed"
        assert outcome[mg] == outcome[torch], name
        assert (outcome[mg] == "freed") == (name in ("exp", "mul")), name


def test_second_backward_through_shared_subgraph_raises():
    x = leaf([1.0, 2.0])
    h = x.exp()
    a, b = h.sum(), (h * 2).sum()
    a.backward()
    with pytest.raises(RuntimeError, match="second time"):
        b.backward()


def test_non_scalar_backward_needs_gradient():
    x = leaf(np.ones((2, 3)))
    y = x * 2
    with pytest.raises(RuntimeError, match=re.escape("minigrad.Size([2, 3])")):
        y.backward()
    assert x.grad is None


def test_single_element_non_scalar_backward_is_allowed():
    x = leaf([[2.0]])
    (x * 3).backward()
    assert x.grad.tolist() == [[3.0]]


def test_backward_with_explicit_gradient():
    x = leaf([1.0, 2.0, 3.0])
    y = x * x
    y.backward(mg.tensor(np.array([1.0, 0.5, -1.0])))
    assert x.grad.tolist() == [2.0, 2.0, -6.0]
    x.grad = None
    (x * 2).backward(np.array([1.0, 2.0, 3.0]))
    assert x.grad.tolist() == [2.0, 4.0, 6.0]
    x.grad = None
    (x * 2).sum().backward(mg.tensor(3.0))
    assert x.grad.tolist() == [6.0, 6.0, 6.0]


def test_backward_gradient_shape_must_match():
    x = leaf([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"backward: .*\(2,\).*Size\(\[3\]\)"):
        (x * 2).backward(np.ones(2))


def test_backward_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0, 2.0]).sum().backward()


def test_backward_on_leaf_accumulates():
    x = leaf([1.0, 2.0])
    x.backward(np.array([3.0, 4.0]))
    x.backward(np.array([1.0, 1.0]))
    assert x.grad.tolist() == [4.0, 5.0]


def test_float32_grads_stay_float32():
    x = leaf([1.0, 2.0], dtype=mg.float32)
    (x * x).sum().backward()
    assert x.grad.dtype == np.float32
    assert x.grad.tolist() == [2.0, 4.0]


# --- requires_grad, detach, is_leaf ---------------------------------------------------------

def test_requires_grad_propagation():
    x = leaf([1.0, 2.0])
    c = mg.tensor(np.array([3.0, 4.0]))
    assert (x + c).requires_grad and (c + x).requires_grad
    assert (x * 2).requires_grad and (2 * x).requires_grad
    assert (x.exp() @ c).requires_grad
    assert not (c * c).requires_grad and (c * c).grad_fn is None
    assert not x.argmax().requires_grad
    assert not (x > 1).requires_grad
    out = x * c
    out.sum().backward()
    assert c.grad is None
    assert x.grad.tolist() == [3.0, 4.0]


def test_requires_grad_underscore():
    c = mg.tensor([1.0, 2.0])
    assert c.requires_grad_() is c
    assert c.requires_grad and c.is_leaf
    (c * c).sum().backward()
    assert c.grad.tolist() == [2.0, 4.0]
    c.requires_grad_(False)
    assert not (c * 2).requires_grad


def test_detach():
    x = leaf([1.0, 2.0])
    y = x * 3
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    np.testing.assert_array_equal(d.numpy(), y.numpy())
    assert np.shares_memory(d.numpy(), y.numpy())  # same data, like PyTorch
    z = (x * x.detach()).sum()  # the detached factor is a constant
    z.backward()
    assert x.grad.tolist() == [1.0, 2.0]
    with pytest.raises(RuntimeError):
        (d * 2).sum().backward()


def test_is_leaf():
    x = leaf([1.0])
    c = mg.tensor([1.0])
    assert x.is_leaf and c.is_leaf
    y = x * 2
    assert not y.is_leaf
    assert (c * 2).is_leaf  # nothing to differentiate: no graph recorded
    assert y.detach().is_leaf
    with mg.no_grad():
        assert (x * 2).is_leaf


def test_retain_grad():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.retain_grad()
    h = y * 5  # not retained
    z = (h * y).sum()  # dz/dy = 10 y
    z.retain_grad()
    z.backward()
    np.testing.assert_allclose(y.grad.numpy(), 10 * y.numpy())
    assert h.grad is None
    assert z.grad.item() == 1.0
    np.testing.assert_allclose(x.grad.numpy(), 2 * 10 * y.numpy())
    # a retained gradient is an ordinary tensor: it can be reset in place like a leaf's
    y.grad.zero_()
    z.grad.zero_()
    assert y.grad.tolist() == [0.0, 0.0] and z.grad.item() == 0.0


def test_retain_grad_on_leaf_is_harmless():
    x = leaf([1.0, 2.0])
    x.retain_grad()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


# --- hooks ----------------------------------------------------------------------------------

def test_hook_on_leaf_replaces_gradient():
    x = leaf([1.0, 2.0])
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()))  # returns None: observe only
    x.register_hook(lambda g: g * 10)
    (x * x).sum().backward()
    assert seen == [[2.0, 4.0]]
    assert x.grad.tolist() == [20.0, 40.0]


def test_hook_on_non_leaf_replaces_gradient_flowing_on():
    x = leaf([1.0, 2.0])
    y = x * 3
    seen = []

    def hook(g):
        seen.append(g.tolist())
        return mg.tensor(np.array([1.0, -1.0]))

    handle = y.register_hook(hook)
    (y * y).sum().backward(retain_graph=True)  # dL/dy = 2y = [6, 12], replaced by [1, -1]
    assert seen == [[6.0, 12.0]]
    assert x.grad.tolist() == [3.0, -3.0]
    handle.remove()  # a handle, as in PyTorch: the hook no longer runs
    x.grad = None
    (y * y).sum().backward()
    assert seen == [[6.0, 12.0]] and x.grad.tolist() == [18.0, 36.0]


def test_hooks_chain_in_registration_order():
    x = leaf([1.0])
    x.register_hook(lambda g: g + 1)
    x.register_hook(lambda g: g * 10)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [30.0]


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="register_hook"):
        mg.tensor([1.0]).register_hook(lambda g: g)


def test_hook_sees_total_gradient_of_tensor_used_twice():
    x = leaf([1.0, 2.0])
    y = x * 1
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    (y * 2 + y * 3).sum().backward()
    assert seen == [[5.0, 5.0]]


# --- graph structure ------------------------------------------------------------------------

def test_grad_fn_names_and_next_functions():
    a, b, c = leaf([1.0, 2.0]), leaf([3.0, 4.0]), leaf([5.0, 6.0])
    out = a * b + c
    assert out.grad_fn.name() == "AddBackward0"
    (mul, i0), (acc, i1) = out.grad_fn.next_functions
    assert i0 == 0 and i1 == 0
    assert mul.name() == "MulBackward0"
    assert isinstance(acc, AccumulateGrad) and acc.name() == "AccumulateGrad"
    assert acc.variable is c
    assert acc.next_functions == ()
    (acc_a, _), (acc_b, _) = mul.next_functions
    assert acc_a.variable is a and acc_b.variable is b
    # one accumulator per leaf, shared by every use
    sq = a * a
    assert sq.grad_fn.next_functions[0][0] is sq.grad_fn.next_functions[1][0]
    assert sq.grad_fn.next_functions[0][0] is acc_a


def test_next_functions_with_non_grad_input():
    a = leaf([1.0])
    out = a * mg.tensor([2.0])
    (n0, _), (n1, _) = out.grad_fn.next_functions
    assert n0.variable is a and n1 is None


@pytest.mark.parametrize("make, name", [
    (lambda x: x.sum(), "SumBackward0"), (lambda x: x.mean(), "MeanBackward0"),
    (lambda x: x.exp(), "ExpBackward0"), (lambda x: x @ x.T, "MmBackward0"),
    (lambda x: x.reshape(-1), "ViewBackward0"), (lambda x: x.T, "PermuteBackward0"),
    (lambda x: x[0], "SelectBackward0"), (lambda x: x.softmax(-1), "SoftmaxBackward0"),
    (lambda x: x - 1, "SubBackward0"), (lambda x: x / 2, "DivBackward0"),
    (lambda x: -x, "NegBackward0"), (lambda x: x ** 2, "PowBackward0"),
    (lambda x: mg.cat([x, x]), "CatBackward0"), (lambda x: x.relu(), "ReluBackward0"),
])
def test_grad_fn_names(make, name):
    x = leaf(np.ones((2, 2)))
    assert make(x).grad_fn.name() == name


def test_graph_walk_reaches_every_leaf():
    a, b, c = leaf([1.0]), leaf([2.0]), leaf([3.0])
    out = ((a * b).exp() + c.sum()) / a
    found, stack = set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad):
            found.add(id(node.variable))
        stack.extend(n for n, _ in node.next_functions if n is not None)
    assert found == {id(a), id(b), id(c)}


# --- grad modes -----------------------------------------------------------------------------

def test_no_grad_context():
    x = leaf([1.0, 2.0])
    assert mg.is_grad_enabled()
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = x * 2
    assert mg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert (x * 2).requires_grad


def test_enable_grad_inside_no_grad_nested():
    x = leaf([1.0])
    with mg.no_grad():
        with mg.enable_grad():
            assert mg.is_grad_enabled()
            y = x * 2
            with mg.no_grad():
                assert not mg.is_grad_enabled()
                z = x * 2
            assert mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
        w = x * 2
    assert mg.is_grad_enabled()
    assert y.requires_grad and not z.requires_grad and not w.requires_grad


def test_grad_mode_restored_after_exception():
    with pytest.raises(KeyError):
        with mg.no_grad():
            raise KeyError
    assert mg.is_grad_enabled()


def test_is_inference_mode_enabled_follows_inference_mode_as_pytorch(torch):
    def states(lib):
        seen = [lib.is_inference_mode_enabled()]
        with lib.inference_mode():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen += [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]
            seen.append(lib.is_inference_mode_enabled())
        with lib.no_grad():
            seen.append(lib.is_inference_mode_enabled())
            with lib.inference_mode(False):
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())

        @lib.inference_mode()
        def f():
            return lib.is_inference_mode_enabled(), lib.is_grad_enabled()
        try:
            with lib.inference_mode():
                raise KeyError
        except KeyError:
            pass
        return seen + list(f()) + [lib.is_inference_mode_enabled(), lib.is_grad_enabled()]

    assert states(mg) == states(torch) == [False, True, False, True, True, False, True, False,
                                           True, False, False, True]


def test_no_grad_decorator():
    x = leaf([1.0, 2.0])

    @mg.no_grad()
    def f(t):
        assert not mg.is_grad_enabled()
        return t * 2

    y = f(x)
    assert not y.requires_grad
    assert mg.is_grad_enabled()
    assert f.__name__ == "f"


def test_enable_grad_decorator_inside_no_grad():
    x = leaf([1.0, 2.0])

    @mg.enable_grad()
    def g(t):
        return t * 2

    with mg.no_grad():
        y = g(x)
        assert not mg.is_grad_enabled()
    assert y.requires_grad


def test_no_grad_decorator_recursive_and_nested():
    @mg.no_grad()
    def depth(n):
        assert not mg.is_grad_enabled()
        return 0 if n == 0 else 1 + depth(n - 1)

    @mg.enable_grad()
    def outer():
        assert mg.is_grad_enabled()
        r = depth(3)
        assert mg.is_grad_enabled()
        return r

    with mg.no_grad():
        assert outer() == 3
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


# --- version counter ------------------------------------------------------------------------

SAVES_INPUT = {
    "mul": lambda x: x * x,  # (x * constant keeps only the constant, as in PyTorch)
    "mul by leaf": lambda x: mg.tensor(np.array([2.0, 3.0]), requires_grad=True) * x,
    "div": lambda x: mg.tensor(np.array([2.0, 3.0])) / x,
    "pow": lambda x: x ** 3,
    "log": lambda x: x.log(),
    "abs": lambda x: x.abs(),
    "maximum": lambda x: x.maximum(mg.tensor(np.array([0.0, 0.0]))),
    "clamp": lambda x: x.clamp(0.0, 5.0),
    "gelu": lambda x: x.gelu(),
    "matmul 1-D @ 2-D": lambda x: x @ mg.tensor(np.arange(6.0).reshape(2, 3)),
    "matmul 2-D @ 1-D": lambda x: mg.tensor(np.arange(6.0).reshape(3, 2)) @ x,
}


@pytest.mark.parametrize("name", list(SAVES_INPUT))
def test_modifying_saved_input_in_place_is_detected(name):
    x = leaf([1.0, 2.0])
    loss = SAVES_INPUT[name](x).sum()
    with mg.no_grad():
        x.mul_(2.0)
    assert x._version == 1
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


SAVES_OUTPUT = {
    "exp": lambda x: x.exp(),
    "sqrt": lambda x: x.sqrt(),
    "tanh": lambda x: x.tanh(),
    "sigmoid": lambda x: x.sigmoid(),
    "relu": lambda x: x.relu(),
    "softmax last dim": lambda x: x.softmax(-1),
    "softmax dim 0": lambda x: x.softmax(0),
    "log_softmax dim 0": lambda x: x.log_softmax(0),
}


@pytest.mark.parametrize("name", list(SAVES_OUTPUT))
def test_modifying_saved_output_in_place_is_detected(name):
    x = leaf(np.array([[1.0, 2.0, 0.5], [0.25, 3.0, 1.5]]))
    out = SAVES_OUTPUT[name](x)
    loss = out.sum()  # SumBackward saves nothing: only `name`'s node can notice
    with mg.no_grad():
        out.add_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


@pytest.mark.parametrize("side", ["left", "right"])
def test_modifying_saved_matrix_in_place_is_detected(side):
    w = leaf(np.arange(6.0).reshape(2, 3))
    other = mg.tensor(np.ones((3, 2)))
    loss = (w @ other if side == "left" else other @ w).sum()
    with mg.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_in_place_change_of_leaf_used_through_a_view_is_detected():
    # the nn.Linear pattern, x @ W.T, then an optimizer step on W before backward:
    # W.T shares W's data, so the product's saved operand changed too
    w = leaf(np.arange(6.0).reshape(2, 3))
    x = leaf(np.ones((4, 3)))
    loss = (x @ w.T).sum()
    with mg.no_grad():
        w.sub_(1.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_version_error_names_op_and_versions():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    with mg.no_grad():
        x.add_(1.0)
        x.add_(1.0)
    with pytest.raises(RuntimeError, match=r"MulBackward.*\(2,\).*modified in place.*version 0.*2"):
        loss.backward()


def test_in_place_change_through_detached_alias_is_detected():
    # detach() shares the data; PyTorch shares the version counter too, so this is caught
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    d = x.detach()
    d.mul_(10.0)  # allowed: d does not require grad
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_in_place_change_of_unsaved_tensor_is_fine():
    x = leaf([1.0, 2.0])
    loss = (x + 1.0).sum() + (x - 2.0).exp().sum() * 0.0 + x.sum()  # Add/Sub/Sum save no x
    with mg.no_grad():
        x.add_(5.0)
    loss.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_in_place_change_after_backward_is_fine():
    x = leaf([1.0, 2.0])
    loss = (x * x).sum()
    loss.backward(retain_graph=True)
    with mg.no_grad():
        x.sub_(x.grad, alpha=0.1)  # an SGD step
    np.testing.assert_allclose(x.numpy(), [0.8, 1.6])
    y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [2 + 1.6, 4 + 3.2])


def test_version_counter_increments():
    t = mg.zeros(3)
    assert t._version == 0
    t.add_(1).mul_(2)
    t.zero_()
    assert t._version == 3
    assert (t * 2)._version == 0


# --- anomaly detection ----------------------------------------------------------------------

@pytest.mark.parametrize("make, opname", [
    (lambda x: x.sqrt(), "SqrtBackward"),   # 1 / (2 sqrt(0)) = inf
    (lambda x: x.log(), "LogBackward"),     # 1 / 0 = inf
    (lambda x: x.sqrt() * 0.0, "SqrtBackward"),  # 0 / 0 = NaN
])
def test_detect_anomaly_names_the_op(make, opname):
    x = leaf([0.0, 1.0])
    with np.errstate(all="ignore"):
        with mg.detect_anomaly():
            loss = make(x).sum()
            with pytest.raises(RuntimeError, match=opname) as info:
                loss.backward()
    assert "NaN or inf" in str(info.value)
    assert "test_autograd.py" in str(info.value)  # where the op was created
    assert x.grad is None


def test_anomaly_off_does_not_raise():
    x = leaf([0.0, 1.0])
    with np.errstate(all="ignore"):
        (x.sqrt() * 0.0).sum().backward()
        assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0.0
        x.grad = None
        with mg.detect_anomaly():
            pass
        x.log().sum().backward()  # off again after the block
    assert np.isinf(x.grad.numpy()[0])


def test_detect_anomaly_as_decorator_and_finite_grads_pass():
    @mg.detect_anomaly()
    def run(x):
        x.sqrt().sum().backward()

    x = leaf([4.0, 1.0])
    run(x)  # finite: fine
    assert x.grad.tolist() == [0.25, 0.5]
    with np.errstate(all="ignore"):
        with pytest.raises(RuntimeError, match="SqrtBackward"):
            run(leaf([0.0]))


def test_set_detect_anomaly_as_function_and_context_manager(torch):
    """PyTorch's function form: on at once until turned off; mixed with the block form, each
    restores what it found, and the creation-site hook is released when all are off."""
    from minigrad.autograd.anomaly_mode import _creation_sites
    for lib in (torch, mg):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.set_detect_anomaly(True)
            try:
                with pytest.raises(RuntimeError):
                    (x.sqrt() * 0.0).sum().backward()  # 0 * inf: a NaN gradient
                with lib.autograd.detect_anomaly():
                    lib.autograd.set_detect_anomaly(False)
                    (x.sqrt() * 0.0).sum().backward()  # off inside the block: no error
                    assert not lib.is_anomaly_enabled()
                assert lib.is_anomaly_enabled()  # the block restores what it found
            finally:
                lib.autograd.set_detect_anomaly(False)
        assert not lib.is_anomaly_enabled() and np.isnan(x.grad.numpy()[0])
    assert _creation_sites.users == 0


# --- gradcheck ------------------------------------------------------------------------------

def test_gradcheck_leaves_the_inputs_grad_alone(torch):
    """As PyTorch's: no gradient is left in `.grad`, and one already there is kept."""
    for lib in (torch, mg):
        fresh = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        kept = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        kept.grad = lib.tensor([5.0], dtype=lib.float64)
        assert lib.autograd.gradcheck(lambda a, b: a * a * b, [fresh, kept])
        assert fresh.grad is None and kept.grad.tolist() == [5.0]


class _GoodSquare(square_function()):
    """x**2 with its right backward."""


class _BadSquare(_GoodSquare):
    """x**2 with a deliberately wrong backward (forgets the factor 2)."""

    @staticmethod
    def backward(ctx, g):
        return g * ctx.saved[0]


def test_gradcheck_passes_for_correct_function():
    x = leaf(np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]))
    assert gradcheck(lambda t: _GoodSquare.apply(t), [x]) is True
    assert gradcheck(lambda a, b: (a * b).sum(1), [x, leaf(np.ones((2, 3)))])


def test_gradcheck_reports_wrong_gradient_with_index_and_values():
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    x = leaf(a)
    w = np.random.default_rng(0).standard_normal(a.shape)  # gradcheck's output weighting
    analytic, numeric = w * a, 2 * w * a
    err = np.abs(analytic - numeric) - (1e-5 + 1e-3 * np.abs(numeric))
    k = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), a.shape))
    with pytest.raises(AssertionError) as info:
        gradcheck(lambda t: _BadSquare.apply(t), [x])
    msg = str(info.value)
    assert "input 0" in msg
    assert f"index {k}" in msg  # plain ints: "index (1, 2)", not "(np.int64(1), ...)"
    assert f"{analytic[k]:.8g}" in msg
    assert f"{numeric[k]:.8g}"[:6] in msg


def test_gradcheck_names_the_wrong_input():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    with pytest.raises(AssertionError, match="input 1"):
        gradcheck(lambda a, b: a * _BadSquare.apply(b), [x, y])


def test_gradcheck_without_raising_returns_false():
    x = leaf([1.0, 2.0])
    assert gradcheck(lambda t: _BadSquare.apply(t), [x], raise_exception=False) is False
    assert gradcheck(lambda t: _GoodSquare.apply(t), [x], raise_exception=False) is True


def test_gradcheck_rejects_float32():
    x = leaf([1.0, 2.0], dtype=mg.float32)
    with pytest.raises(TypeError, match="float64"):
        gradcheck(lambda t: t * t, [x])


def test_custom_function_in_graph():
    x = leaf([1.0, 3.0])
    y = _GoodSquare.apply(x)
    assert y.grad_fn.name() == "_GoodSquareBackward"
    assert y.requires_grad
    (y * 2).sum().backward()
    assert x.grad.tolist() == [4.0, 12.0]


# --- the core's shape: per-thread state, nodes without renderer fields ------------------------

def test_grad_mode_and_module_path_are_per_thread():
    import threading
    from minigrad.grad_mode import current_module_path, module_scope

    seen = {}
    inside, release = threading.Event(), threading.Event()

    def other():
        with mg.no_grad(), module_scope("other.block"):
            inside.set()
            release.wait(10)
            seen["other"] = (mg.is_grad_enabled(), current_module_path())

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with module_scope("main.layer"):
        seen["main"] = (mg.is_grad_enabled(), current_module_path())
    release.set()
    t.join()
    assert seen == {"other": (False, "other.block"), "main": (True, "main.layer")}
    assert current_module_path() is None


@pytest.mark.skipif(sys.implementation.name != "cpython" or sys.version_info < (3, 11),
                    reason="CPython's shared attribute tables")
def test_recorded_outputs_and_nodes_share_their_class_attribute_layout():
    # CPython gives an instance a dict of its own (slower to make, read and free) when it gets
    # an attribute its class's shared table lacks, and only the first few dozen instances may
    # add names: the tensors and nodes made before the first recorded op must not lock
    # `grad_fn` or a node's `sequence_nr` out (`share_attribute_layout`). gc sees such a dict.
    import gc

    class Twice(Op):
        @staticmethod
        def forward(ctx, a):
            return a * 2

    kept = [mg.zeros(2) for _ in range(200)]
    kept += [Twice.apply(mg.zeros(2)) for _ in range(200)]  # nodes that record nothing
    y = Twice.apply(leaf([1.0, 2.0]))
    assert isinstance(y.grad_fn, Twice)
    for obj in (y, y.grad_fn):
        assert not any(type(r) is dict for r in gc.get_referents(obj))


def test_ops_record_while_another_thread_is_in_no_grad():
    # ops read grad mode from a count of threads without grad before the per-thread state:
    # another thread's no_grad must not stop this thread's recording, nor a nested or plain
    # set_grad_enabled leave the count behind
    import threading
    from minigrad.grad_mode import threads_without_grad

    x = leaf([1.0, 2.0])
    inside, release = threading.Event(), threading.Event()
    seen = {}

    def other():
        with mg.no_grad():
            with mg.no_grad():
                inside.set()
                release.wait(10)
                seen["other"] = (x * 2).requires_grad

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    assert threads_without_grad[0] == 1
    seen["main"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"other": False, "main": True}
    assert threads_without_grad[0] == 0
    mg.set_grad_enabled(False)
    assert not (x * 2).requires_grad and not mg.is_grad_enabled()
    mg.set_grad_enabled(True)
    assert threads_without_grad[0] == 0 and (x * 2).requires_grad



def test_module_calls_in_two_threads_keep_their_own_paths():
    # Module.__call__ sets the path on the calling thread's own scope: a model running in
    # another thread at the same time neither sees nor overwrites it, and an exception
    # inside forward still restores it
    import threading
    from minigrad.grad_mode import current_module_path

    class Probe(mg.nn.Module):
        def __init__(self, inside=None, release=None):
            super().__init__()
            self.inside, self.release, self.seen = inside, release, []

        def forward(self, x):
            if self.inside is not None:
                self.inside.set()
                self.release.wait(10)
            self.seen.append(current_module_path())
            if x is None:
                raise ValueError("probe")
            return x

    class Outer(mg.nn.Module):
        def __init__(self, probe):
            super().__init__()
            self.probe = probe

        def forward(self, x):
            return self.probe(x)

    inside, release = threading.Event(), threading.Event()
    waiting = Outer(Probe(inside, release))
    t = threading.Thread(target=waiting, args=(mg.ones(1),))
    t.start()
    inside.wait(10)
    outside = current_module_path()  # the other thread is inside its model now
    quick = Probe()
    quick(mg.ones(1))
    release.set()
    t.join()
    assert outside is None
    assert waiting.probe.seen == ["probe"] and quick.seen == ["Probe"]
    with pytest.raises(ValueError, match="probe"):
        quick(None)
    assert current_module_path() is None

def test_nodes_carry_only_what_backward_needs():
    # module paths and values are the renderer's business (a record hook of viz.recording)
    x = leaf([1.0, 2.0])
    node = x.exp().grad_fn
    assert set(vars(node)) == {"next_nodes", "sequence_nr", "out_shape", "out_dtype", "saved",
                               "saved_versions"}
    assert (x * x).grad_fn.next_functions == ((x._acc, 0), (x._acc, 0))


def test_record_hooks_come_and_go():
    from minigrad import autograd

    seen = []
    handle = autograd.add_record_hook(lambda node, out: seen.append((node.name(), out.shape)))
    x = leaf([1.0, 2.0])
    x.exp()
    handle.remove()
    x.exp()
    assert seen == [("ExpBackward0", (2,))]
    before = list(autograd.op._record_hooks)
    with mg.detect_anomaly():
        assert len(autograd.op._record_hooks) == len(before) + 1
    assert autograd.op._record_hooks == before  # anomaly mode's hook is gone again


# --- the engine fits every gradient to its input --------------------------------------------

class _BroadcastAdd(Op):
    """a + b whose backward returns the output-shaped gradient for both inputs."""

    @staticmethod
    def forward(ctx, a, b):
        return a + b

    @staticmethod
    def backward(ctx, g):
        return g, g


class _Doubling(Op):
    """x * 2, whose backward (each subclass's) returns a gradient the engine must refuse."""

    @staticmethod
    def forward(ctx, a):
        return a * 2


class _WrongShape(_Doubling):
    @staticmethod
    def backward(ctx, g):
        return np.ones(g.shape + (3,), g.dtype)  # (2, 3) does not broadcast from (2,)


class _WrongDtype(_Doubling):
    @staticmethod
    def backward(ctx, g):
        return (g * 2).astype(np.float64)


def test_engine_sums_broadcast_gradients_to_each_input_shape():
    a, b = leaf(np.ones((3, 1))), leaf(np.ones(4))
    _BroadcastAdd.apply(a, b).sum().backward()
    assert a.grad.shape == (3, 1) and a.grad.tolist() == [[4.0]] * 3
    assert b.grad.shape == (4,) and b.grad.tolist() == [3.0] * 4


def test_engine_reports_an_op_returning_a_wrong_shape():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "_WrongShapeBackward: returned a gradient of shape (2, 3) for an input of shape (2,)")):
        _WrongShape.apply(x).sum().backward()


def test_engine_reports_an_op_returning_a_wrong_dtype():
    x = leaf([1.0, 2.0], dtype=mg.float32)
    with pytest.raises(RuntimeError, match="_WrongDtypeBackward: returned a gradient of dtype "
                                           "float64 for an input of dtype float32"):
        _WrongDtype.apply(x).sum().backward()


def test_leaf_rejects_a_hook_changing_the_gradient_dtype():
    x = leaf([1.0, 2.0], dtype=mg.float32)
    x.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match="hook: .*dtype float64.*expected shape \\(2,\\) and "
                                           "dtype float32"):
        (x * 2).sum().backward()


def test_mixed_float32_float64_graph_backpropagates_like_torch(torch):
    a = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    b = np.array([0.3, -0.2, 0.1])
    x, y = mg.tensor(a, dtype=mg.float32, requires_grad=True), leaf(b)  # float32, float64
    tx = torch.tensor(a, dtype=torch.float32, requires_grad=True)
    ty = torch.tensor(b, dtype=torch.float64, requires_grad=True)
    for lib, p, q in ((mg, x, y), (torch, tx, ty)):
        h = (p * q).tanh() @ q + p.sum(1).double()  # float64 from here on
        out = (h.float() * p[:, 0]).sum()           # back to float32
        assert str(out.dtype).endswith("float32")
        out.backward()
    assert x.grad.dtype == np.float32 and y.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-6)


# --- views share their base's version counter, whatever the grad mode ------------------------

VIEWS = {
    "index": lambda w: w[0],
    "slice": lambda w: w[:, 1:],
    "view": lambda w: w.view(-1),
    "reshape": lambda w: w.reshape(3, 2),
    "T": lambda w: w.T,
    "permute": lambda w: w.permute(1, 0),
    "flatten": lambda w: w.flatten(),
    "unsqueeze": lambda w: w.unsqueeze(0),
    "view of a view": lambda w: w.T[1],
    "detach then index": lambda w: w.detach()[0],
}


@pytest.mark.parametrize("name", list(VIEWS))
@pytest.mark.parametrize("made_under", ["no_grad", "grad"])
def test_in_place_change_through_a_view_is_detected(name, made_under):
    x = leaf(np.ones((4, 2)))
    w = leaf(np.arange(6.0).reshape(2, 3))
    loss = (x @ w).sum()  # MatMul saved w
    if made_under == "grad":
        view = VIEWS[name](w)
        with mg.no_grad():
            view.sub_(10)
    else:
        with mg.no_grad():
            VIEWS[name](w).sub_(10)
    assert w._version == 1
    with pytest.raises(RuntimeError, match="MmBackward0: .*a tensor of shape \\(2, 3\\) needed "
                                           "for backward was modified in place"):
        loss.backward()


def test_change_of_a_base_is_seen_through_its_view():
    x = leaf([1.0, 2.0, 3.0])
    base = mg.tensor(np.ones((2, 3)))
    with mg.no_grad():
        row = base[1]
    loss = (x * row).sum()  # Mul saved the view's memory
    with mg.no_grad():
        base.mul_(3.0)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


def test_a_copy_is_not_a_view():
    x = leaf(np.ones((4, 2)))
    w = leaf(np.arange(6.0).reshape(2, 3))
    loss = (x @ w).sum()
    with mg.no_grad():
        w.clone().sub_(10)
        w[[0, 1]].sub_(10)  # advanced indexing copies, as in NumPy and PyTorch
    loss.backward()
    assert w._version == 0 and x.grad.tolist() == [[3.0, 12.0]] * 4


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_operand_changed_after_forward_does_not_change_the_gradient(dtype):
    x = leaf([1.0, 2.0, 3.0], dtype=dtype)
    arr = np.array([1.0, 2.0, 3.0], dtype=dtype)
    m = np.eye(3, dtype=dtype)
    loss = (x * arr).sum() + (x @ m).sum() + (arr * x).sum()
    arr[:] = 100.0
    m[:] = 100.0
    loss.backward()
    assert x.grad.tolist() == [3.0, 5.0, 7.0]


def test_requires_grad_attribute_refuses_integer_tensors():
    t = mg.tensor([1, 2])
    with pytest.raises(TypeError, match="requires_grad: only floating point tensors can "
                                        "require gradients, got dtype int64"):
        t.requires_grad = True
    assert not t.requires_grad
    f = mg.tensor([1.0, 2.0])
    f.requires_grad = True
    assert f.requires_grad
    f.requires_grad = False
    with pytest.raises(RuntimeError, match="only a leaf can stop requiring grad"):
        (leaf([1.0]) * 2).requires_grad = False


def test_mask_changed_after_forward_is_detected():
    x = leaf([1.0, 2.0, 3.0])
    mask = mg.tensor([True, False, False])
    loss = x.masked_fill(mask, 0.0).sum() + mg.where(mask, x, x * 2).sum()
    with mg.no_grad():
        mask.fill_(False)
    with pytest.raises(RuntimeError, match="modified in place"):
        loss.backward()


@pytest.mark.parametrize("layout", ["fortran", "strided"])
def test_gradcheck_perturbs_non_contiguous_inputs_in_place(layout):
    a = np.arange(1.0, 13.0).reshape(3, 4) / 7
    arr = np.asfortranarray(a) if layout == "fortran" else np.repeat(a, 2, axis=0)[::2]
    assert not arr.flags.c_contiguous
    x = mg.Tensor._wrap(arr).requires_grad_()
    assert gradcheck(lambda t: (t * t).sum(0) * t[0], [x])
    np.testing.assert_array_equal(x.numpy(), a)  # every element restored


def test_leaf_rejects_a_hook_changing_the_gradient_shape():
    x = leaf([1.0, 2.0])
    x.register_hook(lambda g: mg.tensor(np.ones(1)))  # once broadcast silently to (2,)
    with pytest.raises(RuntimeError, match=re.escape("shape (1,) and dtype float64; expected "
                                                     "shape (2,)")):
        (x * 2).sum().backward()


# --- what nodes keep for backward -----------------------------------------------------------

def test_mul_saves_only_the_operands_whose_partner_needs_a_gradient():
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((5, 4)), rng.standard_normal(4)
    x, w = mg.tensor(xa), leaf(wa)
    y = x * w  # only w wants a gradient, and it needs x: w itself need not be kept
    assert y.grad_fn.saved[0] is x._array and y.grad_fn.saved[1] is None
    y.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), xa.sum(axis=0))
    x2, w2 = leaf(xa), leaf(wa)
    z = x2 * w2  # both want one: both are kept, and the gradients are the same as always
    assert z.grad_fn.saved[0] is x2._array and z.grad_fn.saved[1] is w2._array
    z.sum().backward()
    np.testing.assert_allclose(w2.grad.numpy(), w.grad.numpy())
    np.testing.assert_allclose(x2.grad.numpy(), np.broadcast_to(wa, xa.shape))
    assert gradcheck(lambda a, b: a * b, (leaf(xa), mg.tensor(wa)))
    assert gradcheck(lambda a, b: a * b, (mg.tensor(xa), leaf(wa)))


def test_in_place_change_of_a_mul_operand_nobody_needs_is_fine():
    x, w = mg.tensor(np.array([1.0, 2.0])), leaf([3.0, 4.0])
    loss = (x * w).sum()
    with mg.no_grad():
        w.mul_(10.0)  # x is what w's gradient needs; w itself was not kept
    loss.backward()
    assert w.grad.tolist() == [1.0, 2.0]


def test_needs_input_grad_is_known_inside_forward():
    seen = []

    class Probe(Op):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            return a + b

        @staticmethod
        def backward(ctx, g):
            return g, g

    a, b = leaf([1.0]), mg.tensor([2.0])
    Probe.apply(a, b)
    with mg.no_grad():
        Probe.apply(a, b)
    assert seen == [(True, False), (False, False)]


def test_relu_keeps_its_output_not_its_input():
    x = leaf(np.array([[-1.0, 2.0], [0.0, 3.0]]))
    y = x.relu()
    (saved,) = y.grad_fn.saved
    assert saved is y._array  # the next op usually keeps it anyway: no extra array
    y.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [0.0, 1.0]]
