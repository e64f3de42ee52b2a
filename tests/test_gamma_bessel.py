"""lgamma, digamma, polygamma (gamma_functions.py) and i0 (bessel.py), computed without SciPy:
their float64 values against PyTorch's over wide ranges (negative arguments, near the poles,
large ones), and their first and second derivatives by central differences. Dtypes, integer
inputs, 0-d, empty and non-contiguous inputs and errors are compat_cases_functions.py's."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(41)
X = np.concatenate([RNG.uniform(-9.0, 9.0, 400), RNG.uniform(1e-6, 0.05, 20),
                    RNG.uniform(10.0, 1e4, 20), [0.5, 1.0, 2.0, 1.4616321449683622]])
X = X[np.floor(X) != X * (X < 0)]  # no negative integers (poles)


@pytest.mark.parametrize("n", [0, 1, 2, 4])
def test_polygamma_in_float64_as_pytorchs(n, torch):
    want = torch.polygamma(n, torch.tensor(X)).numpy()
    # PyTorch's trigamma keeps about 10 digits (a short series from x >= 6); ours keeps 15
    rtol = 1e-9 if n == 1 else 1e-13
    np.testing.assert_allclose(mg.polygamma(n, mg.tensor(X)).numpy(), want, rtol=rtol,
                               atol=1e-13)


def test_lgamma_digamma_and_i0_in_float64_as_pytorchs(torch):
    t, x = torch.tensor(X), mg.tensor(X)
    np.testing.assert_allclose(mg.lgamma(x).numpy(), torch.lgamma(t).numpy(), rtol=1e-14,
                               atol=1e-14)
    np.testing.assert_allclose(mg.digamma(x).numpy(), torch.digamma(t).numpy(), rtol=1e-14,
                               atol=1e-14)
    wide = np.concatenate([X, RNG.uniform(-700.0, 700.0, 50)])
    np.testing.assert_allclose(mg.i0(mg.tensor(wide)).numpy(),
                               torch.i0(torch.tensor(wide)).numpy(), rtol=5e-15, atol=0)


def test_i0_overflows_where_its_value_does(torch):
    # PyTorch's overflows with exp(x), from x = 709.8; I0(713) = 6.7e307 is a float64 still
    x = mg.tensor([713.0, 714.0], dtype=mg.float64)
    assert np.isfinite(mg.i0(x)[0].item()) and mg.i0(x)[1].item() == np.inf


def _t(*shape, low, high):
    return mg.tensor(RNG.uniform(low, high, shape)).requires_grad_()


PROGRAMS = {  # name: (program, inputs), away from the poles
    "lgamma": (lambda x: mg.lgamma(x), [_t(3, 4, low=-3.9, high=-3.1)]),
    "lgamma_positive": (lambda x: x.lgamma(), [_t(3, 4, low=0.2, high=6.0)]),
    "digamma": (lambda x: mg.digamma(x), [_t(3, 4, low=-2.9, high=5.0)]),
    "polygamma": (lambda x: mg.cat([mg.polygamma(1, x), x.polygamma(3)]),
                  [_t(5, low=0.3, high=12.0)]),
    # beyond 20 (the asymptotic branch) scaled by exp(-|x|), as the differences need
    "i0": (lambda x: mg.cat([mg.i0(x[:3]), mg.i0(x[3:]) * (-x[3:].abs()).exp()]),
           [mg.tensor([0.0, -0.7, 3.0, 19.9, -22.0, 30.0], dtype=mg.float64).requires_grad_()]),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_first_and_second_derivatives_by_central_differences(name):
    program, xs = PROGRAMS[name]
    assert gradcheck(program, xs)
    assert gradgradcheck(program, xs)
