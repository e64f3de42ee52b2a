"""The serial twins of the softmax, layer norm and dropout kernels (used below PARALLEL_MIN_WORK).

Each is checked against the NumPy reference on random shapes, and against the parallel kernel
(which runs the same row code, compiled a second time: the two may round a sum differently,
by an ulp, so they are compared to within a few ulps; dropout's integer hash must match
exactly), and the dispatch is checked to pick the serial twin for small inputs and the
parallel kernel for large ones. Which twin runs depends on the shape alone, so a run is
deterministic either way; so is the result's independence of where the arrays lie in memory,
which is checked bit for bit.
"""
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels
from minigrad.kernels import driver
from minigrad.kernels import reference as ref

from kernel_variants import ALWAYS_SERIAL, both_variants, restore_kernel_settings  # noqa: F401 (autouse fixture)

_sm = importlib.import_module("minigrad.kernels.softmax_kernels")

FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]


@st.composite
def logits(draw):
    """(x, g): logits of 1-3 dims with masked (-inf) entries and rows, and an upstream gradient."""
    lead = tuple(draw(st.lists(st.integers(1, 6), max_size=2)))
    n = draw(st.integers(1, 70))
    dtype = draw(st.sampled_from(DTYPES))
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (r.standard_normal(lead + (n,)) * draw(st.sampled_from([1.0, 30.0]))).astype(dtype)
    x[r.random(x.shape) < draw(st.sampled_from([0.0, 0.3]))] = -np.inf
    x.reshape(-1, n)[r.random(x.size // n) < 0.2] = -np.inf
    g = r.standard_normal(x.shape).astype(dtype)
    if draw(st.booleans()) and x.ndim >= 2:   # a non-contiguous view
        x, g = np.swapaxes(np.ascontiguousarray(np.swapaxes(x, 0, -1)), 0, -1), g
    return x, g


def twins(serial, parallel):
    """The serial and parallel twins agree to within a few ulps of the largest entry
    (infinities exactly): a sum rounded differently moves a cancelling difference by that."""
    parallel = np.asarray(parallel)
    eps = np.finfo(parallel.dtype).eps
    finite = parallel[np.isfinite(parallel)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    np.testing.assert_allclose(serial, parallel, rtol=4 * eps, atol=4 * eps * scale)


def close(a, b, dtype):
    np.testing.assert_allclose(a, b, rtol=2e-5 if dtype == np.float32 else 1e-12,
                               atol=2e-6 if dtype == np.float32 else 1e-13)


@FAST
@given(case=logits())
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_serial_matches_reference_and_parallel(name, case):
    x, g = case
    fwd, bwd = getattr(kernels, name), getattr(kernels, name + "_backward")
    serial, parallel = both_variants(fwd, x)
    twins(serial, parallel)
    want = getattr(ref, name)(x.astype(np.float64))
    fin = np.isfinite(want)
    assert ((serial == -np.inf) == (want == -np.inf)).all() and not np.isnan(serial).any()
    np.testing.assert_allclose(serial[fin], want[fin], rtol=2e-5 if x.dtype == np.float32 else
                               1e-12, atol=1e-5 if x.dtype == np.float32 else 1e-12)
    dserial, dparallel = both_variants(bwd, serial, g)
    twins(dserial, dparallel)
    close(dserial, getattr(ref, name + "_backward")(serial, g), x.dtype)


@FAST
@given(shape=st.lists(st.integers(1, 9), min_size=0, max_size=3),
       p=st.floats(0, 0.95), seed=st.integers(0, 2**64 - 1), dtype=st.sampled_from(DTYPES))
def test_dropout_serial_mask_is_the_parallel_and_reference_mask(shape, p, seed, dtype):
    x = np.random.default_rng(seed % 2**32).standard_normal(shape).astype(dtype)
    want = ref.dropout_mask(tuple(shape), p, seed, dtype)
    for got in both_variants(kernels.dropout_mask, shape, p, seed, dtype):
        np.testing.assert_array_equal(got, want)
    for got in both_variants(kernels.dropout, x, p, seed):
        np.testing.assert_array_equal(got, x * want)


@FAST
@given(n=st.integers(1, 40), d=st.integers(1, 70), dtype=st.sampled_from(DTYPES),
       affine=st.booleans(), seed=st.integers(0, 2**31 - 1))
def test_layer_norm_serial_matches_reference_and_parallel(n, d, dtype, affine, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, d)) * 3 + 1).astype(dtype)
    w = rng.standard_normal(d).astype(dtype) if affine else None
    b = rng.standard_normal(d).astype(dtype) if affine else None
    g = rng.standard_normal((n, d)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    kernels.policy.PARALLEL_MIN_WORK = ALWAYS_SERIAL
    got = kernels.layer_norm(x, w, b, 1e-5)
    for r, o in zip(ref.layer_norm(x, w, b, 1e-5), got):
        assert o.dtype == dtype and o.shape == r.shape
        np.testing.assert_allclose(o, r, **tol)
    for s, p in zip(got, driver.layer_norm_numba(x, w, b, 1e-5, parallel=True)):
        twins(s, p)
    _, xhat, rstd = got
    got_b = kernels.layer_norm_backward(g, xhat, rstd, w)
    for r, o in zip(ref.layer_norm_backward(g, xhat, rstd, w), got_b):
        assert o.dtype == dtype and o.shape == r.shape
        np.testing.assert_allclose(o, r, **tol)
    # the partial sums of the weight gradients are cut by the rows alone: the same order
    for s, p in zip(got_b, driver.layer_norm_backward_numba(g, xhat, rstd, w, parallel=True)):
        twins(s, p)


@pytest.mark.parametrize("dtype", DTYPES)
def test_softmax_result_does_not_depend_on_where_the_arrays_lie(dtype):
    # input and output cut from one buffer, next to each other at several distances, in
    # both orders: the serial kernel must give the parallel kernel's bits every time
    r = np.random.default_rng(3)
    for n in (8, 16, 33, 64):
        x = (r.standard_normal((3, n)) * 30).astype(dtype)
        want = np.empty_like(x)
        _sm.softmax_2d(x, want)
        for gap in range(0, 24, 5):
            buf = np.empty(2 * x.size + gap, dtype)
            first, second = buf[:x.size].reshape(x.shape), buf[x.size + gap:].reshape(x.shape)
            for xin, out in ((first, second), (second, first)):
                xin[...] = x
                _sm.softmax_2d_serial(xin, out)
                np.testing.assert_array_equal(out, want)


def _refuse(*args):
    raise AssertionError("the parallel kernel ran on a small input")


def test_small_inputs_never_launch_the_parallel_kernels(monkeypatch):
    for module, names in [(_sm, ["softmax_2d", "softmax_backward_2d", "log_softmax_2d",
                                 "log_softmax_backward_2d"]),
                          (driver, ["run"])]:
        for name in names:
            monkeypatch.setattr(module, name, _refuse)
    x = np.random.default_rng(0).standard_normal((16, 32, 32)).astype(np.float32)
    assert x.size < kernels.policy.PARALLEL_MIN_WORK
    y = kernels.softmax(x)
    kernels.softmax_backward(y, x)
    kernels.log_softmax_backward(kernels.log_softmax(x), x)
    kernels.dropout(x, 0.1, 3)
    kernels.dropout_mask(x.shape, 0.1, 3)
    rows = x.reshape(-1, 32)
    _, xhat, rstd = kernels.layer_norm(rows, None, None, 1e-5)
    kernels.layer_norm_backward(rows, xhat, rstd, None)


def test_large_inputs_use_the_parallel_kernels(monkeypatch):
    calls = []
    real = _sm.softmax_2d
    monkeypatch.setattr(_sm, "softmax_2d", lambda x, y: (calls.append(x.shape), real(x, y)))
    x = np.zeros((kernels.policy.PARALLEL_MIN_WORK // 64, 64), np.float32)
    np.testing.assert_array_equal(kernels.softmax(x), 1 / 64)
    assert calls == [x.shape]


def test_empty_inputs():
    for threshold in (ALWAYS_SERIAL, 0):
        kernels.policy.PARALLEL_MIN_WORK = threshold
        x = np.zeros((3, 0, 4), np.float32)
        assert kernels.softmax(x).shape == x.shape
        assert kernels.log_softmax_backward(x, x).shape == x.shape
        assert kernels.dropout(x, 0.5, 1).shape == x.shape
        y, xhat, rstd = kernels.layer_norm(np.zeros((0, 4)), None, None, 1e-5)
        assert y.shape == (0, 4) and rstd.shape == (0, 1)


# ---------------------------------------------------------------- matmul ----
_blas = importlib.import_module("minigrad.kernels.blas")
needs_blas = pytest.mark.skipif(not _blas.available(), reason="no OpenBLAS: the tiled kernel "
                                "does every product")


@st.composite
def small_products(draw):
    """(a, b): a 2-D, batched or (B, T, D) @ (D, N) product, operands possibly transposed views."""
    m, k, n = (draw(st.integers(1, 40)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(1, 5), max_size=2)))
    b_batch = batch if draw(st.booleans()) else ()
    dtype = draw(st.sampled_from(DTYPES))
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = r.standard_normal(batch + (m, k)).astype(dtype)
    b = r.standard_normal(b_batch + (k, n)).astype(dtype)
    if draw(st.booleans()):   # a transposed view, as a weight gradient's g^T
        a = np.ascontiguousarray(np.swapaxes(a, -1, -2)).swapaxes(-1, -2)
    if draw(st.booleans()):
        b = np.ascontiguousarray(np.swapaxes(b, -1, -2)).swapaxes(-1, -2)
    return a, b


@needs_blas
@FAST
@given(case=small_products())
def test_small_products_run_in_the_calling_thread_with_openblas_held_at_one(case, monkeypatch):
    a, b = case
    kernels.policy.PARALLEL_MIN_WORK = 0
    monkeypatch.setattr(kernels.policy, "USE_BLAS", True)
    # products OpenBLAS keeps in this thread anyway go to np.matmul; none of these here
    monkeypatch.setattr(kernels.products, "_OWN_THREAD", -1)
    monkeypatch.setattr(_blas, "matmul", _refuse)
    held = []
    real = _blas._np_matmul
    monkeypatch.setattr(_blas, "_np_matmul", lambda x, y, out=None: (
        held.append(_blas._found[3]()), real(x, y, out))[1])
    threads = _blas._found[3]()
    got = kernels.matmul(a, b)
    assert held == [1] and _blas._found[3]() == threads   # held during the call, then restored
    assert got.dtype == a.dtype
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4 if a.dtype == np.float32 else 1e-12,
                               atol=1e-4 if a.dtype == np.float32 else 1e-12)


def _record_blas_routes(monkeypatch):
    """A list that collects the name of each OpenBLAS route a product takes ("matmul": blocks
    in Numba's pool, "matmul_serial": one call in this thread)."""
    paths = []
    for name in ("matmul", "matmul_serial"):
        real = getattr(_blas, name)
        monkeypatch.setattr(_blas, name, lambda x, y, out=None, name=name, real=real:
                            (paths.append(name), real(x, y, out))[1])
    return paths


@needs_blas
def test_products_from_serial_matmul_max_work_up_use_numbas_pool(monkeypatch):
    monkeypatch.setattr(kernels.policy, "USE_BLAS", True)
    paths = _record_blas_routes(monkeypatch)
    r = np.random.default_rng(1)
    a = r.standard_normal((512, 64)).astype(np.float32)
    b = r.standard_normal((64, kernels.policy.SERIAL_MATMUL_MAX_WORK // (512 * 64))).astype(np.float32)
    np.testing.assert_allclose(kernels.matmul(a, b), a @ b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(kernels.matmul(a, b[:, :-1]), a @ b[:, :-1], rtol=1e-4,
                               atol=1e-4)   # one column fewer: below the limit
    assert paths == ["matmul", "matmul_serial"]


@needs_blas
def test_attention_sized_batches_are_one_numpy_call_in_this_thread(monkeypatch):
    # a batch of small matrices (attention's 256 of 20 x 32 by 32 x 20) is the NumPy
    # backend's own call: not the pool, and no hold of OpenBLAS's thread count (it never
    # threads products that small); larger matrices in a batch hold it, up to
    # SERIAL_BATCH_FACTOR times the serial limit
    # (on OpenBLAS's AVX-512 kernels; on others BATCHED_KERNEL sends them to .batched)
    from minigrad.kernels import products
    monkeypatch.setattr(kernels.policy, "USE_BLAS", True)
    monkeypatch.setattr(kernels.policy, "BATCHED_KERNEL", False)
    paths = _record_blas_routes(monkeypatch)
    r = np.random.default_rng(2)
    q, k = r.standard_normal((2, 256, 20, 32), dtype=np.float32)
    assert products.route(q, k.swapaxes(1, 2)) == "reference"
    np.testing.assert_array_equal(kernels.matmul(q, k.swapaxes(1, 2)), q @ k.swapaxes(1, 2))
    out = np.empty((256, 20, 32), np.float32).swapaxes(1, 2)   # column-major matrices
    g = r.standard_normal((256, 20, 20), dtype=np.float32)
    assert products.product(q.swapaxes(1, 2), g, out) is out
    # into column-major matrices NumPy's matmul takes another path than into a new array;
    # the two agree bit for bit on an AVX-512 machine's OpenBLAS kernels, not on AVX2's
    np.testing.assert_allclose(out, q.swapaxes(1, 2) @ g, rtol=1e-5, atol=1e-5)
    assert paths == []
    big = r.standard_normal((8, 64, 65), dtype=np.float32)   # 64 x 65 x 64: above _OWN_THREAD
    bt = big.swapaxes(1, 2)
    assert products.route(big, bt) == "blas_serial"
    np.testing.assert_allclose(kernels.matmul(big, bt), big @ bt, rtol=1e-4, atol=1e-4)
    assert paths == ["matmul_serial"]
    # the limit: a batch of SERIAL_BATCH_FACTOR * SERIAL_MATMUL_MAX_WORK multiply-adds goes
    # to the pool, as does any batch when the serial limit is 0
    n = products.SERIAL_BATCH_FACTOR * kernels.policy.SERIAL_MATMUL_MAX_WORK // (20 * 32 * 20)
    ones = np.ones((n + 1, 20, 32), np.float32)
    assert products.route(ones, ones.swapaxes(1, 2)) == "blas_blocks"
    assert products.route(ones[:n - 1], ones[:n - 1].swapaxes(1, 2)) == "reference"
    monkeypatch.setattr(kernels.policy, "SERIAL_MATMUL_MAX_WORK", 0)
    assert products.route(q, k.swapaxes(1, 2)) == "blas_blocks"


@needs_blas
def test_attention_products_same_for_any_thread_count():
    # Numba's and OpenBLAS's thread counts both 1, then both 2: the same bits (fresh processes)
    code = ("import sys, numpy as np; from minigrad import kernels; from minigrad.ops.matmul "
            "import mm; r = np.random.default_rng(3); "
            "q, k = r.standard_normal((2, 256, 20, 32), dtype=np.float32); "
            "g = r.standard_normal((256, 20, 20), dtype=np.float32); kt = k.swapaxes(1, 2); "
            "sys.stdout.write(''.join(x.tobytes().hex() for x in (mm(q, kt), mm(g, k, like=q), "
            "mm(q.swapaxes(1, 2), g, like=kt))))")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=dict(os.environ, NUMBA_NUM_THREADS=t,
                                                OPENBLAS_NUM_THREADS=t)).stdout
            for t in ("1", "2")}
    assert len(outs) == 1 and len(next(iter(outs))) > 0


def test_products_openblas_keeps_in_this_thread_go_to_numpy_whatever_the_threads(monkeypatch):
    """Two matrices, or a batch of them, of at most _OWN_THREAD multiply-adds each are NumPy's
    own call (OpenBLAS runs them in the calling thread anyway; a batch goes to .batched
    instead where BATCHED_KERNEL says so); a larger matrix, or 3-D times 2-D, is one OpenBLAS
    call with its thread count held at one."""
    route, own = kernels.products.route, kernels.products._OWN_THREAD
    f32 = np.float32
    if kernels.policy.numpy_backend() or not kernels.policy.USE_BLAS:
        pytest.skip("the numba backend with OpenBLAS decides these routes")
    monkeypatch.setattr(kernels.policy, "BATCHED_KERNEL", False)
    assert route(np.ones((64, 64), f32), np.ones((64, 64), f32)) == "reference"      # = own
    assert route(np.ones((64, 64), f32), np.ones((64, 65), f32)) == "blas_serial"
    assert route(np.ones((8, 20, 32), f32), np.ones((8, 32, 20), f32)) == "reference"
    assert route(np.ones((8, 32, 64), f32), np.ones((64, 16), f32)) == "blas_serial"
    assert 64 * 64 * 64 == own
    monkeypatch.setattr(kernels.policy, "BATCHED_KERNEL", True)
    assert route(np.ones((8, 20, 32), f32), np.ones((8, 32, 20), f32)) == "batched"
    assert route(np.ones((64, 64), f32), np.ones((64, 64), f32)) == "reference"


def _route_by_the_table(sa, sb, min_work, serial_max, use_blas, factor, batched):
    """The numba backend's route of float operands, read off products' docstring table."""
    matrix = sa[-2] * sa[-1] * sb[-1]
    batch = len(sa) > 2 and len(sb) > 2
    work = matrix * max(int(np.prod(sa[:-2])), int(np.prod(sb[:-2])))
    limit = serial_max * (factor if batch else 1)
    if work == 0 or work < min_work:
        return "reference"
    if not use_blas:
        return "tiled"
    if work >= limit:
        return "blas_blocks"
    own = (batch or (len(sa) == 2 and len(sb) == 2)) and matrix <= kernels.products._OWN_THREAD
    if own and batch and batched:
        return "batched"
    return "reference" if own else "blas_serial"


@FAST
@given(a_batch=st.lists(st.integers(1, 6), max_size=2), b_batch=st.lists(st.integers(1, 6),
       max_size=2), mkn=st.tuples(*[st.sampled_from([0, 1, 7, 20, 32, 64, 300])] * 3),
       min_work=st.sampled_from([0, 32768]), serial_max=st.sampled_from([0, 2**14, 2**21]),
       use_blas=st.booleans(), factor=st.sampled_from([1, 4]), batched=st.booleans())
def test_route_follows_its_table_after_any_change_of_the_thresholds(
        monkeypatch, a_batch, b_batch, mkn, min_work, serial_max, use_blas, factor, batched):
    # route remembers its answers per shapes and thresholds: a threshold changed between two
    # calls on the same shapes (as the tests do) must still change the answer
    from minigrad.kernels import policy, products
    if policy.numpy_backend():
        pytest.skip("the numba backend's routes")
    m, k, n = mkn
    a = np.zeros(tuple(a_batch) + (m, k), np.float32)
    b = np.zeros(tuple(b_batch) + (k, n), np.float32)
    before = products.route(a, b)
    with monkeypatch.context() as mp:
        mp.setattr(policy, "PARALLEL_MIN_WORK", min_work)
        mp.setattr(policy, "SERIAL_MATMUL_MAX_WORK", serial_max)
        mp.setattr(policy, "USE_BLAS", use_blas)
        mp.setattr(products, "SERIAL_BATCH_FACTOR", factor)
        mp.setattr(policy, "BATCHED_KERNEL", batched)
        assert products.route(a, b) == _route_by_the_table(a.shape, b.shape, min_work,
                                                           serial_max, use_blas, factor,
                                                           batched)
        assert products.route(a.astype(np.int32), b.astype(np.int32)) == "reference"
    assert products.route(a, b) == before


def test_twins_are_one_loop_compiled_with_and_without_the_pool():
    """Each (parallel, serial) pair of row kernels is one source compiled twice, under names of
    its own (Numba's cache files are named after them), and both give the same bits."""
    from minigrad.kernels import policy, softmax_kernels as sm

    def loop(x, y):
        for i in range(x.shape[0]):
            y[i] = 2 * x[i]
    par, ser = policy.twins(loop, "_twice_for_the_test")
    assert (par.py_func.__qualname__, ser.py_func.__qualname__) == (
        "_twice_for_the_test", "_twice_for_the_test_serial")
    assert par.targetoptions.get("parallel") and not ser.targetoptions.get("parallel")
    assert par.py_func.__code__ is ser.py_func.__code__ is loop.__code__
    x = np.random.default_rng(0).standard_normal((300, 24)).astype(np.float32)
    a, b = np.empty_like(x), np.empty_like(x)
    sm.softmax_2d(x, a)
    sm.softmax_2d_serial(x, b)
    np.testing.assert_array_equal(a, b)
