"""PyTorch's custom `autograd.Function` on tensors (minigrad/autograd/function.py), side by side
with PyTorch: each case defines its Function once per library, from the same text."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck


def _u(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-2.0, 2.0, shape)


def _both(torch, make):
    """`make(lib)` for PyTorch and for minigrad, as a pair."""
    return make(torch), make(mg)


def sign_ste(lib):
    class SignSTE(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return lib.sign(x)

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * (x.abs() <= 1).to(grad.dtype)
    return SignSTE


def cube(lib):
    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * g * x.pow(2)
    return Cube


def sin_cos(lib, materialize=True):
    class SinCos(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, g_sin, g_cos):
            (x,) = ctx.saved_tensors
            ctx.seen = (g_sin is None, g_cos is None)
            out = 0
            if g_sin is not None:
                out = out + g_sin * x.cos()
            if g_cos is not None:
                out = out - g_cos * x.sin()
            return out
    return SinCos


def _leaf(lib, a, dtype=None):
    return lib.tensor(a, dtype=dtype or lib.float64, requires_grad=True)


def test_straight_through_estimator_as_pytorch(torch):
    grads = []
    for lib, fn in zip((torch, mg), _both(torch, sign_ste)):
        z = _leaf(lib, [-2.0, -0.5, 0.5, 1.5], lib.float32)
        y = fn.apply(z)
        assert type(y.grad_fn).__name__ == "SignSTEBackward" == y.grad_fn.name()
        assert y.tolist() == [-1.0, -1.0, 1.0, 1.0] and str(y.dtype).endswith("float32")
        (y * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        grads.append(z.grad.tolist())
    assert grads[0] == grads[1] == [0.0, 2.0, 3.0, 0.0]


def test_forward_sees_tensors_and_runs_without_recording():
    seen = []

    class Look(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale, shift=0.0):
            seen.append((type(x), x.requires_grad, mg.is_grad_enabled(), scale, shift))
            return x * scale + shift

        @staticmethod
        def backward(ctx, g):
            seen.append((type(g), mg.is_grad_enabled()))
            return g * 2, None, None  # shift, given by keyword, is an input too

    x = mg.ones(2, requires_grad=True)
    y = Look.apply(x, 2.0, shift=1.0)
    y.sum().backward()
    assert seen == [(mg.Tensor, True, False, 2.0, 1.0), (mg.Tensor, False)]
    assert y.tolist() == [3.0, 3.0] and x.grad.tolist() == [2.0, 2.0]


def test_gradcheck_of_custom_functions():
    x = mg.tensor(_u(3, 4), requires_grad=True)
    assert gradcheck(cube(mg).apply, [x])
    assert gradcheck(lambda t: sin_cos(mg).apply(t)[0] * 2 + sin_cos(mg).apply(t)[1], [x])

    class AddBias(mg.autograd.Function):  # backward returns g for b: the engine sums (3, 4)
        @staticmethod
        def forward(ctx, x, b):
            return x + b

        @staticmethod
        def backward(ctx, g):
            return g, g
    assert gradcheck(AddBias.apply, [x, mg.tensor(_u(4, seed=1), requires_grad=True)])


def test_double_backward_through_a_custom_function(torch):
    results = []
    for lib, fn in zip((torch, mg), _both(torch, cube)):
        x = _leaf(lib, [1.0, 2.0, -0.5])
        (g,) = lib.autograd.grad(fn.apply(x).sum(), x, create_graph=True)
        assert g.requires_grad
        (h,) = lib.autograd.grad((g * g).sum(), x)
        results.append((g.tolist(), h.tolist()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    assert gradgradcheck(cube(mg).apply, [mg.tensor(_u(4), requires_grad=True)])
    assert gradgradcheck(lambda t: sin_cos(mg).apply(t)[1], [mg.tensor(_u(3),
                                                                      requires_grad=True)])


@pytest.mark.parametrize("materialize", [True, False])
def test_several_outputs_one_unused(torch, materialize):
    results = []
    for lib in (torch, mg):
        fn = sin_cos(lib, materialize)
        x = _leaf(lib, [0.3, -1.2])
        s, c = fn.apply(x)
        assert s.grad_fn.name() == c.grad_fn.name() == "SinCosBackward"
        (c * 3).sum().backward()
        node = c.grad_fn
        results.append((x.grad.tolist(), node.seen))
    assert results[0] == results[1]
    assert results[1][1] == ((False, False) if materialize else (True, False))


def test_several_outputs_all_used_arrive_together(torch):
    results = []
    for lib in (torch, mg):
        x = _leaf(lib, [0.3, -1.2, 2.0])
        s, c = sin_cos(lib).apply(x)
        s.register_hook(lambda g: g * 10)
        c.retain_grad()
        loss = (s * c).sum() + s.sum()
        loss.backward(retain_graph=True)
        first = x.grad.tolist()
        loss.backward()  # the graph was retained: the gradients add up
        results.append((first, x.grad.tolist(), c.grad.tolist()))
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)


def test_autograd_grad_and_backward_inputs_through_it(torch):
    results = []
    for lib in (torch, mg):
        x, w = _leaf(lib, [0.5, 1.5]), _leaf(lib, [2.0, -1.0])
        y = cube(lib).apply(x * w)
        (gx,) = lib.autograd.grad(y.sum(), x, retain_graph=True)
        y.sum().backward(inputs=[w])
        results.append((gx.tolist(), w.grad.tolist(), x.grad))
    assert results[1][2] is None
    np.testing.assert_allclose(results[1][:2], results[0][:2], rtol=1e-12)


def test_mark_dirty(torch):
    def scale_(lib):
        class Scale_(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.mul_(2)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return 2 * g
        return Scale_

    results = []
    for lib, fn in zip((torch, mg), _both(torch, scale_)):
        x = _leaf(lib, [1.0, 2.0])
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            fn.apply(x)
        a = x * 3
        b = fn.apply(a)
        assert b is a and b.grad_fn.name() == "Scale_Backward"
        (b * b).sum().backward()
        results.append((a._version, b.tolist(), x.grad.tolist()))
    assert results[0] == results[1]


def test_non_differentiable_outputs(torch):
    def sort(lib):
        class Sort(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                values, indices = x.sort()
                ctx.mark_non_differentiable(indices)
                ctx.save_for_backward(indices)
                return values, indices

            @staticmethod
            def backward(ctx, g_values, g_indices):
                (indices,) = ctx.saved_tensors
                ctx.g_indices = g_indices
                return lib.zeros_like(g_values).scatter(0, indices, g_values)
        return Sort

    results = []
    for lib, fn in zip((torch, mg), _both(torch, sort)):
        x = _leaf(lib, [3.0, 1.0, 2.0])
        v, i = fn.apply(x)
        assert v.grad_fn.name() == "SortBackward" and i.grad_fn is None
        assert not i.requires_grad
        (v * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        results.append((v.tolist(), i.tolist(), x.grad.tolist(), v.grad_fn.g_indices.tolist()))
    assert results[0] == results[1]


def test_integer_and_plain_outputs_pass_through(torch):
    def mixed(lib):
        class Mixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return (x > 0).long(), 5, x * 2

            @staticmethod
            def backward(ctx, g_mask, g_five, g_double):
                ctx.got = (g_mask.tolist(), g_five)
                return g_double * 2
        return Mixed

    results = []
    for lib, fn in zip((torch, mg), _both(torch, mixed)):
        x = _leaf(lib, [-1.0, 1.0])
        mask, five, double = fn.apply(x)
        assert five == 5 and not mask.requires_grad and double.requires_grad
        double.sum().backward()
        results.append((mask.tolist(), x.grad.tolist(), double.grad_fn.got))
    assert results[0] == results[1]


def test_an_input_returned_unchanged_is_a_new_tensor_on_its_memory(torch):
    def ident(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 5
        return Ident

    for lib, fn in zip((torch, mg), _both(torch, ident)):
        x = _leaf(lib, [1.0, 2.0])
        y = fn.apply(x)
        assert y is not x and y.grad_fn.name() == "IdentBackward" and not y.is_leaf
        assert np.shares_memory(y.detach().numpy(), x.detach().numpy())
        y.sum().backward()
        assert x.grad.tolist() == [5.0, 5.0]
        z = lib.ones(2)
        assert fn.apply(z) is not z and not fn.apply(z).requires_grad


def test_a_saved_tensor_changed_in_place_raises(torch):
    for lib, fn in zip((torch, mg), _both(torch, cube)):
        x = _leaf(lib, [1.0, 2.0])
        a = x * 1
        y = fn.apply(a)
        a.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_saved_tensors_are_freed_by_backward(torch):
    for lib, fn in zip((torch, mg), _both(torch, cube)):
        x = _leaf(lib, [1.0, 2.0])
        y = fn.apply(x)
        y.sum().backward()
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.sum().backward()
        with pytest.raises(RuntimeError, match="access saved tensors after they have already"):
            y.grad_fn.saved_tensors
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but "
                                        "argument 1 is of type int"):
        class Bad(mg.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x
        Bad.apply(mg.ones(1))


def _returning(lib, grads, *args):
    class Returns(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, *rest):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return grads(lib, g)
    x = _leaf(lib, [1.0, 2.0, 3.0], lib.float32)
    Returns.apply(x, *args).sum().backward()
    return x


@pytest.mark.parametrize("grads, args, words", [
    (lambda lib, g: g, ("ones",), "incorrect number of gradients (expected 2, got 1)"),
    (lambda lib, g: (g, g), (), "incorrect number of gradients (expected 1, got 2)"),
    (lambda lib, g: (g, g), (2.0,), "gradient different than None at position 2, but the "
                                    "corresponding forward input was not a Variable"),
    (lambda lib, g: lib.ones(4), (), "returned an invalid gradient at index 0 - got [4] but "
                                     "expected shape compatible with [3]"),
    (lambda lib, g: g.sum(), (), "returned an invalid gradient at index 0 - got [] but "
                                 "expected shape compatible with [3]"),
    (lambda lib, g: 2.0, (), "expected Variable or None (got float)"),
])
def test_wrong_gradients_raise_as_pytorch(torch, grads, args, words):
    for lib in (torch, mg):
        extra = tuple(lib.ones(3) if a == "ones" else a for a in args)
        with pytest.raises(RuntimeError) as info:
            _returning(lib, grads, *extra)
        assert words in str(info.value)
        assert "ReturnsBackward" in str(info.value) or lib is torch  # PyTorch's last case


def test_gradients_are_fitted_to_their_inputs(torch):
    for lib in (torch, mg):
        # trailing Nones are allowed; a broadcast shape is summed; another dtype is cast
        x = _returning(lib, lambda lib, g: (g, None, None))
        assert x.grad.tolist() == [1.0, 1.0, 1.0]
        x = _returning(lib, lambda lib, g: lib.ones(2, 3, dtype=lib.float64))
        assert x.grad.tolist() == [2.0, 2.0, 2.0] and str(x.grad.dtype).endswith("float32")


def test_setup_context_style_and_needs_input_grad(torch):
    def scale(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, factor, w):
                return x * factor * w

            @staticmethod
            def setup_context(ctx, inputs, output):
                x, factor, w = inputs
                ctx.factor = factor
                ctx.needs = ctx.needs_input_grad
                ctx.save_for_backward(x, w)

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g * ctx.factor * w, None, g * ctx.factor * x
        return Scale

    results = []
    for lib, fn in zip((torch, mg), _both(torch, scale)):
        x, w = _leaf(lib, [1.0, 2.0]), lib.tensor([3.0, 4.0], dtype=lib.float64)
        y = fn.apply(x, 2.5, w)
        y.sum().backward()
        results.append((y.tolist(), x.grad.tolist(), y.grad_fn.needs))
    assert results[0] == results[1] and results[1][2] == (True, False, False)


def test_once_differentiable(torch):
    def square(lib):
        class Square(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                ctx.recording = lib.is_grad_enabled()
                (x,) = ctx.saved_tensors
                return 2 * g * x
        return Square

    for lib, fn in zip((torch, mg), _both(torch, square)):
        x = _leaf(lib, [1.0, 3.0])
        y = fn.apply(x)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        assert g.tolist() == [2.0, 6.0] and not y.grad_fn.recording
        assert not g.requires_grad  # the incoming gradient (ones) needs none
        v = _leaf(lib, [1.0, 1.0])
        (g,) = lib.autograd.grad(fn.apply(x), x, grad_outputs=v, create_graph=True)
        assert g.requires_grad
        with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                                               "was marked with @once_differentiable"):
            g.sum().backward()


def test_anomaly_mode_names_the_function():
    class Bad(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * float("nan")

    x = mg.ones(2, requires_grad=True)
    with mg.autograd.detect_anomaly():
        y = Bad.apply(x)
        with pytest.raises(RuntimeError, match="BadBackward returned NaN"):
            y.sum().backward()


def test_module_names_and_legacy_use(torch):
    from minigrad.autograd.function import (Function, FunctionCtx, InplaceFunction,
                                            once_differentiable)
    assert mg.autograd.Function is Function and callable(once_differentiable)
    assert isinstance(cube(mg).apply(mg.ones(1, requires_grad=True)).grad_fn, FunctionCtx)
    fn = cube(mg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        instance = fn()
    assert caught and caught[0].category is DeprecationWarning
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        instance(mg.ones(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert InplaceFunction(inplace=True).inplace
    assert set(dir(torch.autograd.function)) >= {"Function", "FunctionCtx", "InplaceFunction",
                                                 "once_differentiable"}


def test_under_no_grad_nothing_is_recorded():
    x = mg.ones(2, requires_grad=True)
    with mg.no_grad():
        y = cube(mg).apply(x)
    assert not y.requires_grad and y.grad_fn is None


def test_edges_and_dirty_inputs_not_returned(torch):
    def affine(lib):
        class Affine(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k, y):
                return x * k + y

            @staticmethod
            def backward(ctx, g):
                return g, None, g
        return Affine

    def forgets(lib):
        class Forgets(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b):
                a.add_(1)
                ctx.mark_dirty(a, b)
                return a

            @staticmethod
            def backward(ctx, g):
                return g, None
        return Forgets

    for lib in (torch, mg):
        y = affine(lib).apply(lib.ones(2, requires_grad=True), 2.0, lib.ones(2))
        edges = [None if n is None else type(n).__name__ for n, _ in y.grad_fn.next_functions]
        assert edges == ["AccumulateGrad", None]
        with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                               "method were not returned as output"):
            forgets(lib).apply(lib.ones(2), lib.ones(2))


def sigmoid_saving_output(lib):
    class Sig(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = lib.sigmoid(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y * (1 - y)
    return Sig


def test_a_saved_output_holds_no_cycle_and_differentiates_twice(torch):
    import gc
    import weakref
    results = []
    for lib, fn in zip((torch, mg), _both(torch, sigmoid_saving_output)):
        x = _leaf(lib, [0.5, -1.0, 2.0])
        gc.disable()
        try:
            y = fn.apply(x)
            node = weakref.ref(y.grad_fn)
            del y
            assert node() is None  # freed by reference counts alone
        finally:
            gc.enable()
        (g,) = lib.autograd.grad(fn.apply(x).sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        results.append((g.tolist(), h.tolist()))
        y = fn.apply(x)
        y.mul_(2)  # the saved output changes: its version is still checked
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    np.testing.assert_allclose(results[1], results[0], rtol=1e-12)
    assert gradgradcheck(sigmoid_saving_output(mg).apply, [mg.tensor(_u(4), requires_grad=True)])
