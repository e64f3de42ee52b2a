"""cov and corrcoef against PyTorch (degenerate inputs: one observation, constant rows),
their first and second derivatives by central differences, the degrees-of-freedom warning
and errors; broadcast_tensors' gradient."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(19)


def test_derivatives_by_central_differences():
    x = mg.tensor(RNG.standard_normal((3, 5))).requires_grad_()
    aweights = mg.tensor(RNG.random(5) + 0.5)
    fweights = mg.tensor(np.array([1, 2, 1, 3, 1]))

    def fn(t):
        return mg.cat([mg.cov(t).reshape(-1), mg.cov(t, fweights=fweights,
                                                     aweights=aweights).reshape(-1),
                       mg.corrcoef(t).reshape(-1), mg.cov(t[0]).reshape(1)])
    assert gradcheck(fn, [x])
    assert gradgradcheck(fn, [x])
    tensors = [mg.tensor(RNG.standard_normal(s)).requires_grad_() for s in ((2, 1), (3,))]
    assert gradcheck(lambda a, b: mg.cat([t.reshape(-1) for t in mg.broadcast_tensors(a, b)]),
                     tensors)


def test_degenerate_inputs_as_pytorchs(torch):
    x = RNG.standard_normal((2, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # both warn that the dof are <= 0
        for program in (lambda lib, t: lib.cov(t[:, :1]), lambda lib, t: lib.corrcoef(t * 0 + 1),
                        lambda lib, t: lib.cov(t, correction=4)):
            want, got = program(torch, torch.tensor(x)), program(mg, mg.tensor(x))
            np.testing.assert_allclose(got.numpy(), want.numpy(), equal_nan=True)


def test_degrees_of_freedom_warning_and_errors(torch):
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        mg.cov(mg.ones(2, 1))
    for program, message in [
            (lambda lib: lib.cov(lib.ones(2, 2, 2)), "two or fewer dimensions"),
            (lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.ones(3)), "integral dtype"),
            (lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, 2])), "2 != 3"),
            (lambda lib: lib.cov(lib.ones(2, 3), aweights=-lib.ones(3)), "cannot be negative")]:
        with pytest.raises(RuntimeError):
            program(torch)
        with pytest.raises(RuntimeError, match=message):
            program(mg)
