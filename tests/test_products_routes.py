"""The product router's memory, and the linear op's unchecked entries (`products.product_add`,
`product_and_sum`): the bits of the checked kernels on every route, PyTorch's values."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels
from minigrad.kernels import policy, products
from minigrad.ops import matmul as ops

FAST = settings(max_examples=20, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])

# (route's thresholds PARALLEL_MIN_WORK, SERIAL_MATMUL_MAX_WORK): NumPy's own call, one
# OpenBLAS call in this thread, OpenBLAS in blocks in Numba's pool; the defaults
ROUTES = [(1 << 40, 1 << 41), (0, 1 << 40), (0, 0), (None, None)]


@pytest.fixture
def numba_backend():
    if policy.numpy_backend():
        pytest.skip("the numba backend's routes")


def test_route_memory_is_bounded_and_keyed_on_dtype_and_every_threshold(numba_backend,
                                                                        monkeypatch):
    f32 = np.ones((32, 64), np.float32), np.ones((64, 17), np.float32)
    monkeypatch.setattr(policy, "USE_BLAS", True)
    monkeypatch.setattr(policy, "PARALLEL_MIN_WORK", 0)
    monkeypatch.setattr(products, "_OWN_THREAD", 0)
    assert products.route(*f32) == "blas_serial"
    # the same shapes in another dtype: integers are NumPy's exact product
    assert products.route(*(x.astype(np.int32) for x in f32)) == "reference"
    monkeypatch.setattr(products, "_OWN_THREAD", 32 * 64 * 17)
    assert products.route(*f32) == "reference"   # OpenBLAS keeps it in this thread
    # byte-swapped floats (the same letter) are NumPy's too: OpenBLAS reads native ones only
    swapped = tuple(x.astype(">f4" if np.little_endian else "<f4") for x in f32)
    assert products.route(*swapped) == "reference"
    np.testing.assert_array_equal(products.product(*swapped), f32[0] @ f32[1])
    monkeypatch.setattr(products, "_ROUTES_MAX", 3)
    for n in range(1, 8):
        products.route(np.ones((n, 2), np.float64), np.ones((2, n), np.float64))
        assert len(products._routes) <= 3
    assert products.route(*f32) == "reference"


@st.composite
def linear_products(draw):
    """a (M, K), b (K, N) as the linear op passes them (b = W^T, a transposed view, or the
    weight itself for dX), a bias of N columns, float32 or float64, and a route."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    m, k, n = (draw(st.sampled_from(sizes)) for sizes in
               ([1, 7, 32, 512], [1, 16, 64, 256], [1, 16, 46, 64, 256]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = rng.standard_normal((m, k)).astype(dtype)
    b = rng.standard_normal((k, n)).astype(dtype)
    if draw(st.booleans()):
        b = np.ascontiguousarray(b.T).T
    return a, b, rng.standard_normal(n).astype(dtype), draw(st.sampled_from(ROUTES))


@FAST
@given(case=linear_products())
def test_linear_entries_give_the_checked_kernels_bits_and_torchs_values(case, torch,
                                                                        monkeypatch):
    a, b, bias, (min_work, serial_max) = case
    if min_work is not None:
        monkeypatch.setattr(policy, "PARALLEL_MIN_WORK", min_work)
        monkeypatch.setattr(policy, "SERIAL_MATMUL_MAX_WORK", serial_max)
    y = ops.addmm(bias, a, b)
    np.testing.assert_array_equal(y, kernels.addmm(bias, a, b))
    # into a given array (the linear op's (..., D_out) result, seen flat): the same bits
    for product, args in ((ops.addmm, (bias, a, b)), (ops.mm, (a, b))):
        out = np.full((a.shape[0], b.shape[1]), np.nan, a.dtype)
        assert product(*args, out=out) is out
        np.testing.assert_array_equal(out, y if product is ops.addmm else kernels.matmul(a, b))
    g, s = ops.mm_and_sum(a, b)
    want_g, want_s = kernels.matmul_and_sum(a, b)
    np.testing.assert_array_equal(g, want_g)
    np.testing.assert_array_equal(s, want_s)
    assert y.dtype == g.dtype == s.dtype == a.dtype
    ta, tb, tbias = (torch.from_numpy(np.ascontiguousarray(x)) for x in (a, b, bias))
    tol = dict(rtol=1e-5, atol=1e-4) if a.dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(y, torch.addmm(tbias, ta, tb).numpy(), **tol)
    np.testing.assert_allclose(g, (ta @ tb).numpy(), **tol)
    np.testing.assert_allclose(s, ta.sum(0).numpy(), **tol)


def test_small_gpt_products_stay_in_this_thread_and_its_mlp_goes_to_the_pool(numba_backend,
                                                                              monkeypatch):
    # the default limit: a 64 -> 64 projection over 512 tokens (2^21 multiply-adds) is one
    # OpenBLAS call in this thread (its blocks in the pool cost 25 us more on one thread and
    # stall on a busy machine); the 4x wider MLP's products (2^23) are worth two threads
    monkeypatch.setattr(policy, "USE_BLAS", True)
    x, w, wide = (np.ones(s, np.float32) for s in ((512, 64), (64, 64), (64, 256)))
    assert products.route(x, w.T) == "blas_serial"
    assert products.route(x.T, x) == "blas_serial"   # its weight gradient
    assert products.route(x, wide) == "blas_blocks"


@pytest.mark.parametrize("lead", [(), (3,), (2, 5)])
def test_linear_op_returns_an_array_of_its_own_with_the_flat_products_bits(lead):
    # (..., D_in) inputs get the product written into the (..., D_out) result itself: not a
    # view of a flat product, so autograd has no memory owner to look for
    from minigrad.ops.linear import Linear
    rng = np.random.default_rng(0)
    x = rng.standard_normal(lead + (4, 64)).astype(np.float32)
    w, bias = rng.standard_normal((256, 64)).astype(np.float32), np.ones(256, np.float32)
    for args in ((x, w), (x, w, bias)):
        y = Linear.forward(object.__new__(Linear), *args)
        assert y.shape == lead + (4, 256) and y.flags.c_contiguous
        assert y.base is None or y.ndim == 2
        flat = x.reshape(-1, 64)
        want = ops.mm(flat, w.T) if len(args) == 2 else ops.addmm(bias, flat, w.T)
        np.testing.assert_array_equal(y.reshape(-1, 256), want)
