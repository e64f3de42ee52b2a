"""Interpolation (F.interpolate, nn.Upsample): values and gradients against PyTorch for every
mode and size rule, float64 gradient checks of first and second order, and the errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from helpers import t64

_rng = np.random.default_rng(0)
X4, X3 = _rng.standard_normal((2, 3, 5, 7)), _rng.standard_normal((2, 3, 6))
CASES = [
    (X4, dict(scale_factor=2)), (X4, dict(size=(3, 4))), (X4, dict(size=(8, 11))),
    (X4, dict(scale_factor=1.7)), (X4, dict(scale_factor=(2.5, 0.6), mode="nearest-exact")),
    (X4, dict(size=(9, 4), mode="bilinear")),
    (X4, dict(size=(9, 13), mode="bilinear", align_corners=True)),
    (X4, dict(scale_factor=1.5, mode="bilinear")),
    (X4, dict(scale_factor=1.5, mode="bilinear", recompute_scale_factor=True)),
    (X4, dict(size=(3, 5), mode="area")), (X4, dict(size=1, mode="bilinear", align_corners=True)),
    (X4, dict(scale_factor=0.5, mode="bilinear")), (X3, dict(size=10, mode="linear")),
    (X3, dict(scale_factor=2.5, mode="linear", align_corners=True)),
    (X3, dict(size=4, mode="nearest")), (X3, dict(size=13, mode="area")),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_match_pytorch(torch, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for x, kw in CASES:
        x = x.astype(dtype)
        results = []
        for lib in (mg, torch):
            t = lib.tensor(x, requires_grad=True)
            y = lib.nn.functional.interpolate(t.transpose(-1, -2).transpose(-1, -2), **kw)
            w = np.sin(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype)
            (y * lib.tensor(w)).sum().backward()
            results.append((y.detach().numpy(), t.grad.numpy(), str(y.dtype)[-7:]))
        (y, g, dt), (y_t, g_t, dt_t) = results
        assert y.shape == y_t.shape and dt == dt_t, kw
        np.testing.assert_allclose(y, y_t, rtol=tol, atol=tol, err_msg=str(kw))
        np.testing.assert_allclose(g, g_t, rtol=tol, atol=tol, err_msg=str(kw))


def test_gradcheck_and_gradgradcheck():
    x = t64(_rng.standard_normal((1, 2, 3, 4)))
    assert gradcheck(lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), [x])
    assert gradcheck(lambda x: F.interpolate(x, size=(5, 2), mode="nearest-exact"), [x])
    assert gradgradcheck(lambda x: F.interpolate(x, size=(4, 7), mode="bilinear",
                                                 align_corners=True) ** 2, [x])
    up = mg.nn.Upsample(scale_factor=2, mode="linear")
    seq = t64(_rng.standard_normal((2, 2, 3)))
    assert gradcheck(lambda x: up(x), [seq])


def test_errors_name_the_problem():
    x = mg.zeros(1, 1, 4, 4)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(NotImplementedError, match="Got 4D input, but linear mode needs 3D"):
        F.interpolate(x, size=2, mode="linear")
    with pytest.raises(ValueError, match="align_corners option can only be set with the "
                                         "interpolating modes"):
        F.interpolate(x, size=2, align_corners=True)
    with pytest.raises(NotImplementedError, match=r"\(got bicubc\)"):
        F.interpolate(x, size=2, mode="bicubc")
    with pytest.raises(ValueError, match=r"spatial dimensions of \[4, 4\] and output size of "
                                         r"\(5,\)"):
        F.interpolate(x, size=(5,))
