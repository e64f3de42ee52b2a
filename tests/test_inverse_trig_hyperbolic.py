"""asin, acos, atan, sinh, cosh, asinh, acosh, atanh (ops/inverse_trig.py, ops/hyperbolic.py),
atan2, hypot (ops/polar.py), logaddexp, logaddexp2 (ops/log_add_exp.py) against PyTorch: float64
values over their whole range (edges, +-inf, NaN, huge and tiny arguments), gradients of first
and second order (float64 gradcheck and gradgradcheck, and PyTorch's at the kinks), forward
mode, and the errors. Dtypes, layouts and the in-place forms are in the compat sweep and table."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(7)
EDGES = np.array([0.0, -0.0, 1e-300, -1e-8, 0.5, -1.0, 1.0, 1.0000001, 2.0, 700.0, 711.0,
                  -720.0, 1e200, np.inf, -np.inf, np.nan])
X = np.concatenate([RNG.uniform(-5, 5, 2000), RNG.uniform(-1, 1, 1000), EDGES])
UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"]
BINARY = ["atan2", "hypot", "logaddexp", "logaddexp2"]
# where each unary function is differentiable, for the gradient checks
DOMAIN = {"asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9), "acosh": (1.1, 4)}


def _close(got, want, rtol, scale=0):
    """Within rtol of want, or of `scale` where the result cancels to near 0."""
    assert got.dtype == want.dtype and got.shape == want.shape
    assert (np.isnan(got) == np.isnan(want)).all() and (got[np.isinf(want)] ==
                                                        want[np.isinf(want)]).all()
    finite = np.isfinite(want)
    err = np.abs(got - want)[finite] - rtol * np.maximum(np.abs(want), scale)[finite]
    assert (err <= 0).all(), (got[finite][err.argmax()], want[finite][err.argmax()])
    assert (np.signbit(got[want == 0]) == np.signbit(want[want == 0])).all()


@pytest.mark.parametrize("name", UNARY)
def test_unary_float64_values_as_pytorchs(torch, name):
    want = getattr(torch, name)(torch.tensor(X)).numpy()
    _close(getattr(mg, name)(mg.tensor(X)).numpy(), want, 4e-16)


@pytest.mark.parametrize("name", BINARY)
def test_binary_float64_values_as_pytorchs(torch, name):
    """Broadcast against the edges: quadrants and signed zeros of atan2, overflow of hypot and
    logaddexp (inf only where the result is). logaddexp(a, b) near 0 cancels: both libraries
    are within an ulp of the larger operand there."""
    a, b = X[:, None][::40], EDGES[None, :]
    want = getattr(torch, name)(torch.tensor(a), torch.tensor(b)).numpy()
    with np.errstate(invalid="ignore"):
        scale = np.maximum(np.abs(a), np.abs(b)) if "logaddexp" in name else 0
    _close(getattr(mg, name)(mg.tensor(a), mg.tensor(b)).numpy(), want, 4e-16, scale)


@pytest.mark.parametrize("name", UNARY + BINARY)
def test_gradients_of_first_and_second_order(torch, name):
    low, high = DOMAIN.get(name, (-2.5, 2.5))
    args = [np.linspace(low, high, 6).reshape(2, 3)]
    if name in BINARY:
        args.append(np.linspace(0.4, -1.3, 3))  # broadcast along the rows, both signs
    leaves = [mg.tensor(a, requires_grad=True) for a in args]
    fn = getattr(mg, name)
    assert gradcheck(fn, leaves) and gradgradcheck(fn, leaves)
    grads = []
    for lib in (torch, mg):
        xs = [lib.tensor(a, requires_grad=True) for a in args]
        gs = lib.autograd.grad(getattr(lib, name)(*xs).sum(), xs, create_graph=True)
        ggs = lib.autograd.grad(sum((g * g).sum() for g in gs), xs)
        grads.append([t.detach().numpy() for t in gs + ggs])
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_gradients_at_the_kinks_as_pytorchs(torch):
    """asin' is inf at +-1, acosh' inf at 1, atan2's gradient 0 at the origin and where
    x^2 + y^2 underflows, hypot's NaN there, logaddexp's 1 and 0 against an infinite operand."""
    a = np.array([0.0, -0.0, 1e-200, np.inf, -np.inf, 1.0, -1.0])
    b = np.array([0.0, -0.0, 1e-200, 1.0, -np.inf, 1.0, -1.0])
    for name in ["asin", "acos", "atanh", "acosh"] + BINARY:
        got = []
        for lib in (torch, mg):
            xs = [lib.tensor(v, requires_grad=True) for v in ((a, b) if name in BINARY else (a,))]
            getattr(lib, name)(*xs).sum().backward()
            got.append([x.grad.numpy() for x in xs])
        for ours, theirs in zip(got[1], got[0]):
            np.testing.assert_array_equal(ours, theirs, err_msg=name)


def test_forward_mode(torch):
    """The tangent along ones is the sum of the partial derivatives: PyTorch's reverse-mode
    gradients (its forward mode takes seconds to set up)."""
    fw = mg.autograd.forward_ad
    for name in UNARY + BINARY:
        low, high = DOMAIN.get(name, (-2.5, 2.5))
        args = [np.linspace(low, high, 5)] + ([np.linspace(1.5, -0.5, 5)] if name in BINARY
                                              else [])
        with fw.dual_level():
            duals = [fw.make_dual(mg.tensor(a), mg.ones(5, dtype=mg.float64)) for a in args]
            tangent = fw.unpack_dual(getattr(mg, name)(*duals)).tangent.numpy()
        xs = [torch.tensor(a, requires_grad=True) for a in args]
        getattr(torch, name)(*xs).sum().backward()
        np.testing.assert_allclose(tangent, sum(x.grad.numpy() for x in xs), rtol=1e-12)


def test_aliases_are_the_same_functions():
    for short, long in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                        ("atan2", "arctan2"), ("asinh", "arcsinh"), ("acosh", "arccosh"),
                        ("atanh", "arctanh")]:
        assert getattr(mg, short) is getattr(mg, long)
        assert getattr(mg.Tensor, short) is getattr(mg.Tensor, long)


def test_errors_as_pytorchs(torch):
    ints = (lambda L: L.tensor([1, 2]), lambda L: L.tensor([3, 4]))
    for lib in (torch, mg):
        for name in ("logaddexp", "logaddexp2", "hypot"):
            with pytest.raises(NotImplementedError):
                getattr(lib, name)(*(f(lib) for f in ints))
        with pytest.raises(TypeError, match="must be Tensor"):
            lib.atan2(lib.tensor([1.0]), 2)
        with pytest.raises(TypeError, match="must be Tensor"):
            lib.asin(0.5)
        with pytest.raises(RuntimeError, match="can't be cast"):
            lib.tensor([1, 2]).asin_()
    with pytest.raises(ValueError, match=r"atan2: shapes \(2,\) and \(3,\)"):
        mg.atan2(mg.ones(2), mg.ones(3))
