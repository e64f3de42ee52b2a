"""The batched products' kernel (.batched): against NumPy's matmul, its reference, on random
shapes and layouts (transposed and permuted views, broadcast batch dims, outputs written by
rows or by columns), float32 and float64; the layouts it leaves to NumPy; its route; and a
float64 gradient check of the matmul op with its products on that route."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad import kernels
from minigrad.autograd import gradcheck
from minigrad.kernels import batched, policy, products
from minigrad.ops.matmul import mm

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
TOL = {np.float32: dict(rtol=2e-5, atol=2e-5), np.float64: dict(rtol=1e-12, atol=1e-12)}


@pytest.fixture
def batched_route(monkeypatch):
    """Batches of every size on the "batched" route, whatever OpenBLAS's kernel set."""
    if policy.numpy_backend() or not policy.USE_BLAS:
        pytest.skip("the numba backend with OpenBLAS routes products to .batched")
    monkeypatch.setattr(policy, "BATCHED_KERNEL", True)
    monkeypatch.setattr(policy, "PARALLEL_MIN_WORK", 0)


def _matrices(r, batch, rows, cols, dtype, by_columns, heads):
    """An array (*batch, rows, cols) of random numbers whose matrices are stored by rows, or
    by columns (a transposed view), and, with `heads`, whose last batch dim is permuted in
    among the rows' (as attention's heads are)."""
    shape = batch + ((cols, rows) if by_columns else (rows, cols))
    if heads and batch:
        x = r.standard_normal(shape[:-3] + (shape[-2], shape[-3], shape[-1]))
        x = np.swapaxes(x.astype(dtype), -3, -2)
    else:
        x = r.standard_normal(shape).astype(dtype)
    return np.swapaxes(x, -1, -2) if by_columns else x


@st.composite
def batches(draw):
    """(a, b, out): a (*ba, M, K), b (*bb, K, N) broadcasting to one batch, in random layouts,
    and an empty out of the product's shape whose matrices are stored by rows or columns."""
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    m, k, n = (draw(st.integers(1, 41)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    ba = tuple(1 if draw(st.booleans()) and len(batch) > 1 else d for d in batch)
    bb = tuple(1 if draw(st.booleans()) and len(batch) > 1 else d for d in batch)
    ba = ba[draw(st.integers(0, len(ba) - 1)):]   # fewer leading dims broadcast too
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = _matrices(r, ba, m, k, dtype, draw(st.booleans()), draw(st.booleans()))
    b = _matrices(r, bb, k, n, dtype, draw(st.booleans()), draw(st.booleans()))
    shape = np.broadcast_shapes(ba, bb)
    if draw(st.booleans()):   # matrices stored by columns
        out = np.swapaxes(np.full(shape + (n, m), np.nan, dtype), -1, -2)
    else:
        out = np.full(shape + (m, n), np.nan, dtype)
    return a, b, out


@FAST
@given(case=batches())
def test_kernel_computes_numpys_matmul_on_any_layout(case):
    a, b, out = case
    batch = out.shape[:-2]
    want = np.matmul(a, b)
    known = batched.plan(a, b, out, batch)
    # B's rows (with a C written by columns: A's columns) must be contiguous; others are NumPy's
    by_columns = not (out.shape[-1] == 1 or out.strides[-1] == out.itemsize)
    reads = a if by_columns else b
    unit = reads.strides[-2 if by_columns else -1] == reads.itemsize
    one = (a.shape[-2] if by_columns else b.shape[-1]) == 1
    assert (known is not None) == (unit or one)
    if known is None:
        return
    assert batched.matmul(a, b, out, known) is out
    np.testing.assert_allclose(out, want, **TOL[a.dtype.type])


@FAST
@given(case=batches())
def test_the_batched_route_gives_numpys_matmul_whatever_the_layout(case, batched_route):
    a, b, out = case
    assert products.route(a, b) == "batched"
    np.testing.assert_allclose(products.product(a, b, out), np.matmul(a, b),
                               **TOL[a.dtype.type])
    np.testing.assert_allclose(products.product(a, b), np.matmul(a, b), **TOL[a.dtype.type])
    np.testing.assert_allclose(kernels.matmul(a, b), np.matmul(a, b), **TOL[a.dtype.type])


def test_each_product_is_the_same_whatever_the_batch(batched_route):
    # the sums run in order along k whatever the batch's size or a product's place in it
    r = np.random.default_rng(0)
    a = r.standard_normal((7, 20, 20)).astype(np.float32)
    b = r.standard_normal((7, 20, 32)).astype(np.float32)
    whole = mm(a, b)
    for t in range(7):
        np.testing.assert_array_equal(mm(a[t:t + 1], b[t:t + 1])[0], whole[t])
        np.testing.assert_array_equal(mm(a[t:t + 2], b[t:t + 2])[0], whole[t])


def test_layouts_the_kernel_cannot_read_in_place_are_numpys(batched_route):
    r = np.random.default_rng(1)
    a = r.standard_normal((3, 6, 5))
    b = r.standard_normal((3, 5, 4))
    for x, y in ((a[:, ::-1], b), (a, b[::-1]), (a, b[:, :, ::2].copy()[:, :, ::-1])):
        assert batched.plan(x, y, np.empty((3, 6, 4)), (3,)) is None
        np.testing.assert_allclose(products.product(x, y), np.matmul(x, y), rtol=1e-12)
    # neither the rows nor the columns of out's matrices contiguous
    out = np.empty((3, 12, 8))[:, ::2, ::2]
    assert batched.plan(a, b, out, (3,)) is None
    np.testing.assert_allclose(products.product(a, b, out), np.matmul(a, b), rtol=1e-12)
    # misaligned float64 elements
    raw = np.zeros(3 * 6 * 5 * 8 + 1, np.uint8)[1:].view(np.float64).reshape(3, 6, 5)
    raw[...] = a
    assert not raw.flags.aligned and batched.plan(raw, b, np.empty((3, 6, 4)), (3,)) is None
    np.testing.assert_allclose(products.product(raw, b), np.matmul(a, b), rtol=1e-12)
    # read-only and broadcast operands are read in place
    ro = np.broadcast_to(b[:1], b.shape)
    assert batched.plan(a, ro, np.empty((3, 6, 4)), (3,)) is not None
    np.testing.assert_allclose(products.product(a, ro), np.matmul(a, ro), rtol=1e-12)


def test_bad_shapes_and_outputs_raise_matmuls_errors(batched_route):
    a, b = np.ones((4, 3, 5)), np.ones((4, 6, 2))
    with pytest.raises(ValueError, match="matmul: cannot multiply"):
        products.product(a, b)
    with pytest.raises(ValueError, match="do not broadcast"):
        products.product(a, np.ones((3, 5, 2)))
    with pytest.raises(ValueError, match="out has shape"):
        products.product(a, np.ones((4, 5, 2)), np.empty((4, 3, 3)))
    with pytest.raises(TypeError, match="dtypes differ"):
        products.product(a, np.ones((4, 5, 2), np.float32))


def test_route_takes_the_kernel_where_openblas_lacks_avx512_kernels(monkeypatch):
    if policy.numpy_backend() or not policy.USE_BLAS:
        pytest.skip("the numba backend with OpenBLAS decides these routes")
    q = np.ones((256, 20, 32), np.float32)
    monkeypatch.setattr(policy, "BATCHED_KERNEL", True)
    assert products.route(q, q.swapaxes(1, 2)) == "batched"
    monkeypatch.setattr(policy, "BATCHED_KERNEL", False)
    assert products.route(q, q.swapaxes(1, 2)) == "reference"
    monkeypatch.undo()
    from minigrad.kernels import openblas
    assert policy.BATCHED_KERNEL == (not openblas.avx512_kernels())
    assert openblas.avx512_kernels() == (openblas._found[6].lower() in openblas.AVX512_CORES)


@pytest.mark.parametrize("shapes", [((3, 4, 5), (3, 5, 2)), ((2, 3, 4, 5), (3, 5, 6)),
                                    ((2, 1, 4, 3), (1, 3, 3, 2))])
def test_matmul_gradients_on_the_batched_route(shapes, batched_route):
    r = np.random.default_rng(2)
    a, b = (mg.tensor(r.standard_normal(s), requires_grad=True) for s in shapes)
    assert products.route(a.detach().numpy(), b.detach().numpy()) == "batched"
    assert gradcheck(lambda x, y: x @ y, [a, b])
    assert gradcheck(lambda x, y: x @ y.transpose(-2, -1),
                        [a, mg.tensor(r.standard_normal(shapes[1][:-2] + shapes[1][:-3:-1]),
                                      requires_grad=True)])
