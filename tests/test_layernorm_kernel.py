"""kernels.layer_norm and its backward: the fused Numba kernel against the NumPy reference."""
import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels
from minigrad.kernels import driver
from minigrad.kernels import layernorm as ln
from minigrad.kernels import reference as ref


@pytest.fixture(autouse=True)
def restore_backend():
    before, small = kernels.get_backend(), kernels.policy.PARALLEL_MIN_WORK
    kernels.policy.PARALLEL_MIN_WORK = 0  # run the Numba kernel even on the tiniest inputs
    yield
    kernels.set_backend(before)
    kernels.policy.PARALLEL_MIN_WORK = small


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 40), d=st.integers(1, 70), dtype=st.sampled_from([np.float32, np.float64]),
       affine=st.booleans(), seed=st.integers(0, 2**31 - 1), transposed=st.booleans())
@pytest.mark.parametrize("backend", kernels.BACKENDS)
def test_layer_norm_matches_reference(backend, n, d, dtype, affine, seed, transposed):
    kernels.set_backend(backend)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((d, n)).T if transposed else rng.standard_normal((n, d))) * 3 + 1
    x = x.astype(dtype)
    w = rng.standard_normal(d).astype(dtype) if affine else None
    b = rng.standard_normal(d).astype(dtype) if affine else None
    g = rng.standard_normal((n, d)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    want = ref.layer_norm(x, w, b, 1e-5)
    got = kernels.layer_norm(x, w, b, 1e-5)
    for r, o in zip(want, got):
        assert o.dtype == dtype and o.shape == r.shape
        np.testing.assert_allclose(o, r, **tol)
    want_b = ref.layer_norm_backward(g, want[1], want[2], w)
    got_b = kernels.layer_norm_backward(g, want[1], want[2], w)
    for r, o in zip(want_b, got_b):
        assert o.dtype == dtype and o.shape == r.shape
        np.testing.assert_allclose(o, r, **tol)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(100, 1500), d=st.sampled_from([1, 7, 16, 33, 128]),
       dtype=st.sampled_from([np.float32, np.float64]), seed=st.integers(0, 2**31 - 1),
       parallel=st.booleans())
def test_layer_norm_backward_in_several_chunks_matches_reference(n, d, dtype, seed, parallel):
    # enough rows for several partial sums of the weight and bias gradients (ln.sum_chunks)
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, d)) * 3 + 1).astype(dtype)
    w, b, g = (rng.standard_normal(s).astype(dtype) for s in (d, d, (n, d)))
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    want = ref.layer_norm(x, w, b, 1e-5)
    for r, o in zip(want, driver.layer_norm_numba(x, w, b, 1e-5, parallel=parallel)):
        np.testing.assert_allclose(o, r, **tol)
    got = driver.layer_norm_backward_numba(g, want[1], want[2], w, parallel=parallel)
    for r, o in zip(ref.layer_norm_backward(g, want[1], want[2], w), got):
        assert o.dtype == dtype and o.shape == r.shape
        np.testing.assert_allclose(o, r, rtol=tol["rtol"], atol=tol["atol"] * np.sqrt(n))


@pytest.mark.parametrize("n", [5, 300, 1280])
def test_layer_norm_same_bits_at_any_thread_count(n):
    # the rows are independent and the weight and bias gradients are summed in chunks cut by
    # the number of rows alone, each chunk's rows in order: one thread, two, or the serial
    # twin give the same bits
    kernels.set_backend("numba")
    rng = np.random.default_rng(n)
    x, g = (rng.standard_normal((n, 128)).astype(np.float32) * 2 + 1 for _ in range(2))
    w, b = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    threads = numba.get_num_threads()
    runs = []
    try:
        for t, parallel in ((1, True), (threads, True), (threads, False)):
            numba.set_num_threads(t)
            y, xhat, rstd = driver.layer_norm_numba(x, w, b, 1e-5, parallel=parallel)
            runs.append((y, xhat, rstd) + driver.layer_norm_backward_numba(g, xhat, rstd, w,
                                                                           parallel=parallel))
    finally:
        numba.set_num_threads(threads)
    for other in runs[1:]:
        for a, o in zip(runs[0], other):
            np.testing.assert_array_equal(a, o)


@pytest.mark.parametrize("backend", kernels.BACKENDS)
def test_layer_norm_rows_have_zero_mean_unit_variance(backend):
    kernels.set_backend(backend)
    x = np.random.default_rng(0).standard_normal((50, 128)).astype(np.float32) * 5 + 2
    y, _, _ = kernels.layer_norm(x, None, None, 1e-5)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, atol=1e-3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_layer_norm_nan_or_inf_gives_nan_like_numpy(bad, dtype):
    # the kernel must not be compiled to assume finite numbers (kernels.FASTMATH)
    kernels.set_backend("numba")
    x = np.random.default_rng(1).standard_normal((4, 37)).astype(dtype)
    x[1, 5] = bad
    x[2, 36] = bad   # also at the end of a row
    w, b = np.ones(37, dtype), np.zeros(37, dtype)
    with np.errstate(invalid="ignore"):
        want = ref.layer_norm(x, w, b, 1e-5)
        got = kernels.layer_norm(x, w, b, 1e-5)
        g = np.ones_like(x)
        want_b = ref.layer_norm_backward(g, want[1], want[2], w)
        got_b = kernels.layer_norm_backward(g, want[1], want[2], w)
    assert np.isnan(got[0][1:3]).all() and np.isfinite(got[0][[0, 3]]).all()
    for r, o in zip(want + want_b, got + got_b):
        np.testing.assert_array_equal(np.isnan(o), np.isnan(r))
        np.testing.assert_allclose(o, r, rtol=1e-4, atol=1e-4)   # NaN where NumPy has NaN


@pytest.mark.parametrize("backend", kernels.BACKENDS)
def test_layer_norm_output_does_not_share_memory_with_saved_arrays(backend):
    # x_hat is kept for the backward pass; y goes to the user, who may change it in place
    kernels.set_backend(backend)
    x = np.random.default_rng(2).standard_normal((3, 8))
    y, xhat, rstd = kernels.layer_norm(x, None, None, 1e-5)
    assert not np.shares_memory(y, xhat) and not np.shares_memory(y, rstd)


def test_old_entry_points_still_work():
    x = np.random.default_rng(3).standard_normal((5, 9))
    for fwd, bwd in [(driver.layer_norm_numba, driver.layer_norm_backward_numba),
                     (ln.layer_norm_reference, ln.layer_norm_backward_reference)]:
        y, xhat, rstd = fwd(x, None, None, 1e-5)
        np.testing.assert_allclose(y, ref.layer_norm(x, None, None, 1e-5)[0], atol=1e-12)
        dx, _, _ = bwd(np.ones_like(x), xhat, rstd, None)
        np.testing.assert_allclose(dx, 0, atol=1e-12)   # normalising removes a constant shift


def test_layer_norm_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"layer_norm: expected rows of shape \(N, D\), got shape "
                                         r"\(2, 3, 4\)"):
        kernels.layer_norm(np.ones((2, 3, 4)), None, None, 1e-5)
    with pytest.raises(ValueError, match=r"layer_norm: weight of shape \(4,\) does not match rows "
                                         r"of 3 features"):
        kernels.layer_norm(x, np.ones(4, np.float32), None, 1e-5)
    with pytest.raises(TypeError, match="layer_norm: dtypes differ: float32 and float64"):
        kernels.layer_norm(x, np.ones(3), None, 1e-5)
    with pytest.raises(TypeError, match="layer_norm: unsupported dtype int64"):
        kernels.layer_norm(np.ones((2, 3), np.int64), None, None, 1e-5)
    with pytest.raises(ValueError, match="layer_norm: eps must be >= 0, got -1.0"):
        kernels.layer_norm(x, None, None, -1)
    with pytest.raises(TypeError, match="layer_norm: eps must be a number, got str"):
        kernels.layer_norm(x, None, None, "small")
    y, xhat, rstd = kernels.layer_norm(x, None, None, 1e-5)
    with pytest.raises(ValueError, match=r"layer_norm_backward: x_hat of shape \(2, 3\) and "
                                         r"gradient of shape \(3, 2\) differ"):
        kernels.layer_norm_backward(np.ones((3, 2), np.float32), xhat, rstd, None)
    with pytest.raises(ValueError, match=r"layer_norm_backward: rstd of shape \(2,\) does not "
                                         r"match x_hat of shape \(2, 3\)"):
        kernels.layer_norm_backward(np.ones_like(x), xhat, rstd.ravel(), None)
    with pytest.raises(TypeError, match="layer_norm_backward: dtypes differ"):
        kernels.layer_norm_backward(np.ones((2, 3)), xhat, rstd, None)
