"""trapezoid, trapz and cumulative_trapezoid against PyTorch: values, dtypes (integer samples
give float32) and gradients to y and x, first and second derivatives by central differences,
empty and one-sample inputs, and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(17)
Y, X, XS = RNG.standard_normal((2, 4)), np.array([0.0, 0.5, 2.0, 3.0]), RNG.standard_normal((2, 4))
NAMES = ["trapezoid", "trapz", "cumulative_trapezoid"]


def _programs(name):
    return [lambda lib, y, x, xs: getattr(lib, name)(y),
            lambda lib, y, x, xs: getattr(lib, name)(y, dx=0.5, dim=0),
            lambda lib, y, x, xs: getattr(lib, name)(y, x),
            lambda lib, y, x, xs: getattr(lib, name)(y, xs, dim=0),
            lambda lib, y, x, xs: getattr(lib, name)(y, xs[0])]


@pytest.mark.parametrize("name", NAMES)
def test_values_dtypes_and_gradients_as_pytorchs(name, torch):
    for i, program in enumerate(_programs(name)):
        results = []
        for lib in (torch, mg):
            xs = [lib.tensor(a).requires_grad_() for a in (Y, X, XS)]
            out = program(lib, *xs)
            (out * lib.tensor(np.arange(1.0, out.numel() + 1).reshape(tuple(out.shape)))).sum() \
                .backward()
            results.append((out.detach().numpy(), str(out.dtype).split(".")[-1],
                            [np.zeros(a.shape) if x.grad is None else x.grad.numpy()
                             for x, a in zip(xs, (Y, X, XS))]))
        (want, want_dtype, want_grads), (got, got_dtype, got_grads) = results
        assert got_dtype == want_dtype and got.shape == want.shape, i
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=str(i))
        for g, w in zip(got_grads, want_grads):
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=str(i))


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid"])  # trapz is trapezoid
def test_first_and_second_derivatives_by_central_differences(name):
    fn = lambda y, x, xs: mg.cat([p(mg, y, x, xs).reshape(-1) for p in _programs(name)])  # noqa
    xs = [mg.tensor(a).requires_grad_() for a in (Y, X, XS)]
    assert gradcheck(fn, xs)
    assert gradgradcheck(fn, xs)


@pytest.mark.parametrize("name", NAMES)
def test_integers_empty_and_single_samples_as_pytorchs(name, torch):
    cases = [lambda lib: getattr(lib, name)(lib.tensor([1, 2, 4])),
             lambda lib: getattr(lib, name)(lib.tensor([1, 2, 4]), lib.tensor([0, 1, 3])),
             lambda lib: getattr(lib, name)(lib.ones(2, 0)),
             lambda lib: getattr(lib, name)(lib.ones(0, 3)),
             lambda lib: getattr(lib, name)(lib.ones(2, 1), dx=3)]
    for i, program in enumerate(cases):
        want, got = program(torch), program(mg)
        assert tuple(got.shape) == tuple(want.shape), i
        assert str(got.dtype) == str(want.dtype).split(".")[-1], i
        np.testing.assert_allclose(got.numpy(), want.numpy(), err_msg=str(i))


@pytest.mark.parametrize("name", NAMES)
def test_errors(name, torch):
    for program, kind, message in [
            (lambda lib: getattr(lib, name)(lib.ones(2, 3), lib.ones(2)), RuntimeError,
             "one `x` value for each sample point"),
            (lambda lib: getattr(lib, name)(lib.tensor(3.0)), IndexError, "no dimensions"),
            (lambda lib: getattr(lib, name)(lib.ones(3), lib.ones(3), dx=2), TypeError,
             "cannot both be given")]:
        with pytest.raises(kind):
            program(torch)
        with pytest.raises(kind, match=message):
            program(mg)
