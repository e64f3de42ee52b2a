"""cummax, cummin and logcumsumexp (minigrad/scans.py) against PyTorch: float64 values over
wide ranges, gradients of first and second order (gradcheck, gradgradcheck, and PyTorch's
where values tie, are NaN or far apart), forward mode. Dtypes and layouts are in the compat
sweep. Last, the float32 results PyTorch accumulates in double (cumsum, var, std), bit for
bit (cumprod's are in test_products_statistics.py)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(9)
WIDE = np.concatenate([RNG.uniform(-5, 5, 40), RNG.uniform(-900, 900, 40),
                       [-np.inf, 0.0, 1e-300, -1e308, 1e308, np.inf]]).reshape(2, -1)


def test_float64_values_as_pytorchs(torch):
    for dim in (0, 1):
        want = torch.logcumsumexp(torch.tensor(WIDE), dim).numpy()
        np.testing.assert_allclose(mg.logcumsumexp(mg.tensor(WIDE), dim).numpy(), want,
                                   rtol=4e-16, atol=0)
    ties = np.array([[1.0, np.nan, 1.0, 2.0, 2.0], [3.0, 1.0, 3.0, -1.0, 3.0]])
    for name in ("cummax", "cummin"):
        for dim in (0, 1):
            got = getattr(mg, name)(mg.tensor(ties), dim)
            want = getattr(torch, name)(torch.tensor(ties), dim)
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())


@pytest.mark.parametrize("name", ["cummax", "cummin", "logcumsumexp"])
def test_gradients_of_first_and_second_order(torch, name):
    def fn(lib):
        op = getattr(lib, name)
        return (lambda t: op(t, 1)[0]) if name != "logcumsumexp" else (lambda t: op(t, 1))
    x = RNG.standard_normal((3, 5))  # no ties: a tie is a kink, which central differences straddle
    leaf = mg.tensor(x, requires_grad=True)
    assert gradcheck(fn(mg), [leaf]) and gradgradcheck(fn(mg), [leaf])
    x[0, 3], x[1, 2] = x[0, 1], np.nan  # PyTorch's gradient at a tie and after a NaN
    got = []
    for lib in (torch, mg):
        t = lib.tensor(x * 40, requires_grad=True)  # far apart values for logcumsumexp
        w = lib.tensor(np.linspace(-1, 2, 15).reshape(3, 5))
        (g,) = lib.autograd.grad((fn(lib)(t) * w).sum(), [t], create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), [t]) if g.requires_grad else (None,)
        got.append([g.detach().numpy()] + ([] if gg is None else [gg.numpy()]))
    assert len(got[0]) == len(got[1])
    for ours, theirs in zip(got[1], got[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-300)


def test_forward_mode_of_logcumsumexp(torch):
    x, t = np.array([-1000.0, 0.0, 3.0, -5.0, 1000.0]), np.array([1.0, -2.0, 0.5, 3.0, 1.0])
    fw = mg.autograd.forward_ad
    with fw.dual_level():
        out = mg.logcumsumexp(fw.make_dual(mg.tensor(x), mg.tensor(t)), 0)
        tangent = fw.unpack_dual(out).tangent.numpy()
    jacobian = torch.autograd.functional.jacobian(lambda v: torch.logcumsumexp(v, 0),
                                                  torch.tensor(x))
    np.testing.assert_allclose(tangent, (jacobian @ torch.tensor(t)).numpy(), rtol=1e-12)


def test_errors_as_pytorchs(torch):
    for lib in (torch, mg):
        with pytest.raises(NotImplementedError):
            lib.logcumsumexp(lib.tensor([1, 2]), 0)
        with pytest.raises(IndexError):
            lib.cummax(lib.ones(2), 1)
        with pytest.raises(TypeError):
            lib.cummin([1.0, 2.0], 0)


@pytest.mark.parametrize("shape, dim", [((1000,), 0), ((50, 40), 0), ((7, 300, 3), 1)])
@pytest.mark.parametrize("name", ["cumsum"])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_float32_scans_are_pytorchs_bit_for_bit(torch, shape, dim, name, dtype):
    # PyTorch's CPU scans accumulate float32 in double (float16 in float32), rounding each
    # output once
    x = np.random.default_rng(sum(shape)).normal(1.0, 0.1, shape).astype(dtype)
    want = getattr(torch, name)(torch.tensor(x), dim).numpy()
    got = getattr(mg, name)(mg.tensor(x), dim).numpy()
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert mg.tensor([0.1] * 10).cumsum(0)[-1].item() == torch.tensor([0.1] * 10).cumsum(0)[-1].item()


def test_float16_cumsum_accumulates_in_float32_as_pytorchs(torch):
    # float16 scans run in float32 in PyTorch (not double): over values of wide magnitudes
    # a double running sum rounded to float16 differs from PyTorch's in a few elements
    x = np.random.default_rng(4).normal(0, 1, (200, 64)).astype(np.float16)
    x *= np.exp(np.random.default_rng(5).uniform(-8, 7, x.shape)).astype(np.float16)
    want = torch.from_numpy(x).cumsum(1).numpy()
    assert np.isfinite(want).all()
    np.testing.assert_array_equal(mg.tensor(x).cumsum(1).numpy(), want)


@pytest.mark.parametrize("name", ["var", "std"])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_float32_var_and_std_are_pytorchs_bit_for_bit(torch, name, dim):
    # PyTorch's CPU var and std accumulate float32 in double and round once (std after sqrt)
    x = np.random.default_rng(3).normal(1.0, 3.0, (37, 53)).astype(np.float32)
    kw = {} if dim is None else {"dim": dim}
    for correction in (0, 1, 2):
        want = getattr(torch.tensor(x), name)(correction=correction, **kw).numpy()
        got = getattr(mg.tensor(x), name)(correction=correction, **kw).numpy()
        assert got.dtype == want.dtype and np.array_equal(got, want)
