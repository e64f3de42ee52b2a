"""Every differentiable op: forward equals NumPy, a float64 gradcheck passes, and the gradient
each input receives has that input's shape (checked on the raw gradient, seen by a leaf hook,
before the engine would broadcast it)."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad import Tensor
from minigrad.autograd import gradcheck
from strategies import (arrays, broadcastable_pairs, distinct_arrays, grid_arrays, np_dims,
                        on_grid_arrays, positive_arrays, shape_and_dim, shape_and_dims,
                        shapes)

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def check(fn, arrays_, ref=None, rtol=1e-7, atol=1e-10, **gc_kwargs):
    """Forward vs `ref` (NumPy), gradcheck, and raw gradient shapes == input shapes."""
    inputs = [mg.tensor(np.array(a, dtype=np.float64), requires_grad=True) for a in arrays_]
    out = fn(*inputs)
    assert isinstance(out, Tensor)
    assert out.requires_grad and out.grad_fn is not None
    assert out.dtype == np.float64
    if ref is not None:
        expected = np.asarray(ref(*[np.array(a, dtype=np.float64) for a in arrays_]))
        assert out.shape == expected.shape
        np.testing.assert_allclose(out.numpy(), expected, rtol=rtol, atol=atol)
    seen = {}
    for i, t in enumerate(inputs):
        t.register_hook(lambda g, i=i: seen.setdefault(i, []).append((tuple(g.shape), g.dtype)))
    assert gradcheck(fn, inputs, **gc_kwargs)
    for i, t in enumerate(inputs):
        assert seen.get(i), f"input {i} received no gradient"
        assert all(s == (t.shape, np.float64) for s in seen[i]), \
            f"input {i}: grads {seen[i]} vs {t.shape}"
    return out


# --- binary arithmetic with broadcasting ------------------------------------------------------

BINARY = {
    "add": (lambda a, b: a + b, np.add, arrays, arrays),
    "sub": (lambda a, b: a - b, np.subtract, arrays, arrays),
    "mul": (lambda a, b: a * b, np.multiply, arrays, arrays),
    "div": (lambda a, b: a / b, np.divide, arrays, grid_arrays),
    "pow": (lambda a, b: a ** b, np.power, positive_arrays, arrays),
    "maximum": (lambda a, b: a.maximum(b), np.maximum, grid_arrays, on_grid_arrays),
    "minimum": (lambda a, b: a.minimum(b), np.minimum, grid_arrays, on_grid_arrays),
    "mg.maximum": (lambda a, b: mg.maximum(a, b), np.maximum, on_grid_arrays, grid_arrays),
    "mg.minimum": (lambda a, b: mg.minimum(a, b), np.minimum, on_grid_arrays, grid_arrays),
    "method add": (lambda a, b: a.add(b), np.add, arrays, arrays),
    "method mul": (lambda a, b: a.mul(b), np.multiply, arrays, arrays),
}


@pytest.mark.parametrize("name", list(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_broadcast(name, data):
    fn, ref, sa, sb = BINARY[name]
    shape_a, shape_b = data.draw(broadcastable_pairs())
    a, b = data.draw(sa(shape_a)), data.draw(sb(shape_b))
    check(fn, [a, b], ref)


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_broadcast_gradient_shapes_fixed(name):
    # (3, 1) with (1, 4) and (4,) with (2, 3, 4): both inputs are stretched
    fn, ref, _, _ = BINARY[name]
    rng = np.random.default_rng(0)
    for sa, sb in (((3, 1), (1, 4)), ((4,), (2, 3, 4)), ((2, 1, 4), (3, 1)), ((), (2, 2))):
        a = rng.uniform(0.6, 1.9, sa) + 0.05  # positive, no ties with the grid below
        b = rng.integers(1, 4, sb) * 0.5
        check(fn, [a, b], ref)


def _scalar_cases():
    return [
        ("x + 2.5", lambda x: x + 2.5, lambda a: a + 2.5, arrays),
        ("2.5 + x", lambda x: 2.5 + x, lambda a: 2.5 + a, arrays),
        ("x + 2", lambda x: x + 2, lambda a: a + 2, arrays),
        ("x - 1.5", lambda x: x - 1.5, lambda a: a - 1.5, arrays),
        ("1.5 - x", lambda x: 1.5 - x, lambda a: 1.5 - a, arrays),
        ("x * -1.5", lambda x: x * -1.5, lambda a: a * -1.5, arrays),
        ("3 * x", lambda x: 3 * x, lambda a: 3 * a, arrays),
        ("x / 2.5", lambda x: x / 2.5, lambda a: a / 2.5, arrays),
        ("2.5 / x", lambda x: 2.5 / x, lambda a: 2.5 / a, grid_arrays),
        ("x ** 2", lambda x: x ** 2, lambda a: a ** 2, arrays),
        ("x ** 3", lambda x: x ** 3, lambda a: a ** 3, arrays),
        ("x ** 0.5", lambda x: x ** 0.5, lambda a: a ** 0.5, positive_arrays),
        ("x ** -1", lambda x: x ** -1.0, lambda a: a ** -1.0, grid_arrays),
        ("2 ** x", lambda x: 2.0 ** x, lambda a: 2.0 ** a, arrays),
        ("array + x", lambda x: np.full(x.shape, 2.0) + x, lambda a: 2.0 + a, arrays),
        ("array * x", lambda x: np.full(x.shape, 2.0) * x, lambda a: 2.0 * a, arrays),
        ("-x", lambda x: -x, lambda a: -a, arrays),
        ("neg", lambda x: x.neg(), lambda a: -a, arrays),
        ("sub method", lambda x: x.sub(1.0), lambda a: a - 1.0, arrays),
        ("div method", lambda x: x.div(4.0), lambda a: a / 4.0, arrays),
    ]


SCALAR = {c[0]: c[1:] for c in _scalar_cases()}


@pytest.mark.parametrize("name", list(SCALAR))
@SETTINGS
@given(data=st.data())
def test_scalar_either_side(name, data):
    fn, ref, strat = SCALAR[name]
    a = data.draw(strat(data.draw(shapes())))
    out = check(fn, [a], ref)
    assert out.shape == np.shape(a)


def test_pow_tensor_exponent_gradient_both_sides():
    x = mg.tensor([0.5, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    y = mg.tensor([2.0, -1.0, 0.5], dtype=mg.float64, requires_grad=True)
    (x ** y).sum().backward()
    a, b = x.numpy(), y.numpy()
    np.testing.assert_allclose(x.grad.numpy(), b * a ** (b - 1))
    np.testing.assert_allclose(y.grad.numpy(), a ** b * np.log(a))


# --- matmul ---------------------------------------------------------------------------------

@st.composite
def matmul_shapes(draw):
    n, k, m = draw(st.integers(1, 4)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["1d@1d", "1d@2d", "2d@1d", "2d@2d", "batched", "3d@2d",
                                 "2d@3d", "1d@3d", "3d@1d"]))
    if kind == "1d@1d":
        return (k,), (k,)
    if kind == "1d@2d":
        return (k,), (k, m)
    if kind == "2d@1d":
        return (n, k), (k,)
    if kind == "2d@2d":
        return (n, k), (k, m)
    if kind == "3d@2d":
        return (draw(st.integers(1, 3)), n, k), (k, m)
    if kind == "2d@3d":
        return (n, k), (draw(st.integers(1, 3)), k, m)
    if kind == "1d@3d":
        return (k,), (draw(st.integers(1, 3)), k, m)
    if kind == "3d@1d":
        return (draw(st.integers(1, 3)), n, k), (k,)
    ba, bb = draw(broadcastable_pairs(min_dims=1, max_dims=2, max_side=3))
    return ba + (n, k), bb + (k, m)


@SETTINGS
@given(data=st.data())
def test_matmul(data):
    sa, sb = data.draw(matmul_shapes())
    a, b = data.draw(arrays(sa)), data.draw(arrays(sb))
    check(lambda x, y: x @ y, [a, b], np.matmul, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("sa, sb", [
    ((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)), ((2, 3), (3, 4)),
    ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)),
])
def test_matmul_spellings(sa, sb):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    expected = np.matmul(a, b)
    for fn in (lambda x, y: x @ y, lambda x, y: x.matmul(y), lambda x, y: mg.matmul(x, y)):
        check(fn, [a, b], lambda p, q: expected, rtol=1e-10, atol=1e-12)


def test_matmul_float32_and_with_array():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.ones((3, 2), dtype=np.float32)
    out = mg.tensor(a) @ mg.tensor(b)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), a @ b)
    np.testing.assert_allclose((a @ mg.tensor(b)).numpy(), a @ b)  # __rmatmul__


@st.composite
def permuted_matmul_case(draw):
    """(shape of a, shape of b, memory order of a, of b, seed): same batch dims, sides >= 2."""
    nd = draw(st.integers(2, 4))
    side = st.integers(2, 4)
    batch = tuple(draw(side) for _ in range(nd - 2))
    m, k, n = draw(side), draw(side), draw(side)
    orders = [tuple(draw(st.permutations(range(nd)))) for _ in "ab"]
    return batch + (m, k), batch + (k, n), orders[0], orders[1], draw(st.integers(0, 2**32 - 1))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=permuted_matmul_case())
@pytest.mark.parametrize("path", ["numpy call", "kernels"])
def test_matmul_of_permuted_views_and_gradient_layouts(path, case, monkeypatch):
    # a and b are permuted views (as attention's heads are); their gradients are made in their
    # memory order (PyTorch's gradient layout contract), so that the permute's backward
    # hands a contiguous gradient on to whatever made the memory
    from minigrad import kernels
    if path == "kernels":  # the kernels' paths (OpenBLAS blocks and batches) even when tiny
        monkeypatch.setattr(kernels.policy, "PARALLEL_MIN_WORK", 0)
        monkeypatch.setattr(kernels.policy, "SERIAL_MATMUL_MAX_WORK", 0)
    sa, sb, oa, ob, seed = case
    r = np.random.default_rng(seed)
    ma = mg.tensor(r.standard_normal([sa[d] for d in oa]), requires_grad=True)  # the memory
    mb = mg.tensor(r.standard_normal([sb[d] for d in ob]), requires_grad=True)
    ia, ib = tuple(np.argsort(oa)), tuple(np.argsort(ob))

    def fn(x, y):
        return x.permute(*ia) @ y.permute(*ib)

    out = fn(ma, mb)
    np.testing.assert_allclose(out.numpy(), np.matmul(ma.numpy().transpose(ia),
                                                      mb.numpy().transpose(ib)), rtol=1e-12)
    seen = {}
    ma.register_hook(lambda g: seen.setdefault("a", g))
    mb.register_hook(lambda g: seen.setdefault("b", g))
    assert gradcheck(fn, [ma, mb])
    nd = len(sa)
    for name, order in (("a", oa), ("b", ob)):
        # the memory order is kept where its matrices have contiguous rows or columns
        if order[-1] >= nd - 2:
            assert seen[name].numpy().flags.c_contiguous, (name, order)


def test_matmul_output_in_a_given_layout():
    # MatMul's `like`: the result takes like's memory order, the values are unchanged
    from minigrad import ops
    r = np.random.default_rng(0)
    w = mg.tensor(r.standard_normal((2, 3, 5, 6)), requires_grad=True)
    v = mg.tensor(r.standard_normal((2, 6, 3, 4))).permute(0, 2, 1, 3)   # (2, 3, 6, 4)
    q = np.empty((2, 5, 3, 4)).transpose(0, 2, 1, 3)                      # (2, 3, 5, 4)
    out = ops.MatMul.apply(w, v, like=q)
    np.testing.assert_allclose(out.numpy(), np.matmul(w.numpy(), v.numpy()), rtol=1e-12)
    assert out.numpy().transpose(0, 2, 1, 3).flags.c_contiguous
    merged = out.permute(0, 2, 1, 3).reshape(2, 5, 12)
    assert np.shares_memory(merged.numpy(), out.numpy())  # merging the heads: a view
    assert gradcheck(lambda a: ops.MatMul.apply(a, v, like=q), [w])


# --- unary elementwise ----------------------------------------------------------------------

def _gelu_exact(a):
    return np.vectorize(lambda v: 0.5 * v * (1 + math.erf(v / math.sqrt(2))))(a)


def _gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a ** 3)))


UNARY = {
    "exp": (lambda x: x.exp(), np.exp, arrays),
    "mg.exp": (lambda x: mg.exp(x), np.exp, arrays),
    "log": (lambda x: x.log(), np.log, positive_arrays),
    "mg.log": (lambda x: mg.log(x), np.log, positive_arrays),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, positive_arrays),
    "mg.sqrt": (lambda x: mg.sqrt(x), np.sqrt, positive_arrays),
    "abs": (lambda x: x.abs(), np.abs, grid_arrays),
    "mg.abs": (lambda x: mg.abs(x), np.abs, grid_arrays),
    "tanh": (lambda x: x.tanh(), np.tanh, arrays),
    "mg.tanh": (lambda x: mg.tanh(x), np.tanh, arrays),
    "sigmoid": (lambda x: x.sigmoid(), lambda a: 1 / (1 + np.exp(-a)), arrays),
    "mg.sigmoid": (lambda x: mg.sigmoid(x), lambda a: 1 / (1 + np.exp(-a)), arrays),
    "relu": (lambda x: x.relu(), lambda a: np.maximum(a, 0), grid_arrays),
    "mg.relu": (lambda x: mg.relu(x), lambda a: np.maximum(a, 0), grid_arrays),
    "gelu": (lambda x: x.gelu(), _gelu_exact, arrays),
    "mg.gelu": (lambda x: mg.gelu(x), _gelu_exact, arrays),
    "gelu tanh": (lambda x: x.gelu(approximate="tanh"), _gelu_tanh, arrays),
    "mg.gelu tanh": (lambda x: mg.gelu(x, approximate="tanh"), _gelu_tanh, arrays),
    "clamp both": (lambda x: x.clamp(-1.0, 1.0), lambda a: np.clip(a, -1, 1), grid_arrays),
    "clamp min": (lambda x: x.clamp(min=0.5), lambda a: np.maximum(a, 0.5), grid_arrays),
    "clamp max": (lambda x: x.clamp(max=-0.5), lambda a: np.minimum(a, -0.5), grid_arrays),
    "clip": (lambda x: x.clip(-2.0, 0.0), lambda a: np.clip(a, -2, 0), grid_arrays),
    "mg.clamp": (lambda x: mg.clamp(x, -1.5, 1.0), lambda a: np.clip(a, -1.5, 1), grid_arrays),
}


@pytest.mark.parametrize("name", list(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary(name, data):
    fn, ref, strat = UNARY[name]
    a = data.draw(strat(data.draw(shapes())))
    check(fn, [a], ref, rtol=1e-9, atol=1e-12)


def test_gelu_exact_against_math_erf_wide_range():
    a = np.linspace(-6, 6, 97)
    out = mg.tensor(a).gelu()
    np.testing.assert_allclose(out.numpy(), _gelu_exact(a), rtol=1e-12, atol=1e-15)
    out32 = mg.tensor(a.astype(np.float32)).gelu()
    assert out32.dtype == np.float32
    np.testing.assert_allclose(out32.numpy(), _gelu_exact(a), rtol=1e-5, atol=1e-6)


def test_sigmoid_is_stable_for_large_inputs():
    x = mg.tensor([-1e4, -50.0, 0.0, 50.0, 1e4], requires_grad=True)
    y = x.sigmoid()
    assert np.all(np.isfinite(y.numpy()))
    np.testing.assert_allclose(y.numpy(), [0, 1 / (1 + np.exp(50)), 0.5, 1 / (1 + np.exp(-50)), 1],
                               atol=1e-7)
    y.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_relu_abs_clamp_gradients_by_hand():
    x = mg.tensor([-2.0, -0.5, 0.5, 3.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0, 0, 1, 1]
    x.grad = None
    x.abs().sum().backward()
    assert x.grad.tolist() == [-1, -1, 1, 1]
    x.grad = None
    x.clamp(-1.0, 1.0).sum().backward()
    assert x.grad.tolist() == [0, 1, 1, 0]
    # exactly on a bound the gradient passes (PyTorch's convention)
    y = mg.tensor([-1.0, 1.0, 0.0], requires_grad=True)
    y.clamp(-1.0, 1.0).sum().backward()
    assert y.grad.tolist() == [1, 1, 1]


def test_maximum_minimum_ties_split_gradient():
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = mg.tensor([1.0, 5.0, 0.0], requires_grad=True)
    a.maximum(b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0]
    assert b.grad.tolist() == [0.5, 1.0, 0.0]
    a.grad = b.grad = None
    a.minimum(b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0]
    assert b.grad.tolist() == [0.5, 0.0, 1.0]


UNARY_F32 = [
    lambda x: x.exp(), lambda x: x.abs().log(), lambda x: x.abs().sqrt(), lambda x: x.abs(),
    lambda x: x.tanh(), lambda x: x.sigmoid(), lambda x: x.relu(), lambda x: x.gelu(),
    lambda x: x.gelu(approximate="tanh"), lambda x: x.clamp(-0.5, 0.5), lambda x: -x,
    lambda x: x * 2.5, lambda x: 2.5 / x, lambda x: x ** 2, lambda x: 2.0 ** x, lambda x: x + 1,
    lambda x: x.maximum(0.0), lambda x: x.sum(0), lambda x: x.mean(), lambda x: x.amax(1),
    lambda x: x.var(), lambda x: x.std(0), lambda x: x.logsumexp(1), lambda x: x.softmax(0),
    lambda x: x.log_softmax(-1), lambda x: x @ x.T, lambda x: x[0], lambda x: x.T,
    lambda x: mg.dropout(x, 0.5, seed=3), lambda x: mg.where(x > 0, x, 0.0),
    lambda x: x.masked_fill(x > 0, 1.0), lambda x: mg.cat([x, x], 1),
    lambda x: mg.stack([x, x]), lambda x: x.gather(1, mg.tensor([[0], [1]])),
    lambda x: x.index_select(1, mg.tensor([2, 0])), lambda x: x.reshape(-1),
    lambda x: x.expand(3, 2, 3),
]


@pytest.mark.parametrize("i", range(len(UNARY_F32)))
def test_float32_stays_float32(i):
    x = mg.tensor([[0.5, -1.25, 2.0], [1.5, 0.75, -0.25]], requires_grad=True)
    out = UNARY_F32[i](x)
    assert out.dtype == np.float32
    out.backward(np.ones(out.shape, dtype=np.float32))
    assert x.grad.dtype == np.float32 and x.grad.shape == x.shape


# --- reductions -----------------------------------------------------------------------------

def _reduced_count(shape, dim):
    return int(np.prod([shape[d] for d in np_dims(dim, len(shape))], dtype=np.int64))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "logsumexp", "mg.sum",
                                  "mg.mean", "mg.logsumexp"])
@SETTINGS
@given(data=st.data(), keepdim=st.booleans())
def test_reductions(name, data, keepdim):
    shape, dim = data.draw(shape_and_dims())
    axes = np_dims(dim, len(shape))
    a = data.draw(distinct_arrays(shape))  # distinct values: no tied maxima
    base = name.replace("mg.", "")
    refs = {"sum": np.sum, "mean": np.mean, "amax": np.max, "amin": np.min,
            "logsumexp": lambda v, axis, keepdims: np.log(np.sum(np.exp(v), axis=axis,
                                                                  keepdims=keepdims))}
    if name.startswith("mg."):
        fn = lambda x: getattr(mg, base)(x, dim, keepdim)  # noqa: E731
    else:
        fn = lambda x: getattr(x, base)(dim=dim, keepdim=keepdim)  # noqa: E731
    check(fn, [a], lambda v: refs[base](v, axis=axes, keepdims=keepdim), rtol=1e-9)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("mode", ["default", "unbiased=False", "correction=0", "correction=1"])
@SETTINGS
@given(data=st.data(), keepdim=st.booleans())
def test_var_std(name, mode, data, keepdim):
    shape, dim = data.draw(shape_and_dims(min_dims=1))
    if _reduced_count(shape, dim) < 2:  # var of one element is 0 (or 0/0 unbiased)
        shape, dim = shape + (2,), None
    axes = np_dims(dim, len(shape))
    a = data.draw(distinct_arrays(shape))
    kwargs = {"default": {}, "unbiased=False": {"unbiased": False},
              "correction=0": {"correction": 0}, "correction=1": {"correction": 1}}[mode]
    ddof = 0 if mode in ("unbiased=False", "correction=0") else 1
    ref = np.var if name == "var" else np.std
    check(lambda x: getattr(x, name)(dim=dim, keepdim=keepdim, **kwargs), [a],
          lambda v: ref(v, axis=axes, keepdims=keepdim, ddof=ddof), rtol=1e-9)


def test_var_std_by_hand():
    x = mg.tensor([1.0, 2.0, 3.0, 4.0])
    assert x.var().item() == pytest.approx(5 / 3)
    assert x.var(unbiased=False).item() == pytest.approx(1.25)
    assert x.std(correction=0).item() == pytest.approx(1.25 ** 0.5)
    assert x.std().item() == pytest.approx((5 / 3) ** 0.5)


@pytest.mark.parametrize("which", ["max", "min"])
@SETTINGS
@given(data=st.data(), keepdim=st.booleans())
def test_max_min_with_dim(which, data, keepdim):
    shape, dim = data.draw(shape_and_dim())
    a = data.draw(distinct_arrays(shape))
    x = mg.tensor(a)
    res = getattr(x, which)(dim, keepdim)
    values, indices = res
    assert res.values is values and res.indices is indices
    npval = (np.max if which == "max" else np.min)(a, axis=dim, keepdims=keepdim)
    npidx = (np.argmax if which == "max" else np.argmin)(a, axis=dim, keepdims=keepdim)
    np.testing.assert_array_equal(values.numpy(), npval)
    np.testing.assert_array_equal(indices.numpy(), npidx)
    assert indices.dtype == np.int64 and not indices.requires_grad
    check(lambda t: getattr(t, which)(dim, keepdim)[0], [a],
          lambda v: (np.max if which == "max" else np.min)(v, axis=dim, keepdims=keepdim))


@pytest.mark.parametrize("which", ["max", "min"])
@SETTINGS
@given(data=st.data())
def test_max_min_without_dim(which, data):
    a = data.draw(distinct_arrays(data.draw(shapes())))
    out = check(lambda t: getattr(t, which)(), [a], np.max if which == "max" else np.min)
    assert out.shape == ()


@pytest.mark.parametrize("dim", [0, -1, None])
@pytest.mark.parametrize("name, ref", [
    ("sum", lambda v: v), ("mean", lambda v: v), ("amax", lambda v: v), ("amin", lambda v: v),
    ("logsumexp", lambda v: v),
])
def test_reductions_of_0d_tensor(name, ref, dim):
    # dim 0 and -1 are valid for a 0-d tensor (PyTorch treats it as having one dim)
    out = check(lambda x: getattr(x, name)(dim=dim), [np.array(1.5)], ref)
    assert out.shape == ()
    assert getattr(mg.tensor(1.5), name)(dim=dim, keepdim=True).shape == ()


def test_max_and_var_of_0d_tensor():
    x = mg.tensor(2.5, dtype=mg.float64, requires_grad=True)
    values, indices = x.max(0)
    assert values.item() == 2.5 and indices.item() == 0
    v = x.var(0, correction=0)
    assert v.item() == 0.0
    (values + v).backward()
    assert x.grad.item() == 1.0


def test_amax_ties_share_gradient():
    x = mg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], requires_grad=True)
    x.amax(dim=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_amin_backward_keeps_float32(op):
    # the tie count is an integer: dividing by it once made the gradient float64, which the
    # matmul behind it then refused
    x = mg.tensor(np.arange(6.0).reshape(2, 3), dtype=mg.float32, requires_grad=True)
    w = mg.tensor(np.eye(3), dtype=mg.float32, requires_grad=True)
    getattr(x @ w, op)(-1).sum().backward()
    assert x.grad.dtype == np.float32 and w.grad.dtype == np.float32
    assert x.grad.tolist() == ([[0, 0, 1], [0, 0, 1]] if op == "amax" else [[1, 0, 0], [1, 0, 0]])


@SETTINGS
@given(data=st.data(), keepdim=st.booleans())
def test_argmax(data, keepdim):
    shape, dim = data.draw(shape_and_dim())
    a = data.draw(distinct_arrays(shape))
    x = mg.tensor(a, requires_grad=True)
    idx = x.argmax(dim, keepdim)
    np.testing.assert_array_equal(idx.numpy(), np.argmax(a, axis=dim, keepdims=keepdim))
    assert idx.dtype == np.int64 and not idx.requires_grad and idx.grad_fn is None
    np.testing.assert_array_equal(mg.argmax(x, dim, keepdim).numpy(), idx.numpy())
    flat = x.argmax()
    assert flat.shape == () and flat.item() == int(np.argmax(a))
    np.testing.assert_array_equal(x.argmin(dim).numpy(), np.argmin(a, axis=dim))


def test_sum_mean_by_hand():
    x = mg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    assert x.sum().item() == 15.0
    assert x.sum(0).tolist() == [3.0, 5.0, 7.0]
    assert x.sum((0, 1), keepdim=True).shape == (1, 1)
    assert x.mean(-1).tolist() == [1.0, 4.0]
    x.mean().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((2, 3), 1 / 6))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_logsumexp_large_and_inf(dim):
    a = np.array([[1e4, 1e4 - 1.0, -1e4], [-np.inf, 0.0, -np.inf]])
    x = mg.tensor(a, requires_grad=True)
    out = x.logsumexp(dim=dim)
    m = np.max(a, axis=dim, keepdims=True)
    expected = np.squeeze(np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m,
                          axis=dim)
    np.testing.assert_allclose(out.numpy(), expected)
    out.sum().backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_logsumexp_all_minus_inf_row():
    x = mg.tensor([[-np.inf, -np.inf], [0.0, 0.0]], requires_grad=True)
    out = x.logsumexp(dim=1)
    assert out.numpy()[0] == -np.inf
    assert out.numpy()[1] == pytest.approx(np.log(2))
    out.backward(np.ones(2))
    assert not np.any(np.isnan(x.grad.numpy()))
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0], [0.5, 0.5]])


# --- shape ops ------------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_reshape_view(data):
    shape = data.draw(shapes())
    a = data.draw(arrays(shape))
    n = a.size
    targets = [(-1,), (n,), (1, -1), (n, 1), tuple(reversed(shape)), (1,) + shape]
    target = data.draw(st.sampled_from(targets + ([()] if n == 1 else [])))
    check(lambda x: x.reshape(target), [a], lambda v: v.reshape(target))
    check(lambda x: x.reshape(*target), [a], lambda v: v.reshape(target))
    check(lambda x: x.view(target), [a], lambda v: v.reshape(target))
    check(lambda x: mg.reshape(x, target), [a], lambda v: v.reshape(target))


@SETTINGS
@given(data=st.data())
def test_transpose_permute_T(data):
    shape = data.draw(shapes(min_dims=1))
    nd = len(shape)
    a = data.draw(arrays(shape))
    d0, d1 = data.draw(st.integers(-nd, nd - 1)), data.draw(st.integers(-nd, nd - 1))
    check(lambda x: x.transpose(d0, d1), [a], lambda v: np.swapaxes(v, d0, d1))
    check(lambda x: mg.transpose(x, d0, d1), [a], lambda v: np.swapaxes(v, d0, d1))
    perm = tuple(data.draw(st.permutations(range(nd))))
    check(lambda x: x.permute(*perm), [a], lambda v: v.transpose(perm))
    check(lambda x: x.permute(perm), [a], lambda v: v.transpose(perm))
    check(lambda x: x.T, [a], lambda v: v.T)


@SETTINGS
@given(data=st.data())
def test_unsqueeze_squeeze_flatten(data):
    shape = data.draw(shapes(min_side=1, max_side=3))
    nd = len(shape)
    a = data.draw(arrays(shape))
    d = data.draw(st.integers(-nd - 1, nd))
    check(lambda x: x.unsqueeze(d), [a], lambda v: np.expand_dims(v, d))
    check(lambda x: x.squeeze(), [a], lambda v: np.squeeze(v))
    if nd:
        sd = data.draw(st.integers(-nd, nd - 1))
        expected = np.squeeze(a, sd) if shape[sd] == 1 else a
        check(lambda x: x.squeeze(sd), [a], lambda v: expected)
        s = data.draw(st.integers(0, nd - 1))
        e = data.draw(st.integers(s, nd - 1))
        target = shape[:s] + (-1,) + shape[e + 1:]
        check(lambda x: x.flatten(s, e), [a], lambda v: v.reshape(target))
    check(lambda x: x.flatten(), [a], lambda v: v.reshape(-1))


@st.composite
def expand_target(draw, shape):
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    body = tuple(draw(st.integers(1, 3)) if s == 1 else s for s in shape)
    # -1 keeps that dim's size
    minus = tuple(-1 if b == s and draw(st.booleans()) else b for b, s in zip(body, shape))
    return lead + body, lead + minus


@SETTINGS
@given(data=st.data())
def test_expand(data):
    shape = data.draw(shapes())
    a = data.draw(arrays(shape))
    full, spelled = data.draw(expand_target(shape))
    check(lambda x: x.expand(*spelled), [a], lambda v: np.broadcast_to(v, full))
    check(lambda x: x.expand(spelled), [a], lambda v: np.broadcast_to(v, full))
    b = np.zeros(full)
    check(lambda x: x.expand_as(mg.tensor(b)), [a], lambda v: np.broadcast_to(v, full))


def test_expand_gradient_sums_copies():
    x = mg.tensor([[1.0], [2.0]], requires_grad=True)
    x.expand(3, 2, 4).sum().backward()
    assert x.grad.tolist() == [[12.0], [12.0]]


# --- indexing -------------------------------------------------------------------------------

A345 = np.random.default_rng(5).standard_normal((3, 4, 5))

INDICES = {
    "int": 1,
    "negative int": -1,
    "np int": np.int64(2),
    "two ints": (0, 2),
    "three ints": (2, 3, 4),
    "slice": slice(1, 3),
    "step slice": (slice(None), slice(None, None, 2)),
    "negative step": (slice(None, None, -1), 1),
    "None": (None, 1),
    "ellipsis": (Ellipsis, 2),
    "int ellipsis None": (1, Ellipsis, None),
    "int array repeated": np.array([0, 2, 2, 0]),
    "list repeated": [0, 0, 1],
    "two arrays": (np.array([0, 1, 1]), np.array([2, 3, 2])),
    "slice + array": (slice(None), [3, 3, 0]),
    "array + slice + int": ([2, 2], slice(1, 3), 0),
    "2-D int array": np.array([[0, 1], [1, 1]]),
    "bool mask full": A345 > 0,
    "bool mask dim 0": np.array([True, False, True]),
    "bool mask + slice": (np.array([False, True, True]), slice(1, 3)),
    "tensor index": mg.tensor([2, 0, 2]),
    "bool tensor mask": mg.tensor(A345[..., 0] > 0),
}


@pytest.mark.parametrize("name", list(INDICES))
def test_getitem(name):
    index = INDICES[name]
    np_index = index.numpy() if isinstance(index, Tensor) else index
    if isinstance(np_index, list):
        np_index = np.array(np_index)
    check(lambda x: x[index], [A345], lambda v: v[np_index])


def test_getitem_repeated_indices_accumulate():
    x = mg.tensor([10.0, 20.0, 30.0], requires_grad=True)
    x[[0, 0, 1, 0]].sum().backward()
    assert x.grad.tolist() == [3.0, 1.0, 0.0]
    y = mg.tensor(np.zeros((2, 3)), requires_grad=True)
    y[np.array([1, 1]), np.array([2, 2])].sum().backward()
    assert y.grad.tolist() == [[0, 0, 0], [0, 0, 2]]
    z = mg.tensor(np.zeros((3, 2)), requires_grad=True)
    (z[[2, 2, 0]] * mg.tensor([[1.0], [2.0], [5.0]], dtype=mg.float64)).sum().backward()
    assert z.grad.tolist() == [[5, 5], [0, 0], [3, 3]]


def test_getitem_bool_mask_gradient():
    x = mg.tensor([1.0, -2.0, 3.0, -4.0], requires_grad=True)
    sel = x[x > 0]
    assert sel.tolist() == [1.0, 3.0]
    (sel * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 2.0, 0.0]


def test_iter_and_len():
    x = mg.tensor(np.arange(6.0).reshape(3, 2), requires_grad=True)
    rows = list(x)
    assert len(rows) == 3 and rows[2].tolist() == [4.0, 5.0]
    sum(r.sum() for r in rows).backward()
    assert x.grad.tolist() == [[1, 1]] * 3


# --- cat / stack / split / chunk ------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_cat(data):
    shape, dim = data.draw(shape_and_dim())
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    parts = []
    for s in sizes:
        sh = list(shape)
        sh[dim] = s
        parts.append(data.draw(arrays(tuple(sh))))
    ref = lambda *vs: np.concatenate(vs, axis=dim)  # noqa: E731
    check(lambda *xs: mg.cat(list(xs), dim), parts, ref)
    check(lambda *xs: mg.cat(xs, dim=dim), parts, ref)
    check(lambda *xs: mg.concat(list(xs), dim), parts, ref)


@SETTINGS
@given(data=st.data())
def test_stack(data):
    shape = data.draw(shapes())
    nd = len(shape)
    dim = data.draw(st.integers(-nd - 1, nd))
    n = data.draw(st.integers(1, 3))
    parts = [data.draw(arrays(shape)) for _ in range(n)]
    check(lambda *xs: mg.stack(list(xs), dim), parts, lambda *vs: np.stack(vs, axis=dim))


def test_cat_with_non_grad_tensor():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([3.0])
    out = mg.cat([a, b])
    assert out.tolist() == [1.0, 2.0, 3.0]
    (out * mg.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert a.grad.tolist() == [1.0, 2.0] and b.grad is None


@SETTINGS
@given(data=st.data())
def test_split_chunk(data):
    shape, dim = data.draw(shape_and_dim())
    n = shape[dim]
    a = data.draw(arrays(shape))
    size = data.draw(st.integers(1, n))
    bounds = list(range(size, n, size))
    pieces = np.split(a, bounds, axis=dim)
    x = mg.tensor(a)
    got = x.split(size, dim)
    assert isinstance(got, tuple) and len(got) == len(pieces)
    for g, p in zip(got, pieces):
        np.testing.assert_array_equal(g.numpy(), p)

    def weighted(parts):  # a different weight per piece, so a mix-up changes the gradient
        return mg.cat([p * float(i + 1) for i, p in enumerate(parts)], dim)

    ref_w = np.concatenate([p * float(i + 1) for i, p in enumerate(pieces)], axis=dim)
    check(lambda t: weighted(t.split(size, dim)), [a], lambda v: ref_w)
    check(lambda t: weighted(mg.split(t, size, dim)), [a], lambda v: ref_w)

    sizes = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=3).map(sorted))
    sizes = [b - a_ for a_, b in zip([0] + sizes, sizes + [n])]
    got = x.split(sizes, dim)
    assert [g.shape[dim] for g in got] == sizes

    chunks = data.draw(st.integers(1, n))
    csize = -(-n // chunks)
    cpieces = np.split(a, list(range(csize, n, csize)), axis=dim)
    got = x.chunk(chunks, dim)
    assert len(got) == len(cpieces) <= chunks
    for g, p in zip(got, cpieces):
        np.testing.assert_array_equal(g.numpy(), p)
    ref_c = np.concatenate([p * float(i + 1) for i, p in enumerate(cpieces)], axis=dim)
    check(lambda t: weighted(mg.chunk(t, chunks, dim)), [a], lambda v: ref_c)


# --- where / masked_fill / gather / index_select --------------------------------------------

@SETTINGS
@given(data=st.data())
def test_where(data):
    r = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    sc, sa, sb = r.input_shapes
    cond = data.draw(hnp.arrays(np.bool_, sc))
    a, b = data.draw(arrays(sa)), data.draw(arrays(sb))
    check(lambda x, y: mg.where(mg.tensor(cond), x, y), [a, b],
          lambda u, v: np.where(cond, u, v))
    check(lambda x, y: mg.where(cond, x, y), [a, b], lambda u, v: np.where(cond, u, v))


def test_where_with_scalars():
    x = mg.tensor([1.0, -2.0, 3.0], requires_grad=True)
    out = mg.where(x > 0, x, 0.0)
    assert out.tolist() == [1.0, 0.0, 3.0] and out.dtype == np.float32
    out.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    out2 = mg.where(x > 0, 5, x)
    assert out2.tolist() == [5.0, -2.0, 5.0] and out2.dtype == np.float32


@SETTINGS
@given(data=st.data(), value=st.sampled_from([0.0, 2.5, -1.0, -1e9, -np.inf]))
def test_masked_fill(data, value):
    shape = data.draw(shapes())
    # a mask shape that broadcasts *to* the tensor's shape: trailing dims, each 1 or equal
    keep = data.draw(st.integers(0, len(shape)))
    mshape = tuple(data.draw(st.sampled_from([1, n])) for n in shape[len(shape) - keep:])
    mask = data.draw(hnp.arrays(np.bool_, mshape))
    a = data.draw(arrays(shape))
    ref = lambda v: np.where(mask, value, v)  # noqa: E731
    if abs(value) > 1e3:  # gradcheck needs a moderate objective; check forward and grads by hand
        x = mg.tensor(a, requires_grad=True)
        out = x.masked_fill(mg.tensor(mask), value)
        np.testing.assert_array_equal(out.numpy(), ref(a))
        out.backward(np.ones(shape))
        np.testing.assert_array_equal(x.grad.numpy(), np.broadcast_to(~mask, shape) * 1.0)
        return
    check(lambda x: x.masked_fill(mg.tensor(mask), value), [a], ref)
    check(lambda x: mg.masked_fill(x, mask, value), [a], ref)


@SETTINGS
@given(data=st.data(), value=st.sampled_from([0.0, -np.inf, np.nan, 3.5]),
       transposed=st.booleans())
def test_masked_fill_trailing_mask_bits(data, value, transposed):
    """masked_fill with a mask of the tensor's trailing shape (attention's causal mask) gives
    np.where's bits forward and backward, on strided inputs too."""
    shape = data.draw(hnp.array_shapes(min_dims=2, max_dims=4, max_side=5))
    k = data.draw(st.integers(1, len(shape) - 1))
    mask = data.draw(hnp.arrays(np.bool_, shape[len(shape) - k:]))
    a = data.draw(hnp.arrays(np.float32, shape[::-1] if transposed else shape,
                             elements=st.floats(-1e3, 1e3, width=32) | st.just(np.nan)))
    x = mg.tensor(a, requires_grad=True)
    xin = x.permute(*reversed(range(len(shape)))) if transposed else x
    out = xin.masked_fill(mg.tensor(mask), value)
    ref = np.where(mask, np.float32(value), xin.numpy())
    assert out.dtype == np.float32 and out.shape == ref.shape
    np.testing.assert_array_equal(out.numpy().view(np.int32), ref.view(np.int32))
    g = data.draw(hnp.arrays(np.float32, shape, elements=st.floats(-10, 10, width=32)))
    out.backward(g)
    gref = np.where(mask, np.float32(0), g)
    gx = x.grad.numpy().transpose(*reversed(range(len(shape)))) if transposed else x.grad.numpy()
    np.testing.assert_array_equal(gx.view(np.int32), gref.view(np.int32))


@SETTINGS
@given(data=st.data(), dtype=st.sampled_from([np.float16, np.float64, np.int8, np.int32,
                                              np.int64, np.uint16, np.bool_]))
def test_masked_fill_bits_every_dtype(data, dtype):
    """masked_fill gives np.where's bits whatever the dtype and the fill (zero or not, NaN,
    -0.0), on strided inputs too."""
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, max_side=4))
    k = data.draw(st.integers(0, len(shape)))
    mask = data.draw(hnp.arrays(np.bool_, shape[len(shape) - k:]))
    a = data.draw(hnp.arrays(dtype, shape))
    a = a[..., ::-1] if data.draw(st.booleans()) else a
    value = data.draw(st.sampled_from([0, 1, True] if dtype == np.bool_ else
                                      [0, 3, -1] if np.dtype(dtype).kind in "iu" and
                                      dtype != np.uint16 else [0, 3, 7]
                                      if dtype == np.uint16 else [0.0, -np.inf, np.nan, -0.0]))
    out = mg.tensor(a).masked_fill(mg.tensor(mask), value).numpy()
    ref = np.where(mask, np.asarray(value, dtype=dtype), a)
    assert out.dtype == ref.dtype and out.shape == ref.shape
    np.testing.assert_array_equal(out.view(np.uint8), ref.view(np.uint8))


@SETTINGS
@given(data=st.data())
def test_gather(data):
    shape, dim = data.draw(shape_and_dim())
    a = data.draw(arrays(shape))
    ishape = list(shape)
    ishape[dim] = data.draw(st.integers(1, 4))
    index = data.draw(hnp.arrays(np.int64, tuple(ishape), elements=st.integers(0, shape[dim] - 1)))
    ref = lambda v: np.take_along_axis(v, index, axis=dim)  # noqa: E731
    check(lambda x: x.gather(dim, mg.tensor(index)), [a], ref)
    check(lambda x: mg.gather(x, dim, index), [a], ref)


def test_gather_repeated_accumulates():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    out = x.gather(1, mg.tensor([[0, 0, 2], [1, 1, 1]]))
    assert out.tolist() == [[1, 1, 3], [5, 5, 5]]
    out.sum().backward()
    assert x.grad.tolist() == [[2, 0, 1], [0, 3, 0]]


@SETTINGS
@given(data=st.data())
def test_index_select(data):
    shape, dim = data.draw(shape_and_dim())
    a = data.draw(arrays(shape))
    index = np.asarray(data.draw(st.lists(st.integers(0, shape[dim] - 1), min_size=1,
                                          max_size=5)), dtype=np.int64)
    ref = lambda v: np.take(v, index, axis=dim)  # noqa: E731
    check(lambda x: x.index_select(dim, mg.tensor(index)), [a], ref)
    check(lambda x: mg.index_select(x, dim, index), [a], ref)


def test_index_select_repeated_accumulates():
    x = mg.tensor(np.zeros((3, 2)), requires_grad=True)
    x.index_select(0, mg.tensor([2, 2, 0, 2])).sum().backward()
    assert x.grad.tolist() == [[1, 1], [0, 0], [3, 3]]


# --- softmax / log_softmax ------------------------------------------------------------------

def _np_softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _np_log_softmax(a, axis):
    m = a.max(axis=axis, keepdims=True)
    return a - m - np.log(np.exp(a - m).sum(axis=axis, keepdims=True))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@SETTINGS
@given(data=st.data())
def test_softmax_log_softmax(name, data):
    shape, dim = data.draw(shape_and_dim())
    a = data.draw(arrays(shape, -5.0, 5.0))
    ref = _np_softmax if name == "softmax" else _np_log_softmax
    out = check(lambda x: getattr(x, name)(dim), [a], lambda v: ref(v, dim), rtol=1e-9,
                atol=1e-12)
    check(lambda x: getattr(mg, name)(x, dim), [a], lambda v: ref(v, dim), rtol=1e-9,
          atol=1e-12)
    if name == "softmax":
        np.testing.assert_allclose(out.numpy().sum(axis=dim), 1.0)


def test_softmax_default_dim_is_last():
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    np.testing.assert_allclose(mg.tensor(a).softmax().numpy(), _np_softmax(a, -1))
    np.testing.assert_allclose(mg.tensor(a).log_softmax().numpy(), _np_log_softmax(a, -1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_softmax_stable_at_large_values(dtype, dim):
    a = np.array([[1e4, 0.0, -1e4], [-1e4, -1e4, 1e4], [1e4, 1e4, 1e4]], dtype=dtype)
    for name, ref in (("softmax", _np_softmax), ("log_softmax", _np_log_softmax)):
        x = mg.tensor(a, requires_grad=True)
        out = getattr(x, name)(dim)
        assert out.dtype == dtype
        assert np.all(np.isfinite(out.numpy()))
        np.testing.assert_allclose(out.numpy(), ref(a.astype(np.float64), dim), atol=1e-6,
                                   rtol=1e-6)
        g = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
        out.backward(g)
        assert np.all(np.isfinite(x.grad.numpy()))


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_with_minus_inf_entries(dim):
    a = np.array([[0.0, -np.inf, 1.0], [-np.inf, 2.0, -np.inf], [3.0, 0.5, -np.inf]])
    if dim == 0:
        a = a.T.copy()
    x = mg.tensor(a, requires_grad=True)
    y = x.softmax(dim)
    finite = np.where(np.isinf(a), -1e30, a)
    np.testing.assert_allclose(y.numpy(), _np_softmax(finite, dim), atol=1e-12)
    assert np.all(y.numpy()[np.isinf(a)] == 0)
    g = np.arange(9.0).reshape(3, 3)
    y.backward(g)
    assert not np.any(np.isnan(x.grad.numpy()))
    np.testing.assert_array_equal(x.grad.numpy()[np.isinf(a)], 0)
    yv = y.numpy()
    expected = yv * (g - (g * yv).sum(axis=dim, keepdims=True))
    np.testing.assert_allclose(x.grad.numpy(), expected, atol=1e-12)

    x2 = mg.tensor(a, requires_grad=True)
    ls = x2.log_softmax(dim)
    np.testing.assert_allclose(ls.numpy()[~np.isinf(a)], _np_log_softmax(finite, dim)[~np.isinf(a)])
    assert np.all(ls.numpy()[np.isinf(a)] == -np.inf)
    ls.backward(g)
    assert not np.any(np.isnan(x2.grad.numpy()))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_all_minus_inf_row_gives_zeros(dtype):
    a = np.array([[-np.inf, -np.inf, -np.inf], [1.0, 2.0, 3.0]], dtype=dtype)
    x = mg.tensor(a, requires_grad=True)
    y = x.softmax(-1)
    assert not np.any(np.isnan(y.numpy()))
    np.testing.assert_array_equal(y.numpy()[0], [0, 0, 0])
    np.testing.assert_allclose(y.numpy()[1], _np_softmax(a[1].astype(np.float64), 0), rtol=1e-6)
    y.backward(np.ones_like(a))
    assert not np.any(np.isnan(x.grad.numpy()))
    np.testing.assert_array_equal(x.grad.numpy()[0], [0, 0, 0])
    # the same along dim 0
    x = mg.tensor(a.T.copy(), requires_grad=True)
    y = x.softmax(0)
    np.testing.assert_array_equal(y.numpy()[:, 0], [0, 0, 0])
    (y * mg.tensor(np.arange(6, dtype=dtype).reshape(3, 2))).sum().backward()
    assert not np.any(np.isnan(x.grad.numpy()))


# --- dropout --------------------------------------------------------------------------------

def test_dropout_inverted_scaling():
    x = mg.tensor(np.full((200, 50), 3.0))
    out = mg.dropout(x, 0.25, seed=7)
    v = out.numpy()
    np.testing.assert_allclose(v[v != 0], 4.0, rtol=1e-12)
    assert 0.2 < np.mean(v == 0) < 0.3  # about p of the elements are dropped
    assert abs(v.mean() - 3.0) < 0.1  # the expectation is kept


def test_dropout_same_seed_same_mask():
    x = mg.randn(10, 10)
    a = mg.dropout(x, 0.5, seed=42).numpy()
    b = mg.dropout(x, 0.5, seed=42).numpy()
    c = mg.dropout(x, 0.5, seed=43).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    mg.manual_seed(9)
    d = mg.dropout(x, 0.5).numpy()
    mg.manual_seed(9)
    e = mg.dropout(x, 0.5).numpy()
    np.testing.assert_array_equal(d, e)


def test_dropout_p0_and_eval_are_identity():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    for out in (mg.dropout(x, 0.0), mg.dropout(x, 0.5, training=False),
                mg.dropout(x, 0.9, training=False, seed=1)):
        np.testing.assert_array_equal(out.numpy(), x.numpy())
        x.grad = None
        (out * mg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        assert x.grad.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_backward_uses_same_mask(p):
    a = np.random.default_rng(2).uniform(0.5, 1.5, (8, 16))
    x = mg.tensor(a, requires_grad=True)
    out = mg.dropout(x, p, seed=11)
    kept = out.numpy() != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(out.numpy(), np.where(kept, a / (1 - p), 0))
    g = np.random.default_rng(3).standard_normal(a.shape)
    out.backward(g)
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / (1 - p), 0))
    check(lambda t: mg.dropout(t, p, seed=11), [a], lambda v: np.where(kept, v / (1 - p), 0))


def test_dropout_float32():
    x = mg.ones(4, 4, requires_grad=True)
    out = mg.dropout(x, 0.5, seed=0)
    assert out.dtype == np.float32
    v = out.numpy()
    assert np.any(v == 0) and np.any(v != 0)
    np.testing.assert_allclose(v[v != 0], 2.0, rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_dropout_kept_mask_gives_the_kernels_bits(dtype, transposed):
    """With a gradient wanted, Dropout keeps its mask and multiplies by it: forward and
    backward are the hashing kernel's bits (NaN, infinities and signed zeros included)."""
    from minigrad import kernels
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 7, 5)).astype(dtype)
    a.flat[:4] = [np.nan, np.inf, -0.0, -np.inf]
    x = mg.tensor(a, requires_grad=True)
    xin = x.permute(2, 1, 0) if transposed else x
    out = mg.dropout(xin, 0.3, seed=123)
    ref = kernels.dropout(np.ascontiguousarray(xin.numpy()), 0.3, 123)
    assert out.numpy().flags.c_contiguous
    np.testing.assert_array_equal(out.numpy().view(np.uint8), ref.view(np.uint8))
    g = rng.standard_normal(ref.shape).astype(dtype)
    g.flat[:2] = [-0.0, np.inf]
    out.backward(g)
    gref = kernels.dropout(g, 0.3, 123)
    gx = x.grad.numpy().transpose(2, 1, 0) if transposed else x.grad.numpy()
    np.testing.assert_array_equal(gx.view(np.uint8), gref.view(np.uint8))
    with mg.no_grad():  # nothing to keep: the kernel itself
        np.testing.assert_array_equal(mg.dropout(xin, 0.3, seed=123).numpy().view(np.uint8),
                                      ref.view(np.uint8))


# --- one_hot, clone, casts ------------------------------------------------------------------

def test_one_hot():
    idx = mg.tensor([[0, 2], [1, 3]])
    oh = mg.one_hot(idx, 5)
    assert oh.shape == (2, 2, 5) and oh.dtype == np.int64
    np.testing.assert_array_equal(oh.numpy(), np.eye(5, dtype=np.int64)[idx.numpy()])
    assert not oh.requires_grad
    assert mg.one_hot(mg.tensor([1, 0, 2])).shape == (3, 3)
    np.testing.assert_array_equal(mg.one_hot(np.array([2]), 4).numpy(), [[0, 0, 1, 0]])


def test_clone():
    a = np.array([[1.0, -2.0], [3.0, 4.0]])
    out = check(lambda x: x.clone(), [a], lambda v: v)
    assert out.numpy() is not a
    x = mg.tensor(a, requires_grad=True)
    c = x.clone()
    assert c.grad_fn is not None and not c.is_leaf
    assert not np.shares_memory(c.numpy(), x.numpy())
    y = mg.tensor([1.0, 2.0])
    d = y.clone()
    d.add_(1.0)
    assert y.tolist() == [1.0, 2.0] and d.tolist() == [2.0, 3.0]
    assert not d.requires_grad


def test_to_float64_cast():
    x = mg.tensor([1.5, -2.0], requires_grad=True)
    raw = []
    x.register_hook(lambda g: raw.append(g.dtype))
    y = x.to(mg.float64)
    assert y.dtype == np.float64 and y.requires_grad
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * mg.tensor(np.array([2.0, 3.0]))).sum().backward()
    assert x.grad.dtype == np.float32 and raw == [np.float32]  # cast back by ToCopyBackward0
    assert x.grad.tolist() == [2.0, 3.0]
    assert x.to(np.float32) is x
    z = mg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    z.float().sum().backward()
    assert z.grad.dtype == np.float64 and z.grad.tolist() == [1.0, 1.0]


@SETTINGS
@given(data=st.data())
def test_cast_gradcheck(data):
    a = data.draw(arrays(data.draw(shapes())))
    check(lambda x: x.to(np.float32).to(np.float64) * 2.0, [a],
          lambda v: v.astype(np.float32).astype(np.float64) * 2.0, eps=1e-3, atol=1e-3)


# --- a composite ----------------------------------------------------------------------------

@SETTINGS
@given(data=st.data())
def test_composite_attention_like(data):
    n, d = data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4))
    q, k, v = (data.draw(arrays((n, d))) for _ in range(3))
    mask = np.triu(np.ones((n, n), dtype=bool), 1)

    def attn(q_, k_, v_):
        s = (q_ @ k_.T) / math.sqrt(d)
        return s.masked_fill(mg.tensor(mask), -np.inf).softmax(-1) @ v_

    def ref(q_, k_, v_):
        s = np.where(mask, -np.inf, q_ @ k_.T / math.sqrt(d))
        return _np_softmax(s, -1) @ v_

    check(attn, [q, k, v], ref)


# --- leaky_relu -------------------------------------------------------------------------------

@pytest.mark.parametrize("slope", [0.01, 0.2, 1.5, -0.5])
def test_leaky_relu_gradient_at_zero_is_the_slope_like_torch(torch, slope):
    from minigrad.nn import functional as F
    a = np.array([-1.0, 0.0, 2.0, 0.0], dtype=np.float32)
    x = mg.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y, ty = F.leaky_relu(x, slope), torch.nn.functional.leaky_relu(t, slope)
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy())
    y.sum().backward()
    ty.sum().backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())  # slope at 0, not (1 + slope) / 2


def test_leaky_relu_gradcheck():
    from minigrad.nn import functional as F
    check(lambda t: F.leaky_relu(t, 0.2), [np.array([[-1.5, 0.3], [2.0, -0.25]])],
          lambda v: np.where(v > 0, v, 0.2 * v))


def test_sigmoid_tails_like_torch(torch):
    # one sigmoid serves the op and the fused GRU gates: exact in both tails, never overflowing
    from minigrad.ops.elementwise import sigmoid
    a = np.array([-100.0, -20.0, -1e-3, 0.0, 1e-3, 20.0, 100.0], dtype=np.float32)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        got = mg.tensor(a).sigmoid().numpy()
        np.testing.assert_array_equal(sigmoid(a), got)
    assert got.dtype == np.float32
    # (torch flushes sigmoid(-100) to 0; ours keeps the subnormal 3.8e-44)
    np.testing.assert_allclose(got, torch.sigmoid(torch.tensor(a)).numpy(), rtol=1e-6, atol=1e-38)


# --- the activation kernels' backward passes against their NumPy expressions ------------------

@pytest.mark.parametrize("name", ["tanh_backward", "sigmoid_backward"])
@SETTINGS
@given(data=st.data(), dtype=st.sampled_from([np.float32, np.float64]))
def test_fused_backward_kernels_match_numpy(name, data, dtype):
    from minigrad import kernels as elementwise
    shape = data.draw(shapes())
    y = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-1, 1, width=32)))
    g = data.draw(hnp.arrays(dtype, shape, elements=st.floats(-1e3, 1e3, width=32)))
    ref = g * (1 - y * y) if name == "tanh_backward" else g * y * (1 - y)
    got = getattr(elementwise, name)(y, g)
    assert got.dtype == dtype and got.shape == ref.shape
    np.testing.assert_allclose(got, ref, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-30)
    if y.ndim == 2:  # any strides
        np.testing.assert_allclose(getattr(elementwise, name)(y.T, g.T), ref.T, rtol=1e-6)
