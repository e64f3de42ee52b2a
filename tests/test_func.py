"""minigrad.func against torch.func: values, shapes, result structure and errors of grad,
grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian and vmap, each program written
once as `program(lib)` and run with both libraries; float64 Jacobians and Hessians against
central differences."""
import numpy as np
import pytest

import minigrad
from minigrad.func.pytree import tree_flatten

RNG = np.random.default_rng(5)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
W = RNG.standard_normal((3, 4))


def _np(out):
    leaves, spec = tree_flatten(out)
    return [x.detach().numpy() if hasattr(x, "detach") else x for x in leaves], spec


def both(torch, program):
    expected = program(torch)
    got = program(minigrad)
    (e, e_spec), (g, g_spec) = _np(expected), _np(got)
    assert g_spec == e_spec
    for a, b in zip(g, e):
        if isinstance(b, np.ndarray):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b
    return expected, got


def T(lib, a):
    return lib.tensor(a)


def _linear(lib):
    m = lib.nn.Linear(3, 2)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W[:2, :3].astype(np.float32)))
        m.bias.fill_(0.5)
    return m


PROGRAMS = {
    "grad": lambda lib: lib.func.grad(lambda x: (x.sin() * x).sum())(T(lib, X)),
    "grad argnums": lambda lib: lib.func.grad(lambda x, w: (x @ w).tanh().sum(),
                                              argnums=(0, 1))(T(lib, X), T(lib, W)),
    "grad negative argnum": lambda lib: lib.func.grad(lambda x, y: (x * y).sum(),
                                                      argnums=-1)(T(lib, X), T(lib, Y)),
    "grad dict": lambda lib: lib.func.grad(lambda p, x: (x @ p["w"] + p["b"]).pow(2).mean())(
        {"w": T(lib, W), "b": T(lib, W[0])}, T(lib, Y)),
    "grad aux": lambda lib: lib.func.grad(lambda x: ((x ** 2).sum(), {"c": x.cos()}),
                                          has_aux=True)(T(lib, X)),
    "grad unused": lambda lib: lib.func.grad(lambda x, y: y.sum(), argnums=(0, 1))(T(lib, X),
                                                                                   T(lib, Y)),
    "grad constant": lambda lib: lib.func.grad(lambda x: lib.tensor(1.0))(T(lib, X)),
    "grad of grad": lambda lib: lib.func.grad(lambda x: lib.func.grad(
        lambda y: (y ** 3).sum())(x).sum())(T(lib, X)),
    "grad_and_value": lambda lib: lib.func.grad_and_value(lambda x: (x.exp() * x).sum())(
        T(lib, X)),
    "grad_and_value aux": lambda lib: lib.func.grad_and_value(
        lambda x: ((x * 3).sum(), x * 2), has_aux=True)(T(lib, X)),
    "vjp": lambda lib: (lambda out, fn: (out, fn(T(lib, Y[0] * 0 + 1)[:3] * T(lib, X)),
                                         fn(T(lib, X))))(*lib.func.vjp(lambda x: x.sin() * x,
                                                                       T(lib, X))),
    "vjp two inputs": lambda lib: (lambda out, fn: fn((T(lib, Y), T(lib, Y[0]))))(
        *lib.func.vjp(lambda a, b: (a * b, (a + b).sum(0)), T(lib, Y), T(lib, X))),
    "vjp aux": lambda lib: (lambda out, fn, aux: (out, fn(T(lib, X)), aux))(
        *lib.func.vjp(lambda x: (x.exp(), x.sum()), T(lib, X), has_aux=True)),
    "jvp": lambda lib: lib.func.jvp(lambda x, w: (x @ w).tanh(), (T(lib, X), T(lib, W)),
                                    (T(lib, X[::-1].copy()), T(lib, W * 0.5))),
    "jvp aux": lambda lib: lib.func.jvp(lambda x: (x.exp(), x.cos()), (T(lib, X),),
                                        (T(lib, X),), has_aux=True),
    "jvp constant output": lambda lib: lib.func.jvp(lambda x: (x * 0).detach() + 1,
                                                    (T(lib, X),), (T(lib, X),)),
    "linearize": lambda lib: (lambda out, fn: (out, fn(T(lib, X)), fn(T(lib, X * 2))))(
        *lib.func.linearize(lambda x: x.sin().cumsum(0), T(lib, X))),
    "jacrev": lambda lib: lib.func.jacrev(lambda x: x.softmax(0))(T(lib, X)),
    "jacrev argnums": lambda lib: lib.func.jacrev(lambda x, w: x @ w, argnums=(0, 1))(
        T(lib, X), T(lib, W)),
    "jacrev outputs": lambda lib: lib.func.jacrev(lambda x: (x.sum(), {"d": x * x}))(T(lib, X)),
    "jacrev aux chunk": lambda lib: lib.func.jacrev(lambda x: (x.exp(), x.sum()), has_aux=True,
                                                    chunk_size=2)(T(lib, Y)),
    "jacfwd": lambda lib: lib.func.jacfwd(lambda x: x.softmax(-1))(T(lib, Y)),
    "jacfwd argnums": lambda lib: lib.func.jacfwd(lambda x, w: (x @ w).relu(), argnums=1)(
        T(lib, X), T(lib, W)),
    "jacfwd aux": lambda lib: lib.func.jacfwd(lambda x: (x.exp(), x.sum()), has_aux=True)(
        T(lib, X)),
    "hessian": lambda lib: lib.func.hessian(lambda x: (x.sin() * x.roll(1)).sum())(T(lib, X)),
    "hessian argnums": lambda lib: lib.func.hessian(lambda x, w: (x @ w).tanh().sum(),
                                                    argnums=(0, 1))(T(lib, X), T(lib, W)),
    "jacrev of jacrev": lambda lib: lib.func.jacrev(lib.func.jacrev(lambda x: x.exp().sum()))(
        T(lib, X)),
    "vmap": lambda lib: lib.func.vmap(lambda x: x.sum() * x)(T(lib, Y)),
    "vmap in_dims": lambda lib: lib.func.vmap(lambda x, w: x @ w, in_dims=(1, None))(
        T(lib, Y.T.copy()), T(lib, W)),
    "vmap out_dims": lambda lib: lib.func.vmap(lambda x: (x, x.sum()), out_dims=(1, 0))(
        T(lib, Y)),
    "vmap negative dims": lambda lib: lib.func.vmap(lambda x: x * 2, in_dims=-1,
                                                    out_dims=-1)(T(lib, Y)),
    "vmap nested": lambda lib: lib.func.vmap(lib.func.vmap(lambda a, b: a * b,
                                                           in_dims=(0, None)),
                                             in_dims=(None, 0))(T(lib, X), T(lib, Y)),
    "vmap dict": lambda lib: lib.func.vmap(lambda d: d["a"] + d["b"],
                                           in_dims=({"a": 0, "b": None},))(
        {"a": T(lib, Y), "b": T(lib, X)}),
    "vmap kwargs": lambda lib: lib.func.vmap(lambda x, s: x * s)(T(lib, Y), s=T(lib, X)),
    "vmap out_dims None": lambda lib: lib.func.vmap(lambda x: (x, T(lib, X) + 1, 3),
                                                    out_dims=(0, None, None))(T(lib, Y)),
    "vmap empty batch": lambda lib: lib.func.vmap(lambda x: x.sum())(lib.zeros(0, 3)),
    "vmap randomness same": lambda lib: (lambda r: r[0] - r[1])(lib.func.vmap(
        lambda x: x * 0 + lib.rand(()), randomness="same")(T(lib, Y))),
    "vmap of grad": lambda lib: lib.func.vmap(lib.func.grad(lambda w, x: (x @ w).tanh().sum()),
                                              in_dims=(None, 0))(T(lib, W), T(lib, Y)),
    "grad of vmap": lambda lib: lib.func.grad(lambda w: lib.func.vmap(
        lambda x: (x @ w).sin().sum())(T(lib, Y)).sum())(T(lib, W)),
    "vmap of jacrev": lambda lib: lib.func.vmap(lib.func.jacrev(lambda x: x.sin() * x.sum()))(
        T(lib, Y)),
    "grad float32": lambda lib: lib.func.grad(lambda x: (x.tanh() * 3).sum())(
        T(lib, Y.astype(np.float32))),
    "jacrev 0-d": lambda lib: lib.func.jacrev(lambda x: (x * x).exp())(T(lib, np.asarray(X[0]))),
    "jacfwd 0-d output": lambda lib: lib.func.jacfwd(lambda x: x.pow(3).sum())(T(lib, Y)),
    "jacrev empty input": lambda lib: lib.func.jacrev(lambda x: x * 2)(lib.zeros(0)),
    "vmap int64 output": lambda lib: lib.func.vmap(lambda x: x.argmax())(T(lib, Y)),
    "vmap float32 non-contiguous": lambda lib: lib.func.vmap(lambda x: x.exp(), in_dims=1)(
        T(lib, Y.astype(np.float32)).t()),
    "vmap 0-d slices": lambda lib: lib.func.vmap(lambda x: x * x)(T(lib, X)),
    "vmap chunk_size": lambda lib: lib.func.vmap(lambda x: x.cumsum(0), chunk_size=1)(
        T(lib, Y)),
    "vmap of vmap of grad": lambda lib: lib.func.vmap(lib.func.vmap(lib.func.grad(
        lambda x: x.sin().sum())))(T(lib, np.stack([Y, Y * 2]))),
    "vmap module": lambda lib: (lambda m: lib.func.vmap(m)(T(lib, Y.astype(np.float32))))(
        _linear(lib)),
    "hessian of a dict": lambda lib: lib.func.hessian(
        lambda p: (T(lib, X) @ p["w"] + p["b"]).tanh().sum())(
        {"w": T(lib, W[:, :2].copy()), "b": T(lib, W[0, :2].copy())}),
    "jacrev of a module's parameters": lambda lib: (lambda m: lib.func.jacrev(
        lambda p: lib.func.functional_call(m, p, (T(lib, Y.astype(np.float32)),)))(
        dict(m.named_parameters())))(_linear(lib)),
    "vmap inplace batched": lambda lib: (lambda y: (lib.func.vmap(lambda x: x.mul_(2))(y), y))(
        T(lib, Y)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_matches_torch(name, torch):
    both(torch, PROGRAMS[name])


def _raises(torch, program, exc, match):
    with pytest.raises(exc, match=match) as expected:
        program(torch)
    with pytest.raises(exc) as got:
        program(minigrad)
    want = str(expected.value).replace("torch.Size", "minigrad.Size")
    have = str(got.value)
    if " has structure " in want:  # PyTorch prints its TreeSpec class; minigrad (*, {'a': *})
        want, have = want.split(" has structure ")[0], have.split(" has structure ")[0]
    assert have == want, (have, want)


ERRORS = {
    "grad nonscalar": (lambda lib: lib.func.grad(lambda x: x * 2)(T(lib, X)), RuntimeError,
                       "scalar Tensor"),
    "grad nontensor": (lambda lib: lib.func.grad(lambda x: 2.0)(T(lib, X)), RuntimeError,
                       "to return a Tensor"),
    "grad aux": (lambda lib: lib.func.grad(lambda x: x.sum(), has_aux=True)(T(lib, X)),
                 RuntimeError, "should be a tuple"),
    "argnums type": (lambda lib: lib.func.grad(lambda x: x.sum(), argnums="a")(T(lib, X)),
                     RuntimeError, "argnums must be int"),
    "argnums empty": (lambda lib: lib.func.grad(lambda x: x.sum(), argnums=())(T(lib, X)),
                      RuntimeError, "non-empty"),
    "argnums unique": (lambda lib: lib.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(
        T(lib, X), T(lib, Y)), RuntimeError, "unique"),
    "argnums range": (lambda lib: lib.func.grad(lambda x: x.sum(), argnums=1)(T(lib, X)),
                      RuntimeError, "positional inputs"),
    "grad int input": (lambda lib: lib.func.grad(lambda x: x.sum())(lib.arange(3)),
                       RuntimeError, "floating point"),
    "grad non-tensor input": (lambda lib: lib.func.grad(lambda x: lib.tensor(1.0))(3.0),
                              ValueError, "must be Tensor"),
    "vjp structure": (lambda lib: lib.func.vjp(lambda x: x * 2, T(lib, X))[1]((T(lib, X),)),
                      RuntimeError, "pytree structure"),
    "vjp shape": (lambda lib: lib.func.vjp(lambda x: x * 2, T(lib, X))[1](T(lib, X[:2])),
                  RuntimeError, "Mismatch in shape"),
    "vjp non-tensor output": (lambda lib: lib.func.vjp(lambda x: 3, T(lib, X)), RuntimeError,
                              "only tensors"),
    "jvp primals": (lambda lib: lib.func.jvp(lambda x: x, T(lib, X), T(lib, X)), RuntimeError,
                    "Expected primals to be a tuple"),
    "jvp tangent type": (lambda lib: lib.func.jvp(lambda x: x, (T(lib, X),), (3.0,)),
                         RuntimeError, "only contain Tensors"),
    "jvp tangent shape": (lambda lib: lib.func.jvp(lambda x: x, (T(lib, X),), (T(lib, Y),)),
                          RuntimeError, "different size"),
    "jvp aux": (lambda lib: lib.func.jvp(lambda x: x, (T(lib, X),), (T(lib, X),),
                                         has_aux=True), RuntimeError, "should be a tuple"),
    "jacrev chunk_size": (lambda lib: lib.func.jacrev(lambda x: x, chunk_size=0)(T(lib, X)),
                          ValueError, "chunk_size"),
    "jacrev non-tensor": (lambda lib: lib.func.jacrev(lambda x: 3)(T(lib, X)), RuntimeError,
                          "only tensors"),
    "vmap random": (lambda lib: lib.func.vmap(lambda x: x + lib.randn(()))(T(lib, X)),
                    RuntimeError, "randomness error mode"),
    "vmap dropout": (lambda lib: lib.func.vmap(lambda x: lib.nn.functional.dropout(x, 0.5))(
        T(lib, Y)), RuntimeError, "randomness error mode"),
    "jacfwd random": (lambda lib: lib.func.jacfwd(lambda x: x * lib.rand(()))(T(lib, X)),
                      RuntimeError, "randomness error mode"),
    "vmap randomness": (lambda lib: lib.func.vmap(lambda x: x, randomness="foo")(T(lib, X)),
                        RuntimeError, "Only allowed"),
    "vmap non-tensor output": (lambda lib: lib.func.vmap(lambda x: 3)(T(lib, X)), ValueError,
                               "must only return Tensors"),
    "vmap None output": (lambda lib: lib.func.vmap(lambda x: None)(T(lib, X)), ValueError,
                         "must only return Tensors"),
    "vmap in_dims length": (lambda lib: lib.func.vmap(lambda x, y: x, in_dims=(0,))(
        T(lib, X), T(lib, Y)), ValueError, "not compatible"),
    "vmap in_dims type": (lambda lib: lib.func.vmap(lambda x: x, in_dims="a")(T(lib, X)),
                          ValueError, "expected `in_dims`"),
    "vmap in_dim range": (lambda lib: lib.func.vmap(lambda x: x, in_dims=1)(T(lib, X)),
                          ValueError, "dimensionality"),
    "vmap in_dim non-tensor": (lambda lib: lib.func.vmap(lambda x: x)(3.0), ValueError,
                               "non-Tensor"),
    "vmap nothing batched": (lambda lib: lib.func.vmap(lambda x: x, in_dims=(None,))(
        T(lib, X)), ValueError, "at least one Tensor"),
    "vmap sizes": (lambda lib: lib.func.vmap(lambda x, y: x)(T(lib, X), T(lib, Y)), ValueError,
                   "same size"),
    "vmap no inputs": (lambda lib: lib.func.vmap(lambda: 1)(), ValueError, "no inputs"),
    "vmap out_dims length": (lambda lib: lib.func.vmap(lambda x: (x, x), out_dims=(0,))(
        T(lib, X)), ValueError, "out_dims is not compatible"),
    "vmap out_dims type": (lambda lib: lib.func.vmap(lambda x: x, out_dims="a")(T(lib, X)),
                           ValueError, "must be an int"),
    "vmap out_dims range": (lambda lib: lib.func.vmap(lambda x: x, out_dims=2)(T(lib, Y)),
                            IndexError, "out of range"),
    "vmap out_dims None batched": (lambda lib: lib.func.vmap(lambda x: x, out_dims=None)(
        T(lib, X)), ValueError, "BatchedTensor"),
    "vmap inplace argument": (lambda lib: lib.func.vmap(lambda a, b: a.mul_(b),
                                                        in_dims=(None, 0))(T(lib, X), T(lib, Y)),
                              RuntimeError, "vmap: inplace arithmetic"),
    "vmap chunk_size": (lambda lib: lib.func.vmap(lambda x: x, chunk_size=0)(T(lib, X)),
                        ValueError, "chunk_size"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name, torch):
    program, exc, match = ERRORS[name]
    _raises(torch, program, exc, match)


def test_vmap_inplace_on_a_captured_tensor(torch):
    def program(lib):
        z = lib.zeros(3)
        return lib.func.vmap(lambda b: z.copy_(b))(T(lib, Y))
    _raises(torch, program, RuntimeError, "vmap: inplace arithmetic")


@pytest.mark.parametrize("writer", ["argument", "captured"])
def test_vmap_writes_unbatched_values_once(writer, torch):
    def program(lib):
        a = lib.zeros(3)
        if writer == "argument":
            out = lib.func.vmap(lambda a, b: a.add_(1) * b, in_dims=(None, 0))(a, T(lib, Y))
        else:
            out = lib.func.vmap(lambda b: a.mul_(0).add_(2) * b)(T(lib, Y))
        return out, a
    both(torch, program)


def test_a_refused_write_leaves_the_tensor_as_it_was():
    a = minigrad.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="vmap: inplace arithmetic"):
        minigrad.func.vmap(lambda a, b: a.mul_(b), in_dims=(None, 0))(a, minigrad.tensor(Y))
    assert a.tolist() == [1.0, 2.0, 3.0]


def test_randomness_different_draws_per_slice_and_same_repeats():
    minigrad.manual_seed(0)
    x = minigrad.zeros(4, 3)
    diff = minigrad.func.vmap(lambda t: t + minigrad.rand(3), randomness="different")(x)
    same = minigrad.func.vmap(lambda t: t + minigrad.rand(3), randomness="same")(x)
    assert len({tuple(r) for r in diff.numpy().round(6)}) == 4
    assert len({tuple(r) for r in same.numpy().round(6)}) == 1


def test_results_are_detached_unless_something_outside_requires_grad(torch):
    for lib in (torch, minigrad):
        x = lib.tensor(X, requires_grad=True)
        g = lib.func.grad(lambda t: (t ** 3).sum())(x)
        assert g.requires_grad
        (gx,) = lib.autograd.grad(g.sum(), x)  # d/dx sum(3x^2) = 6x
        np.testing.assert_allclose(gx.numpy(), 6 * X)
        with lib.no_grad():
            assert not lib.func.grad(lambda t: (t ** 3).sum())(x).requires_grad
        v, g = lib.func.grad_and_value(lambda t: (t ** 3).sum())(lib.tensor(X))
        assert not v.requires_grad and not g.requires_grad


def test_grad_differentiates_through_a_captured_parameter(torch):
    def program(lib):
        w = lib.tensor(W, requires_grad=True)
        g = lib.func.grad(lambda x: (x @ w).sin().sum())(lib.tensor(X))
        return lib.autograd.grad((g * g).sum(), w)
    both(torch, program)


# --- float64 against central differences --------------------------------------------------------

def _central_jacobian(f, x, eps=1e-6):
    x = x.astype(np.float64)
    cols = []
    for k in range(x.size):
        d = np.zeros(x.size)
        d[k] = eps
        d = d.reshape(x.shape)
        cols.append((f(x + d) - f(x - d)) / (2 * eps))
    out_shape = np.asarray(f(x)).shape
    return np.stack(cols, -1).reshape(out_shape + x.shape)


def _fn(x):
    return (x.sin() * x.sum() + (x * x).exp()).reshape(-1)[:5]


@pytest.mark.parametrize("transform", ["jacrev", "jacfwd"])
def test_jacobians_against_central_differences(transform):
    x = RNG.standard_normal((2, 3)) * 0.5
    jac = getattr(minigrad.func, transform)(_fn)(minigrad.tensor(x)).numpy()
    want = _central_jacobian(lambda a: _fn(minigrad.tensor(a)).numpy(), x)
    assert jac.shape == (5, 2, 3) and jac.dtype == np.float64
    np.testing.assert_allclose(jac, want, rtol=1e-6, atol=1e-8)


def test_hessian_against_central_differences():
    def f(x):
        return (x.tanh() * x.roll(1, 0)).sum() + (x ** 2).prod()
    x = RNG.standard_normal(4) * 0.7
    h = minigrad.func.hessian(f)(minigrad.tensor(x)).numpy()
    grad = minigrad.func.grad(f)
    want = _central_jacobian(lambda a: grad(minigrad.tensor(a)).numpy(), x)
    np.testing.assert_allclose(h, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, h.T, atol=1e-12)


def test_jvp_and_vjp_are_transposes():
    x, t, v = RNG.standard_normal(4), RNG.standard_normal(4), RNG.standard_normal(3)

    def f(a):
        return (a[:3] * a[1:]).sin()
    _, jt = minigrad.func.jvp(f, (minigrad.tensor(x),), (minigrad.tensor(t),))
    _, fn = minigrad.func.vjp(f, minigrad.tensor(x))
    (vj,) = fn(minigrad.tensor(v))
    np.testing.assert_allclose(v @ jt.numpy(), vj.numpy() @ t, rtol=1e-12)
