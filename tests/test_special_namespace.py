"""minigrad.special (torch.special's functions): float64 values against PyTorch's over wide
ranges and into the tails, first and second derivatives by central differences, gradients
against PyTorch's, the namespace against torch.special's, and the in-place forms' version
bumps. Dtypes, integer and bool inputs, 0-d, empty and non-contiguous inputs and errors are
compat_cases_special.py's and the dtype sweep's (compat_sweep_special.py)."""
import types

import numpy as np
import pytest

import minigrad as mg
from compat_notes import NOT_SUPPORTED
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(73)
WIDE = np.concatenate([RNG.uniform(-40, 40, 400), RNG.uniform(-3, 3, 200),
                       [0.0, -0.0, 1e-300, -1e-8, 1e-8, 26.5, -26.5, -37.5, 1e10, -1e10,
                        np.inf, -np.inf, np.nan]])
P = np.concatenate([RNG.uniform(0, 1, 300), 10.0 ** -RNG.uniform(1, 300, 60),
                    1 - 10.0 ** -RNG.uniform(1, 15, 30), [0.0, 1.0, 0.25, 0.75, 0.5, -0.1, 1.1,
                                                           np.nan]])


def _both(torch, name, x, *args):
    ours = getattr(mg.special, name)(mg.tensor(x), *args).numpy()
    theirs = getattr(torch.special, name)(torch.tensor(x), *args).numpy()
    return ours, theirs


@pytest.mark.parametrize("name, rtol", [("log_ndtr", 5e-13), ("erfcx", 1e-13), ("i0e", 5e-15),
                                        ("i1", 5e-15), ("i1e", 5e-15), ("entr", 1e-15),
                                        ("sinc", 1e-15), ("spherical_bessel_j0", 1e-15),
                                        ("modified_bessel_i0", 5e-15),
                                        ("modified_bessel_i1", 5e-15)])
def test_float64_values_as_pytorchs(name, rtol, torch):
    ours, theirs = _both(torch, name, WIDE)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-300)


def test_ndtri_keeps_its_digits_in_both_tails(torch):
    ours, theirs = _both(torch, "ndtri", P)
    np.testing.assert_allclose(ours, theirs, rtol=1e-14, atol=1e-300)
    x = mg.tensor(np.linspace(-37, 2, 200))  # and it inverts ndtr (above 2, 1 - ndtr rounds)
    np.testing.assert_allclose(mg.special.ndtri(mg.special.ndtr(x)).numpy(), x.numpy(),
                               rtol=1e-11)


def test_ndtr_is_relatively_accurate_in_the_left_tail(torch):
    # PyTorch's ndtr is (1 + erf(x / sqrt 2)) / 2, which loses the left tail (0 from x = -8.3);
    # ours is erfc(-x / sqrt 2) / 2, which keeps it: they differ by less than 2^-53 absolutely
    x = np.linspace(-37, 8, 400)
    ours, theirs = _both(torch, "ndtr", x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=2 ** -53)
    left = x <= 0  # (where log of a value near 1 keeps few of its digits)
    np.testing.assert_allclose(np.log(ours[left]),
                               torch.special.log_ndtr(torch.tensor(x[left])).numpy(), rtol=1e-12)


def test_zeta_and_xlog1py_as_pytorchs(torch):
    s = np.concatenate([RNG.uniform(1, 30, 500), np.round(RNG.uniform(1, 12, 100)),
                        [1.0, 0.5, np.inf, np.nan, 2.0]])
    q = np.concatenate([RNG.uniform(-6, 50, 500), np.round(RNG.uniform(-5, 5, 100)),
                        [2.0, 2.0, 0.5, 1.0, np.inf]])
    ours = mg.special.zeta(mg.tensor(s), mg.tensor(q)).numpy()
    np.testing.assert_allclose(ours, torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(),
                               rtol=1e-14)
    ours = mg.special.xlog1py(mg.tensor(WIDE), mg.tensor(WIDE[::-1])).numpy()
    theirs = torch.special.xlog1py(torch.tensor(WIDE), torch.tensor(WIDE[::-1].copy())).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-15)


def test_gammainc_as_pytorchs_and_to_13_digits(torch):
    a = np.concatenate([RNG.uniform(0, 20, 400), RNG.uniform(0, 150, 200), [1e-3, 1e-5, 0.5]])
    x = np.concatenate([RNG.uniform(0, 30, 400), RNG.uniform(0, 200, 200), [1e-3, 50, 1e-10]])
    for name in ("gammainc", "gammaincc"):
        ours, theirs = (getattr(lib.special, name)(lib.tensor(a), lib.tensor(x)).numpy()
                        for lib in (mg, torch))
        # PyTorch's keep about 9 digits for a > 20 (its prefactor's rounding), ours 13
        np.testing.assert_allclose(ours, theirs, rtol=3e-9, atol=1e-300)
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 30
    for ai, xi in zip(a[::20], x[::20]):
        want = float(mpmath.gammainc(ai, 0, xi, regularized=True))
        got = mg.special.gammainc(mg.tensor(np.array([ai])), mg.tensor(np.array([xi]))).item()
        assert abs(got - want) <= 5e-13 * abs(want) + 1e-300, (ai, xi, got, want)


def _x(*values):
    return mg.tensor(np.array(values, np.float64), requires_grad=True)


GRADCHECKS = {
    "ndtr": (mg.special.ndtr, _x(-8.0, -1.3, 0.0, 0.4, 3.0)),
    "log_ndtr": (mg.special.log_ndtr, _x(-30.0, -4.0, -1.0, 0.2, 2.0, 6.0)),
    "ndtri": (mg.special.ndtri, _x(1e-6, 0.3, 0.999)),
    "erfcx": (mg.special.erfcx, _x(-3.0, -0.5, 0.0, 0.9, 1.0, 4.0, 30.0)),
    "i0e": (mg.special.i0e, _x(-25.0, -3.0, -0.2, 0.7, 4.0, 21.0)),
    "i1": (mg.special.i1, _x(-6.0, -0.3, 0.0, 1.5, 8.0)),
    "i1e": (mg.special.i1e, _x(-25.0, -2.0, 0.0, 0.6, 5.0, 30.0)),
    "entr": (mg.special.entr, _x(0.05, 0.5, 1.0, 3.0)),
    "sinc": (mg.special.sinc, _x(-2.3, -0.5, 1e-3, 0.25, 1.0, 3.7)),
    "logit": (mg.special.logit, _x(0.02, 0.3, 0.5, 0.9)),
    "xlog1py": (mg.special.xlog1py, _x(0.0, 1.5, -2.0, 3.0), _x(0.5, -0.5, 2.0, 0.0)),
    "xlogy": (mg.special.xlogy, _x(0.0, 1.5, -2.0, 3.0), _x(0.5, 0.2, 2.0, 4.0)),
    "zeta in q": (lambda q: mg.special.zeta(mg.tensor([2.0, 3.5, 5.0], dtype=mg.float64), q),
                  _x(0.4, 2.0, -1.5)),
    "multigammaln": (lambda a: mg.special.multigammaln(a, 3), _x(1.2, 7.0)),
    "gammainc": (lambda x: mg.special.gammainc(mg.tensor([0.5, 3.0, 25.0], dtype=mg.float64), x),
                 _x(0.3, 4.5, 22.0)),
    "gammaincc": (lambda x: mg.special.gammaincc(mg.tensor([1.5, 3.0, 40.0], dtype=mg.float64),
                                                 x), _x(2.0, 0.7, 45.0)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_first_and_second_derivatives_by_central_differences(name):
    fn, *inputs = GRADCHECKS[name]
    assert gradcheck(fn, inputs, rtol=1e-5)
    assert gradgradcheck(fn, inputs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradients_as_pytorchs(name, torch):
    fn, *inputs = GRADCHECKS[name]
    ours = mg.autograd.grad(fn(*inputs).sum(), inputs)
    tfn = {"zeta in q": lambda q: torch.special.zeta(torch.tensor([2.0, 3.5, 5.0],
                                                                  dtype=torch.float64), q),
           "multigammaln": lambda a: torch.special.multigammaln(a, 3),
           "gammainc": lambda x: torch.special.gammainc(torch.tensor([0.5, 3.0, 25.0],
                                                                     dtype=torch.float64), x),
           "gammaincc": lambda x: torch.special.gammaincc(torch.tensor([1.5, 3.0, 40.0],
                                                                       dtype=torch.float64), x)
           }.get(name)
    tfn = tfn or getattr(torch.special, name)
    tin = [torch.tensor(x.detach().numpy(), requires_grad=True) for x in inputs]
    theirs = torch.autograd.grad(tfn(*tin).sum(), tin)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-15)


def test_sinc_at_zero_differentiates_twice(torch):
    # sinc'(0) = 0 as PyTorch's (by a mask); sinc''(0) = -pi^2/3 where PyTorch's is NaN
    x = mg.tensor([0.0, 0.5], dtype=mg.float64, requires_grad=True)
    (g,) = mg.autograd.grad(mg.special.sinc(x).sum(), [x], create_graph=True)
    (gg,) = mg.autograd.grad(g.sum(), [x])
    t = torch.tensor([0.0, 0.5], dtype=torch.float64, requires_grad=True)
    (tg,) = torch.autograd.grad(torch.special.sinc(t).sum(), [t], create_graph=True)
    (tgg,) = torch.autograd.grad(tg.sum(), [t])
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(gg.numpy(), [-np.pi ** 2 / 3, tgg[1].item()], rtol=1e-13)
    assert np.isnan(tgg[0].item())
    assert gradgradcheck(mg.special.sinc, [mg.tensor([0.0], dtype=mg.float64,
                                                     requires_grad=True)], rtol=1e-4)


def test_outside_the_domains_the_gradients_are_pytorchs(torch):
    # logit: NaN outside [0, 1] and inf at its ends; xlogy: log(y) at x = 0 unless y <= 0
    x, y = np.array([-0.5, 0.0, 1.0, 1.5, 0.0, 0.0]), np.array([0.5, 0.0, -1.0, 2.0, 2.0, 0.0])
    for lib in (mg, torch):
        a, b = (lib.tensor(v, requires_grad=True) for v in (x, y))
        (lib.special.logit(a).sum() + lib.special.xlogy(a, b).sum()).backward()
        if lib is mg:
            ours = a.grad.numpy(), b.grad.numpy()
    np.testing.assert_array_equal(ours[0], a.grad.numpy())
    np.testing.assert_array_equal(ours[1], b.grad.numpy())


def test_no_derivative_where_pytorch_has_none(torch):
    x = _x(1.0, 2.0)
    for fn in (mg.special.modified_bessel_i0, mg.special.modified_bessel_i1,
               mg.special.spherical_bessel_j0):
        assert not fn(x).requires_grad
    with pytest.raises(RuntimeError, match="derivative for 'zeta' is not implemented"):
        mg.special.zeta(_x(2.0, 3.0), 1.0).sum().backward()


def test_the_namespace_is_torch_specials(torch):
    ours = [n for n in dir(mg.special) if not n.startswith("_")
            and isinstance(getattr(mg.special, n), types.FunctionType)]
    theirs = {n for n in dir(torch.special) if not n.startswith("_") and callable(
        getattr(torch.special, n)) and n != "Tensor"}
    assert set(mg.special.__all__) <= theirs
    assert sorted(set(ours) - set(mg.special.__all__)) == []  # no helper leaks out
    absent = {p for _, _, paths in NOT_SUPPORTED for p in paths}
    assert sorted(n for n in theirs - set(mg.special.__all__)
                  if f"special.{n}" not in absent) == []


@pytest.mark.parametrize("name, args", [("lgamma_", ()), ("polygamma_", (1,)), ("sinc_", ()),
                                        ("xlogy_", (2.0,)), ("multiply_", (3,)),
                                        ("float_power_", (2,)), ("addr_", "vectors")])
def test_in_place_forms_bump_the_version_and_write_through_views(name, args, torch):
    for lib in (mg, torch):
        base = lib.tensor([[0.5, 1.5], [2.5, 3.5]], dtype=lib.float64)
        view, operands = base[1], args
        if args == "vectors":
            view, operands = base, (lib.tensor([1.0, 2.0], dtype=lib.float64),) * 2
        before = base._version
        assert getattr(view, name)(*operands) is view
        assert base._version == before + 1
        if lib is mg:
            ours = base.numpy().copy()
    # (PyTorch's trigamma keeps about 10 digits: tests/compat_notes.py)
    np.testing.assert_allclose(ours, base.numpy(), rtol=1e-9 if name == "polygamma_" else 1e-14)
