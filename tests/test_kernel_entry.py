"""The row kernels' entry points take a short way past their checks when a few tests show that
none can fail (a float32 or float64 ndarray, matching shapes and dtypes, a float eps): that
way gives the bits of the checked way, and every input the tests turn away still meets the
checks and their messages. The thread count is read without Numba's locks, and is Numba's."""
import types

import numba
import numpy as np
import pytest

from minigrad import kernels
from minigrad.kernels import policy


class _Sub(np.ndarray):
    """An ndarray subclass: not `type(x) is np.ndarray`, so it takes the checked way."""


def _bits(*arrays):
    return [(a.dtype, a.shape, np.ascontiguousarray(a).tobytes()) for a in arrays]


@pytest.fixture(params=["serial", "parallel"])
def both_sides(request, monkeypatch):
    """The serial twin, and the parallel kernel (a threshold of 0: the pool at any size)."""
    monkeypatch.setattr(policy, "PARALLEL_MIN_WORK", 10**9 if request.param == "serial" else 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(37, 20), (3, 5, 33)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_short_way_gives_the_checked_bits(both_sides, op, shape, dtype):
    r = np.random.default_rng(0)
    x = (r.standard_normal(shape) * 4).astype(dtype)
    g = r.standard_normal(shape).astype(dtype)
    fwd, bwd = getattr(kernels, op), getattr(kernels, op + "_backward")
    y = fwd(x)
    checked = fwd(x.view(_Sub))
    assert _bits(y) == _bits(np.asarray(checked))
    assert _bits(bwd(y, g)) == _bits(np.asarray(bwd(y.view(_Sub), g)))
    # a non-contiguous input of either rank: a copy made C-contiguous, the same bits
    xs = np.repeat(x, 2, axis=-1)[..., ::2]
    assert not xs.flags.c_contiguous
    assert _bits(fwd(xs)) == _bits(y)
    assert _bits(bwd(y, np.repeat(g, 2, axis=-1)[..., ::2])) == _bits(bwd(y, g))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm_short_way_gives_the_checked_bits(both_sides, affine, dtype):
    r = np.random.default_rng(1)
    x = r.standard_normal((70, 24)).astype(dtype)
    g = r.standard_normal((70, 24)).astype(dtype)
    w = r.standard_normal(24).astype(dtype) if affine else None
    b = r.standard_normal(24).astype(dtype) if affine else None
    y, xhat, rstd = kernels.layer_norm(x, w, b, 1e-5)
    # a NumPy float eps and a subclass input take the checked way
    checked = kernels.layer_norm(x.view(_Sub), w, b, np.float64(1e-5))
    assert _bits(y, xhat, rstd) == _bits(*map(np.asarray, checked))
    grads = kernels.layer_norm_backward(g, xhat, rstd, w)
    checked = kernels.layer_norm_backward(g.view(_Sub), xhat, rstd.view(_Sub), w)
    assert _bits(*grads) == _bits(*map(np.asarray, checked))
    assert _bits(*kernels.layer_norm(x, w, b, 0)) == _bits(*kernels.layer_norm(x, w, b, 0.0))


@pytest.mark.parametrize("call, error, message", [
    (lambda x, g: kernels.softmax(x.astype(np.int64)), TypeError, "softmax: unsupported dtype"),
    (lambda x, g: kernels.softmax(np.float32(1)), ValueError, "softmax: expected at least 1"),
    (lambda x, g: kernels.softmax(x.tolist()), TypeError, "softmax: x must be a numpy array"),
    (lambda x, g: kernels.softmax_backward(x, g[:2]), ValueError,
     r"softmax_backward: output of shape \(3, 4\) and gradient of shape \(2, 4\) differ"),
    (lambda x, g: kernels.log_softmax_backward(x, g.astype(np.float64)), TypeError,
     "log_softmax_backward: dtypes differ: float32 and float64"),
    (lambda x, g: kernels.log_softmax_backward(x, g.tolist()), TypeError,
     "log_softmax_backward: grad must be a numpy array"),
    (lambda x, g: kernels.layer_norm(x, None, None, -1.0), ValueError,
     "layer_norm: eps must be >= 0"),
    (lambda x, g: kernels.layer_norm(x, None, None, float("nan")), ValueError,
     "layer_norm: eps must be >= 0, got nan"),
    (lambda x, g: kernels.layer_norm(x, x[0, :3], None, 1e-5), ValueError,
     r"layer_norm: weight of shape \(3,\) does not match"),
    (lambda x, g: kernels.layer_norm(x, None, x[0].astype(np.float64), 1e-5), TypeError,
     "layer_norm: dtypes differ"),
    (lambda x, g: kernels.layer_norm_backward(g, x, np.ones((3, 2), np.float32), None),
     ValueError, r"layer_norm_backward: rstd of shape \(3, 2\) does not match"),
    (lambda x, g: kernels.layer_norm_backward(g, x, np.ones((3, 1)), None), TypeError,
     "layer_norm_backward: dtypes differ"),
    (lambda x, g: kernels.layer_norm_backward(g[:, :2], x, np.ones((3, 1), np.float32), None),
     ValueError, r"layer_norm_backward: x_hat of shape \(3, 4\) and gradient"),
])
def test_what_the_short_way_turns_away_meets_the_checks(call, error, message):
    x = np.ones((3, 4), np.float32)
    with pytest.raises(error, match=message):
        call(x, np.ones((3, 4), np.float32))


def test_num_threads_is_numbas(monkeypatch):
    n = numba.get_num_threads()
    assert policy.num_threads() == n
    try:
        numba.set_num_threads(1)
        assert policy.num_threads() == 1 == numba.get_num_threads()
    finally:
        numba.set_num_threads(n)
    # a Numba without the private reader: its public function
    monkeypatch.setattr(policy, "_pool", types.SimpleNamespace())
    assert policy.num_threads() == n
