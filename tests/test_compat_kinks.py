"""Gradients at kinks and edges, against PyTorch itself: where a formula taken apart op by op
gives 0 * inf = nan (x**0 at 0, the std of a constant row, binary cross entropy at p = 0 or 1),
PyTorch defines a value, and so does minigrad. Values and gradients in float64, NaNs compared
as NaNs; then float64 central differences through the new Functions away from the kinks."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

F = mg.nn.functional
INF = float("inf")


def _bce(lib, F_, p_values, t_values, **kw):
    return lambda x: F_.binary_cross_entropy(x, lib.tensor(t_values, dtype=lib.float64), **kw)


def cases(lib, F_):
    """name -> (function of one float64 tensor, its values)."""
    return {
        "x**0 at 0": (lambda x: x ** 0, [0.0, 1.0, -2.0]),
        "x**0.0 (float exponent) at 0": (lambda x: x ** 0.0, [0.0, 3.0]),
        "x**1 at 0": (lambda x: x ** 1, [0.0, -1.0]),
        "x**2 at 0": (lambda x: x ** 2, [0.0, -1.0]),
        "x**-1 at 0": (lambda x: x ** -1, [0.0, 2.0]),
        "x**0.5 at 0": (lambda x: x ** 0.5, [0.0, 4.0]),
        "negative base, fractional exponent": (lambda x: x ** 1.5, [-1.0, 4.0]),
        "negative base, odd exponent": (lambda x: x ** 3, [-1.0, 2.0]),
        "x**x at 0": (lambda x: x ** x, [0.0, 1.0, 2.0]),
        "x**tensor exponents 0 and 2 at 0": (lambda x: x ** lib.tensor([0.0, 2.0],
                                                                        dtype=lib.float64),
                                              [0.0, 0.0]),
        "2**x": (lambda x: 2 ** x, [0.0, -1.0]),
        "0**x": (lambda x: 0 ** x, [0.0, 1.0, 2.0]),
        "(-2)**x (nan, as the log of a negative base)": (lambda x: (-2.0) ** x, [2.0, 1.0]),
        "sqrt at 0": (lambda x: x.sqrt(), [0.0, 4.0]),
        "abs at 0": (lambda x: x.abs(), [0.0, -1.0, 1.0]),
        "relu at 0": (lambda x: x.relu(), [0.0, 1.0]),
        "norm of zeros": (lambda x: x.norm(), [0.0, 0.0]),
        "1-norm of zeros": (lambda x: x.norm(1), [0.0, 0.0]),
        "norm of a zero row": (lambda x: x.norm(dim=1), [[0.0, 0.0], [3.0, 4.0]]),
        "std of a constant row": (lambda x: x.std(dim=1), [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]]),
        "std of constants": (lambda x: x.std(), [2.0, 2.0]),
        "biased std of constants": (lambda x: x.std(unbiased=False), [2.0, 2.0]),
        "std, keepdim": (lambda x: x.std(dim=0, keepdim=True), [[1.0, 5.0], [1.0, 3.0]]),
        "std of one element (nan)": (lambda x: x.std(), [1.0]),
        "var of a constant row": (lambda x: x.var(dim=1), [[1.0, 1.0, 1.0]]),
        "clamp at its bounds": (lambda x: x.clamp(0, 1), [0.0, 1.0, 0.5, 2.0, -1.0]),
        "clamp(min) at the bound": (lambda x: x.clamp(min=0), [0.0, 1.0]),
        "max with ties": (lambda x: x.max(), [1.0, 1.0, 0.0]),
        "min with ties": (lambda x: x.min(), [1.0, 1.0, 2.0]),
        "amax with ties": (lambda x: x.amax(), [1.0, 1.0, 0.0]),
        "max(dim) with ties": (lambda x: x.max(dim=0)[0], [[1.0, 2.0], [1.0, 2.0]]),
        "maximum with ties": (lambda x: lib.maximum(x, lib.ones(2, dtype=lib.float64)),
                              [1.0, 2.0]),
        "minimum with ties": (lambda x: lib.minimum(x, lib.ones(2, dtype=lib.float64)),
                              [1.0, 0.0]),
        "binary_cross_entropy at p = 0": (_bce(lib, F_, None, [0.0, 1.0, 1.0]), [0.0, 0.0, 1.0]),
        "binary_cross_entropy at p = 1": (_bce(lib, F_, None, [0.0, 1.0, 0.5]), [1.0, 1.0, 1.0]),
        "binary_cross_entropy at p = 0 and 1, no reduction":
            (_bce(lib, F_, None, [0.0, 1.0, 0.5], reduction="none"), [1.0, 0.0, 0.0]),
        "binary_cross_entropy, sum": (_bce(lib, F_, None, [0.0, 1.0], reduction="sum"),
                                      [0.25, 0.0]),
        "softmax with -inf": (lambda x: x.softmax(0), [-INF, 0.0]),
        "log at 0": (lambda x: x.log(), [0.0, 1.0]),
        "sigmoid saturated": (lambda x: x.sigmoid(), [0.0, 1000.0, -1000.0]),
        "normalize a zero vector": (lambda x: F_.normalize(x, dim=0), [0.0, 0.0]),
        "layer_norm of a constant row": (lambda x: F_.layer_norm(x, (3,)), [[1.0, 1.0, 1.0]]),
        "sign at 0": (lambda x: x.sign(), [0.0, -1.0]),
        "l1_loss at 0": (lambda x: F_.l1_loss(x, x.detach()), [1.0]),
        "x * log(x) at 0": (lambda x: x * x.log(), [0.0, 1.0]),
    }


NAMES = list(cases(mg, F))


def _run(fn, values, lib):
    x = lib.tensor(np.array(values, dtype=np.float64), requires_grad=True)
    y = fn(x)
    y.sum().backward()
    return y.detach().numpy(), x.grad.numpy()


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", NAMES)
def test_values_and_gradients_at_kinks_match_pytorch(name, torch):
    fn, values = cases(mg, F)[name]
    tfn, _ = cases(torch, torch.nn.functional)[name]
    with np.errstate(all="ignore"):
        ours = _run(fn, values, mg)
    theirs = _run(tfn, values, torch)
    for what, a, b in zip(("value", "gradient"), ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0, equal_nan=True,
                                   err_msg=f"{name}: {what}")


def test_binary_cross_entropy_gradient_to_the_target_matches_pytorch(torch):
    p, t = np.array([0.2, 0.5, 0.9]), np.array([0.0, 0.3, 1.0])
    ours_t = mg.tensor(t, requires_grad=True)
    theirs_t = torch.tensor(t, requires_grad=True)
    F.binary_cross_entropy(mg.tensor(p), ours_t).backward()
    torch.nn.functional.binary_cross_entropy(torch.tensor(p), theirs_t).backward()
    np.testing.assert_allclose(ours_t.grad.numpy(), theirs_t.grad.numpy(), rtol=1e-12)


def test_std_and_binary_cross_entropy_gradcheck():
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    assert gradcheck(lambda a: a.std(dim=1, keepdim=True), [x])
    assert gradcheck(lambda a: a.std(correction=0), [x])
    p = mg.tensor(rng.uniform(0.1, 0.9, (2, 3)), requires_grad=True)
    t = mg.tensor(rng.uniform(0.0, 1.0, (2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), [p, t])
