"""minigrad.autograd.functional against torch.autograd.functional: values, shapes and the
nesting of results for tensor and tuple inputs and outputs, create_graph, strict."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.functional as MF

RNG = np.random.default_rng(5)
X = RNG.uniform(-1, 1, (2, 3))
Y = RNG.uniform(-1, 1, (3,))
V_OUT = RNG.uniform(-1, 1, (2, 3))


def one_in_one_out(x):
    return (x * x).tanh() * x.exp()


def two_in_two_out(x, y):
    return (x * y).sin(), (x @ y).exp()


def scalar(x, y):
    return ((x @ y) ** 2).sum() + (x * x * y).sum()


def scalar_one(x):
    return (x.softmax(-1) * x).sum() + (x ** 3).sum()


def _t(lib, *arrays):
    return tuple(lib.tensor(a) for a in arrays)


def _np(res):
    if isinstance(res, (tuple, list)):
        return tuple(_np(r) for r in res)
    return res.detach().numpy()


def _same(mine, theirs):
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _same(m, t)
        return
    assert not isinstance(mine, tuple)
    assert mine.shape == tuple(theirs.shape)
    np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def _both(torch, call):
    _same(_np(call(mg, MF)), _np(call(torch, torch.autograd.functional)))


@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian(strategy, torch):
    vec = strategy == "forward-mode"
    _both(torch, lambda lib, F: F.jacobian(one_in_one_out, _t(lib, X)[0], vectorize=vec,
                                           strategy=strategy))
    _both(torch, lambda lib, F: F.jacobian(two_in_two_out, _t(lib, X, Y), vectorize=vec,
                                           strategy=strategy))


def test_hessian(torch):
    _both(torch, lambda lib, F: F.hessian(scalar_one, _t(lib, X)[0]))
    _both(torch, lambda lib, F: F.hessian(scalar, _t(lib, X, Y)))


def test_vjp_jvp(torch):
    _both(torch, lambda lib, F: F.vjp(one_in_one_out, _t(lib, X)[0], _t(lib, V_OUT)[0]))
    _both(torch, lambda lib, F: F.vjp(two_in_two_out, _t(lib, X, Y),
                                      _t(lib, V_OUT, Y[:2])))
    _both(torch, lambda lib, F: F.jvp(one_in_one_out, _t(lib, X)[0], _t(lib, V_OUT)[0]))
    _both(torch, lambda lib, F: F.jvp(two_in_two_out, _t(lib, X, Y), _t(lib, V_OUT, Y)))


def test_hvp_vhp(torch):
    for name in ("hvp", "vhp"):
        _both(torch, lambda lib, F: getattr(F, name)(scalar, _t(lib, X, Y), _t(lib, V_OUT, Y)))
        _both(torch, lambda lib, F: getattr(F, name)(scalar_one, _t(lib, X)[0],
                                                     _t(lib, V_OUT)[0]))


@pytest.mark.parametrize("name", ["hvp", "jvp", "vjp", "jacobian"])
def test_create_graph_lets_the_result_be_differentiated(name, torch):
    res = []
    for lib, F in ((mg, MF), (torch, torch.autograd.functional)):
        x = lib.tensor(X, requires_grad=True)
        v = lib.tensor(V_OUT)
        if name == "hvp":
            _, r = F.hvp(scalar_one, x, v, create_graph=True)
        elif name == "jacobian":
            r = F.jacobian(one_in_one_out, x, create_graph=True)
        else:
            _, r = getattr(F, name)(one_in_one_out, x, v, create_graph=True)
        (g,) = lib.autograd.grad((r * r).sum(), x)
        res.append(g.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-10)


def test_strict_and_independent_inputs(torch):
    def half(x, y):
        return x * 2

    _both(torch, lambda lib, F: F.jacobian(half, _t(lib, X, Y)))  # zeros for y
    for lib, F in ((torch, torch.autograd.functional), (mg, MF)):
        with pytest.raises(RuntimeError, match="independent of input 1"):
            F.jacobian(half, _t(lib, X, Y), strict=True)
        with pytest.raises(RuntimeError, match="independent of input 1"):
            F.vjp(half, _t(lib, X, Y), lib.tensor(X), strict=True)


def test_errors(torch):
    for lib, F in ((torch, torch.autograd.functional), (mg, MF)):
        with pytest.raises(RuntimeError, match="single element"):
            F.hessian(one_in_one_out, _t(lib, X)[0])
        with pytest.raises(RuntimeError, match="v can only be None"):
            F.vjp(one_in_one_out, _t(lib, X)[0])
        with pytest.raises(Exception, match="vectorize"):
            F.jacobian(one_in_one_out, _t(lib, X)[0], strategy="forward-mode")
