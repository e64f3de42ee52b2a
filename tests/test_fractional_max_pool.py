"""Fractional max pooling (nn/fractional_max_pool.py) against PyTorch: the windows drawn from
the same offsets, the maxima, their indices and gradients, the offsets PyTorch draws after the
same seed, the layers, and the errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import gradcheck
from helpers import raises, t64


def _case(rng, nd):
    """(input, kernel, output size, offsets) of a random shape PyTorch accepts."""
    n, c = int(rng.integers(1, 3)), int(rng.integers(1, 4))
    spatial = tuple(int(s) for s in rng.integers(3, 9, nd))
    strict = nd == 3  # PyTorch's 3-D check leaves one position more
    kernel = tuple(int(rng.integers(1, s - strict + 1)) for s in spatial)
    out = tuple(int(rng.integers(1, s - k + 2 - strict)) for s, k in zip(spatial, kernel))
    return rng.standard_normal((n, c) + spatial), kernel, out, rng.random((n, c, nd))


@pytest.mark.parametrize("nd", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_indices_and_gradients_match_torch(torch, nd, dtype):
    rng = np.random.default_rng(nd)
    for trial in range(40):
        a, kernel, out, u = _case(rng, nd)
        a = (np.round(a) if trial % 4 == 0 else a).astype(dtype)  # whole numbers tie
        g = rng.standard_normal(a.shape[:2] + out).astype(dtype)
        results = []
        for lib in (torch, mg):
            fn = getattr(lib.nn.functional, f"fractional_max_pool{nd}d")
            x = lib.tensor(a, requires_grad=True)
            y, where = fn(x, kernel, output_size=out, return_indices=True,
                          _random_samples=lib.tensor(u.astype(dtype)))
            y.backward(lib.tensor(g))
            results.append((str(y.dtype).split(".")[-1], str(where.dtype).split(".")[-1],
                            y.detach().numpy(), where.numpy(), x.grad.numpy()))
        (tdt, tidt, *want), (mdt, midt, *got) = results
        assert (mdt, midt) == (tdt, tidt) == (np.dtype(dtype).name, "int64")
        for w, h in zip(want, got):
            np.testing.assert_array_equal(h, w)


def test_nans_win_as_in_torch(torch):
    a = np.array([[[[1.0, np.nan, 3.0, 0.0], [np.nan, 2.0, -1.0, 5.0], [4.0, 4.0, 4.0, 4.0]]]])
    u = np.array([[[0.3, 0.8]]])
    got = [lib.nn.functional.fractional_max_pool2d(lib.tensor(a), 2, output_size=(2, 3),
                                                    return_indices=True,
                                                    _random_samples=lib.tensor(u))
           for lib in (torch, mg)]
    np.testing.assert_array_equal(got[1][0].numpy(), got[0][0].numpy())
    np.testing.assert_array_equal(got[1][1].numpy(), got[0][1].numpy())


@pytest.mark.parametrize("nd", [2, 3])
def test_gradcheck(nd):
    rng = np.random.default_rng(10 + nd)
    shape = (2, 2, 6, 7) if nd == 2 else (1, 2, 5, 6, 4)
    samples = t64(rng.random((shape[0], 2, nd)), requires_grad=False)
    fn = getattr(F, f"fractional_max_pool{nd}d")
    # distinct values a step apart, so that no difference quotient crosses a tie
    x = t64(rng.permutation(np.prod(shape)).reshape(shape) * 0.1)
    out = (3, 4) if nd == 2 else (2, 3, 2)
    assert gradcheck(lambda t: fn(t, 2, output_size=out, _random_samples=samples), [x])


def test_offsets_are_drawn_as_torch_draws_them(torch):
    a = np.random.default_rng(1).standard_normal((2, 3, 9, 7)).astype(np.float32)
    b = np.random.default_rng(2).standard_normal((3, 6, 8, 9)).astype(np.float64)
    results = []
    for lib in (torch, mg):
        lib.manual_seed(3)
        y2, i2 = lib.nn.functional.fractional_max_pool2d(lib.tensor(a), 2, output_ratio=(0.5, 0.6),
                                                         return_indices=True)
        y3 = lib.nn.FractionalMaxPool3d((2, 1, 3), output_ratio=0.5)(lib.tensor(b))  # unbatched
        results.append((y2.numpy(), i2.numpy(), y3.numpy(), lib.rand(3).numpy()))
    for want, got in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_layers_keep_given_offsets_as_a_buffer(torch):
    u = np.random.default_rng(4).random((1, 2, 2)).astype(np.float32)
    a = np.random.default_rng(5).standard_normal((1, 2, 8, 8)).astype(np.float32)
    layers = [lib.nn.FractionalMaxPool2d(3, output_size=4, return_indices=True,
                                         _random_samples=lib.tensor(u)) for lib in (torch, mg)]
    assert list(layers[1].state_dict()) == list(layers[0].state_dict()) == ["_random_samples"]
    assert (layers[1].kernel_size, layers[1].output_size) == ((3, 3), (4, 4))
    for got, want in zip(layers[1](mg.tensor(a)), layers[0](torch.tensor(a))):
        np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_errors_are_torch_s(torch):
    x = mg.zeros(1, 2, 5, 5)
    with raises(RuntimeError, "fractional_max_pool2d(): pool height 3 too large relative to "
                              "input height 5"):
        F.fractional_max_pool2d(x, 3, output_size=4)
    with raises(RuntimeError, "fractional_max_pool3d_out(): pool time 1 too large relative to "
                              "input time 2"):
        F.fractional_max_pool3d(x, (1, 4, 4), output_size=(2, 1, 1))
    with raises(ValueError, "fractional_max_pool2d requires specifying either an output_size "
                            "or an output_ratio"):
        F.fractional_max_pool2d(x, 2)
    with raises(RuntimeError, "Expect _random_samples to have the same dtype as input"):
        F.fractional_max_pool2d(x, 2, output_size=2, _random_samples=mg.rand(1, 2, 2).double())
    with raises(NotImplementedError, "\"fractional_max_pool2d_out_frame\" not implemented for "
                                     "'Long'"):
        F.fractional_max_pool2d(x.long(), 2, output_size=2, _random_samples=mg.zeros(1, 2, 2))
    with raises(RuntimeError, "fractional_max_pool2d(): Expected 3D or 4D tensor, but got: "
                              "[5, 5]"):
        F.fractional_max_pool2d(x[0, 0], 2, output_size=2, _random_samples=mg.zeros(1, 2, 2))
    with raises(ValueError, "output_ratio must be between 0 and 1 (got 1.5)"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with raises(ValueError, "FractionalMaxPool3d requires specifying either an output size, or "
                            "a pooling ratio"):
        nn.FractionalMaxPool3d(2)
    with raises(ValueError, "only one of output_size and output_ratio may be specified"):
        nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5)
    for lib, tensor in ((torch, torch.zeros(1, 2, 5, 5)), (mg, x)):  # the same types
        for call, kind in ((lambda: lib.nn.functional.fractional_max_pool2d(tensor, 3, output_size=4),
                            RuntimeError),
                           (lambda: lib.nn.functional.fractional_max_pool2d(tensor[0, 0, 0], 2,
                                                                            output_size=2),
                            IndexError)):
            with pytest.raises(kind):
                call()
