"""The 3-d convolution and pooling (conv3d, conv_transpose3d, max_pool3d, avg_pool3d,
adaptive_avg_pool3d: the n-d ops of minigrad/ops/conv.py and pooling.py at three spatial dims):
float64 central-difference gradients of first and second order, forward-mode tangents against
PyTorch's, and empty and non-contiguous inputs. Values, dtypes, layers and errors against
PyTorch are in the compatibility table (tests/compat_cases_conv.py)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(9)
X = RNG.standard_normal((1, 2, 3, 4, 3))
W = RNG.standard_normal((2, 1, 2, 2, 2))

PROGRAMS = {  # name: program(lib, x, w)
    "conv3d": lambda lib, x, w: lib.nn.functional.conv3d(x, w, None, (1, 2, 1), 1, 1, 2),
    "conv_transpose3d": lambda lib, x, w: lib.nn.functional.conv_transpose3d(
        x, w, stride=(2, 1, 1), padding=(0, 1, 0), groups=2),
    "max_pool3d": lambda lib, x, w: lib.nn.functional.max_pool3d(x * w.sum(), 2, 1, 1),
    "avg_pool3d": lambda lib, x, w: lib.nn.functional.avg_pool3d(
        x * w.sum(), (2, 3, 2), 1, 1, count_include_pad=False),
    "adaptive_avg_pool3d": lambda lib, x, w: lib.nn.functional.adaptive_avg_pool3d(
        x * w.sum(), (2, 3, 2)),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradients_of_first_and_second_order(name):
    fn = lambda x, w: PROGRAMS[name](mg, x, w)  # noqa: E731
    inputs = [mg.tensor(X, requires_grad=True), mg.tensor(W, requires_grad=True)]
    assert gradcheck(fn, inputs) and gradgradcheck(fn, inputs)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_forward_mode_as_pytorchs(name, torch):
    tangents = [RNG.standard_normal(X.shape), RNG.standard_normal(W.shape)]
    results = []
    for lib, fw in ((mg, fwAD), (torch, torch.autograd.forward_ad)):
        with fw.dual_level():
            duals = [fw.make_dual(lib.tensor(a), lib.tensor(t))
                     for a, t in zip((X, W), tangents)]
            primal, tangent = fw.unpack_dual(PROGRAMS[name](lib, *duals))
            results.append((primal.detach().numpy().copy(), tangent.numpy().copy()))
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_empty_batch_and_transposed_input(torch):
    x = RNG.standard_normal((2, 2, 4, 5, 3)).astype(np.float32)
    w = RNG.standard_normal((3, 2, 2, 2, 2)).astype(np.float32)
    for program in (lambda lib, x, w: lib.nn.functional.conv3d(x[:0], w),
                    lambda lib, x, w: lib.nn.functional.conv3d(x.transpose(2, 4), w, padding=1),
                    lambda lib, x, w: lib.nn.functional.max_pool3d(x.transpose(3, 4), 2),
                    lambda lib, x, w: lib.nn.functional.avg_pool3d(x[:0], 2)):
        want = program(torch, torch.tensor(x), torch.tensor(w))
        got = program(mg, mg.tensor(x), mg.tensor(w))
        assert tuple(got.shape) == tuple(want.shape) and got.dtype == mg.float32
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
