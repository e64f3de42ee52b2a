"""minigrad.kernels: every kernel against its NumPy reference, on both backends.

All kernel-level matmul tests are here (the naive loops, packing, the tiled kernel, threads,
errors); the matmul op's gradients are tested with the other ops. Layer norm's kernel has
its own file, tests/test_layernorm_kernel.py.
"""
import os
import subprocess
import sys
import threading

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from minigrad import kernels
from minigrad.kernels import dropout_ops
from minigrad.kernels import reference as ref

# the modules behind kernels.matmul (without OpenBLAS) and kernels.softmax
from minigrad.kernels import softmax_kernels as _sm_module
from minigrad.kernels.mathfn import fast_exp_no_overflow
from minigrad.kernels import tiled_matmul as _mm_module

# the autouse fixture only restores the backend, which each example sets itself
FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]


@pytest.fixture(autouse=True)
def restore_backend():
    before, small = kernels.get_backend(), kernels.policy.PARALLEL_MIN_WORK
    serial = kernels.policy.SERIAL_MATMUL_MAX_WORK
    kernels.policy.PARALLEL_MIN_WORK = 0  # run the Numba kernels even on the tiniest inputs
    kernels.policy.SERIAL_MATMUL_MAX_WORK = 0  # and the parallel BLAS path even for small products
    yield
    kernels.set_backend(before)
    kernels.policy.PARALLEL_MIN_WORK, kernels.policy.SERIAL_MATMUL_MAX_WORK = small, serial


@pytest.fixture(params=kernels.BACKENDS)
def backend(request):
    kernels.set_backend(request.param)
    return request.param


def tol(dtype, k=1):
    """Tolerance for a sum of k products of O(1) numbers."""
    eps = 1e-6 if dtype == np.float32 else 1e-13
    return dict(rtol=50 * eps, atol=50 * eps * np.sqrt(k))


def layout(x, how):
    """The same values as x, in another memory layout."""
    if how == "transposed":   # a view of the transpose's copy, F-like strides
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    if how == "strided":      # every other element of a bigger array
        big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
        big[..., ::2] = x
        return big[..., ::2]
    return x


# ---------------------------------------------------------------- matmul ----
@st.composite
def matmul_case(draw):
    dims = st.integers(1, 40)
    m, k, n = draw(dims), draw(dims), draw(dims)
    batch = draw(st.lists(st.integers(1, 3), max_size=2))
    # each operand keeps a batch dim, drops it to 1 (broadcast) or drops it entirely
    ba = [b if draw(st.booleans()) else 1 for b in batch]
    bb = [b if draw(st.booleans()) else 1 for b in batch]
    if draw(st.booleans()):
        bb = bb[draw(st.integers(0, len(bb))):]
    dtype = draw(st.sampled_from(DTYPES))
    how = draw(st.sampled_from(["contiguous", "transposed", "strided"])), \
        draw(st.sampled_from(["contiguous", "transposed", "strided"]))
    seed = draw(st.integers(0, 2**32 - 1))
    return tuple(ba) + (m, k), tuple(bb) + (k, n), dtype, how, seed


@FAST
@given(case=matmul_case())
@pytest.mark.parametrize("name", kernels.BACKENDS + ("numba, tiled only",))
def test_matmul_matches_numpy(name, case, monkeypatch):
    # "numba" sends 2-D products to OpenBLAS in blocks (where found); "tiled only" sends
    # every product to the register-tiled kernel
    kernels.set_backend(name.split(",")[0])
    monkeypatch.setattr(kernels.policy, "USE_BLAS", kernels.policy.USE_BLAS and "tiled" not in name)
    sa, sb, dtype, (ha, hb), seed = case
    r = np.random.default_rng(seed)
    a = layout(r.standard_normal(sa).astype(dtype), ha)
    b = layout(r.standard_normal(sb).astype(dtype), hb)
    out = kernels.matmul(a, b)
    expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out.shape == expect.shape and out.dtype == dtype
    np.testing.assert_allclose(out, expect, **tol(dtype, sa[-1]))


@st.composite
def matmul_2d_case(draw):
    dims = st.integers(1, 40)
    m, k, n = draw(dims), draw(dims), draw(dims)
    dtype = draw(st.sampled_from(DTYPES))
    how = [draw(st.sampled_from(["contiguous", "transposed", "strided"])) for _ in "ab"]
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = layout(r.standard_normal((m, k)).astype(dtype), how[0])
    b = layout(r.standard_normal((k, n)).astype(dtype), how[1])
    return a, b


@FAST
@given(case=matmul_2d_case())
@pytest.mark.parametrize("loop_order", ["ijk", "ikj"])
def test_naive_matmul_matches_numpy_and_the_tiled_kernel(loop_order, case):
    a, b = case
    out = kernels.matmul_naive(a, b, loop_order)
    assert out.shape == (a.shape[0], b.shape[1]) and out.dtype == a.dtype
    expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out, expect, **tol(a.dtype, a.shape[1]))
    kernels.set_backend("numba")
    np.testing.assert_allclose(out, kernels.matmul(a, b), **tol(a.dtype, a.shape[1]))


def test_naive_matmul_errors():
    with pytest.raises(ValueError, match=r"matmul_naive: cannot multiply \(2, 3\) by \(4, 5\)"):
        kernels.matmul_naive(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"matmul_naive: expected 2-D operands.*\(2, 2, 3\)"):
        kernels.matmul_naive(np.ones((2, 2, 3)), np.ones((3, 5)))
    with pytest.raises(TypeError, match="matmul_naive: unsupported dtype int64"):
        kernels.matmul_naive(np.ones((2, 3), np.int64), np.ones((3, 5), np.int64))
    with pytest.raises(ValueError, match="loop_order must be 'ijk' or 'ikj', got 'kji'"):
        kernels.matmul_naive(np.ones((2, 3)), np.ones((3, 5)), "kji")


@FAST
@given(nb=st.integers(1, 3), nv=st.integers(1, 70), k=st.integers(1, 40),
       dtype=st.sampled_from(DTYPES), how=st.sampled_from(["contiguous", "transposed", "strided"]),
       seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("operand", ["a", "b"])
def test_pack_matches_numpy(operand, nb, nv, k, dtype, how, seed):
    # Packing copies an operand into panels of P lanes: Xp[t, p, k, c] = X[t, k, p*P + c] for B
    # (lanes along N), X[t, p*P + c, k] for A (lanes along M). Lanes past the edge are not written.
    r = np.random.default_rng(seed)
    lanes = _mm_module.VBYTES // np.dtype(dtype).itemsize
    P = _mm_module.MR if operand == "a" else _mm_module.NV * lanes
    shape = (nb, nv, k) if operand == "a" else (nb, k, nv)
    x = layout(r.standard_normal(shape).astype(dtype), how)
    flat, (s0, s1, s2) = _mm_module._flat(x)
    npan = -(-nv // P)
    packed = np.full(nb * npan * k * P, np.nan, dtype)
    strides = (s0, s2, s1) if operand == "a" else (s0, s1, s2)   # (batch, along K, along lanes)
    _mm_module._pack(flat, *strides, nv, k, P, packed)
    lanes_last = np.swapaxes(x, 1, 2) if operand == "a" else x    # (nb, k, nv)
    want = np.full((nb, k, npan * P), np.nan, dtype)
    want[..., :nv] = lanes_last
    want = want.reshape(nb, k, npan, P).transpose(0, 2, 1, 3)
    np.testing.assert_array_equal(packed.reshape(nb, npan, k, P), want)


MODEL_SHAPES = [  # the toy Transformer's products, forward and backward
    ((256, 20, 32), (256, 32, 20)),   # Q K^T
    ((256, 23, 23), (256, 23, 32)),   # A V (odd T)
    ((64, 20, 128), (128, 512)),      # Linear on a 3-D input: flattened
    ((1280, 512), (512, 128)),
    ((1280, 128), (128, 2000)),       # output logits
]


@pytest.mark.parametrize("sa, sb", MODEL_SHAPES)
def test_matmul_model_shapes(backend, sa, sb):
    r = np.random.default_rng(0)
    a = r.standard_normal(sa, dtype=np.float32)
    b = r.standard_normal(sb, dtype=np.float32)
    np.testing.assert_allclose(kernels.matmul(a, b), np.matmul(a, b), rtol=1e-4, atol=1e-3)
    # and the backward products: g @ b^T and a^T @ g, on transposed views
    g = r.standard_normal(np.matmul(a, b).shape, dtype=np.float32)
    bt = np.swapaxes(b, -1, -2)
    np.testing.assert_allclose(kernels.matmul(g, bt), np.matmul(g, bt), rtol=1e-4, atol=1e-3)
    if a.ndim == b.ndim:
        at = np.swapaxes(a, -1, -2)
        np.testing.assert_allclose(kernels.matmul(at, g), np.matmul(at, g), rtol=1e-4, atol=1e-3)


@FAST
@given(m=st.integers(1, 300), k=st.integers(1, 40), n=st.integers(1, 70),
       batch=st.sampled_from([(), (2,), (3, 1)]), bcast=st.booleans(),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_matmul_packs_a_large_a_in_blocks_of_rows(m, k, n, batch, bcast, dtype, seed, monkeypatch):
    # with the packing budget at its minimum, a transposed A is packed and multiplied in
    # blocks of MR * GROUP rows, one batch entry at a time; the result must not change
    kernels.set_backend("numba")
    monkeypatch.setattr(kernels.policy, "USE_BLAS", False)  # the tiled kernel's packing
    monkeypatch.setattr(_mm_module, "PACK_A_BYTES", 1)
    r = np.random.default_rng(seed)
    a = layout(r.standard_normal(batch + (m, k)).astype(dtype), "transposed")
    b = layout(r.standard_normal(((1,) if bcast and batch else batch) + (k, n)).astype(dtype),
               "strided")
    out = kernels.matmul(a, b)
    expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
    assert out.shape == expect.shape and out.dtype == dtype
    np.testing.assert_allclose(out, expect, **tol(dtype, k))


def test_matmul_packing_scratch_is_bounded(monkeypatch):
    # a weight gradient over a large vocabulary, dW = g^T x: A = g^T is a transposed view that
    # the tiled kernel must pack, and the buffer kept for reuse stays within PACK_A_BYTES
    kernels.set_backend("numba")
    monkeypatch.setattr(kernels.policy, "USE_BLAS", False)
    mm = _mm_module
    mm._local.__dict__.pop("workspace", None)
    r = np.random.default_rng(2)
    g = r.standard_normal((1500, 2000), dtype=np.float32)   # packed whole: 12 MB
    x = r.standard_normal((1500, 64), dtype=np.float32)
    np.testing.assert_allclose(kernels.matmul(g.T, x), g.T @ x, rtol=1e-4, atol=1e-3)
    kept = mm._local.workspace[("a", np.dtype(np.float32))]
    assert 0 < kept.nbytes <= mm.PACK_A_BYTES < g.nbytes


@FAST
@given(m=st.integers(1, 1200), k=st.integers(1, 30), n=st.integers(1, 1200),
       how=st.sampled_from(["contiguous", "transposed", "strided"]),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
@pytest.mark.parametrize("operand", ["a", "b"])
def test_blas_blocks_match_numpy(operand, m, k, n, how, dtype, seed):
    # C is cut into an even number of blocks of rows (M >= N or M >= 1024) or of columns, each
    # one gemm call; sizes up to 1200 give 2 to 6 blocks, ragged last ones included
    if not kernels.blas.available():
        pytest.skip("no OpenBLAS found: the tiled kernel does every product")
    r = np.random.default_rng(seed)
    a = r.standard_normal((m, k)).astype(dtype)
    b = r.standard_normal((k, n)).astype(dtype)
    if operand == "a":
        a = layout(a, how)
    else:
        b = layout(b, how)
    out = kernels.blas.matmul(a, b)
    expect = a.astype(np.float64) @ b
    assert out.shape == (m, n) and out.dtype == dtype and out.flags.c_contiguous
    np.testing.assert_allclose(out, expect, **tol(dtype, k))
    np.testing.assert_array_equal(kernels.blas.matmul(a, b), out)  # same numbers again


@FAST
@given(m=st.integers(1, 40), k=st.integers(41, 1500), n=st.integers(1, 40),
       how=st.sampled_from(["contiguous", "transposed", "strided"]),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_blas_cut_by_k_matches_numpy(m, k, n, how, dtype, seed):
    # an inner dimension longer than both sides of a small C (a weight gradient g^T x) is cut
    # in two half sums over K, one of them in a scratch array added afterwards
    if not kernels.blas.available():
        pytest.skip("no OpenBLAS found: the tiled kernel does every product")
    assert kernels.blas._cut(m, n, k)[0] == kernels.blas.BY_K
    r = np.random.default_rng(seed)
    a = layout(r.standard_normal((m, k)).astype(dtype), how)
    b = layout(r.standard_normal((k, n)).astype(dtype), "transposed" if how == "strided" else how)
    out = kernels.blas.matmul(a, b)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, **tol(dtype, k))
    np.testing.assert_array_equal(kernels.blas.matmul(a, b), out)


@st.composite
def linear_case(draw):
    """(a, b, bias): a 2-D product in any layout, a bias row; sizes that cut by rows, columns
    or K."""
    m, n = draw(st.integers(1, 300)), draw(st.integers(1, 300))
    k = draw(st.sampled_from([draw(st.integers(1, 40)), draw(st.integers(300, 700))]))
    dtype = draw(st.sampled_from(DTYPES))
    how = [draw(st.sampled_from(["contiguous", "transposed", "strided"])) for _ in "ab"]
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    a = layout(r.standard_normal((m, k)).astype(dtype), how[0])
    b = layout(r.standard_normal((k, n)).astype(dtype), how[1])
    return a, b, r.standard_normal(n).astype(dtype)


@FAST
@given(case=linear_case())
@pytest.mark.parametrize("name", kernels.BACKENDS + ("numba, tiled only",))
def test_addmm_and_matmul_and_sum_match_numpy(name, case, monkeypatch):
    # in OpenBLAS's blocks the gemm adds the bias (beta = 1 over C filled with it) and a's rows
    # are summed block by block; elsewhere a product, then an add or a sum
    kernels.set_backend(name.split(",")[0])
    monkeypatch.setattr(kernels.policy, "USE_BLAS", kernels.policy.USE_BLAS and "tiled" not in name)
    a, b, bias = case
    k = a.shape[1]
    want = a.astype(np.float64) @ b
    out = kernels.addmm(bias, a, b)
    assert out.shape == want.shape and out.dtype == a.dtype and out.flags.c_contiguous
    np.testing.assert_allclose(out, want + bias, **tol(a.dtype, k))
    prod, sums = kernels.matmul_and_sum(a, b)
    assert prod.dtype == sums.dtype == a.dtype and sums.shape == (k,)
    np.testing.assert_allclose(prod, want, **tol(a.dtype, k))
    np.testing.assert_allclose(sums, a.astype(np.float64).sum(axis=0), **tol(a.dtype, len(a)))
    again = kernels.addmm(bias, a, b), kernels.matmul_and_sum(a, b)
    np.testing.assert_array_equal(again[0], out)          # the same numbers every time
    np.testing.assert_array_equal(again[1][1], sums)


def test_addmm_and_matmul_and_sum_errors():
    a, b = np.ones((3, 4), np.float32), np.ones((4, 5), np.float32)
    with pytest.raises(ValueError, match=r"addmm: bias of shape \(4,\) does not match"):
        kernels.addmm(np.ones(4, np.float32), a, b)
    with pytest.raises(TypeError, match="addmm: bias dtype float64 differs"):
        kernels.addmm(np.ones(5), a, b)
    with pytest.raises(ValueError, match="addmm: cannot multiply"):
        kernels.addmm(np.ones(5, np.float32), a, a)
    with pytest.raises(ValueError, match="matmul_and_sum: expected 2-D operands"):
        kernels.matmul_and_sum(a[None], b)
    with pytest.raises(TypeError, match="matmul_and_sum: dtypes differ"):
        kernels.matmul_and_sum(a, b.astype(np.float64))
    with pytest.raises(TypeError, match="matmul_and_sum: unsupported dtype complex64"):
        kernels.matmul_and_sum(a.astype(np.complex64), b.astype(np.complex64))
    i = np.arange(12).reshape(3, 4)   # integers: exact, as matmul
    w = np.arange(16).reshape(4, 4)
    np.testing.assert_array_equal(kernels.addmm(np.arange(4), i, w), i @ w + np.arange(4))


@pytest.mark.parametrize("use_blas", [False, True])
def test_matmul_of_permuted_heads(use_blas, monkeypatch):
    # attention's heads are a permuted view (B, H, T, Dh) of (B, T, H, Dh): batch strides
    # that do not merge, read in place by the BLAS path; also a broadcast batch dim
    kernels.set_backend("numba")
    monkeypatch.setattr(kernels.policy, "USE_BLAS", use_blas and kernels.policy.USE_BLAS)
    r = np.random.default_rng(7)
    x = r.standard_normal((6, 5, 3, 8)).astype(np.float32)
    q = x.transpose(0, 2, 1, 3)                      # (6, 3, 5, 8), not contiguous
    k = (2 * x).transpose(0, 2, 3, 1)                # (6, 3, 8, 5), transposed matrices
    for a, b in [(q, k), (k.swapaxes(-1, -2), q.swapaxes(-1, -2)), (q, k[:1]), (q[:, :1], k),
                 (q[::-1], k[:, ::-1]), (q[0], k), (q, k[0, 0])]:  # reversed, broadcast batches
        np.testing.assert_allclose(kernels.matmul(a, b), np.matmul(a.astype(np.float64), b),
                                   rtol=1e-5, atol=1e-5)


def empty_in_order(shape, dtype, order):
    """An empty array of `shape` whose axes lie in memory in `order` (outermost first)."""
    inverse = np.argsort(order)
    return np.empty([shape[d] for d in order], dtype).transpose(inverse)


@st.composite
def matmul_out_case(draw):
    """Operands of any layout and an `out` whose axes lie in memory in a random order."""
    sa, sb, dtype, how, seed = draw(matmul_case())
    batch = np.broadcast_shapes(sa[:-2], sb[:-2])
    shape = batch + (sa[-2], sb[-1])
    order = draw(st.permutations(range(len(shape))))
    return sa, sb, dtype, how, seed, shape, tuple(order)


@FAST
@given(case=matmul_out_case())
@pytest.mark.parametrize("name", kernels.BACKENDS + ("numba, tiled only",))
def test_matmul_writes_out_in_any_layout(name, case, monkeypatch):
    # the product lands in `out` whatever its memory order: through its strides where its
    # matrices have contiguous rows or columns (the gemm writes C^T = B^T A^T for the latter),
    # else computed in C order and copied in
    kernels.set_backend(name.split(",")[0])
    monkeypatch.setattr(kernels.policy, "USE_BLAS", kernels.policy.USE_BLAS and "tiled" not in name)
    sa, sb, dtype, (ha, hb), seed, shape, order = case
    r = np.random.default_rng(seed)
    a = layout(r.standard_normal(sa).astype(dtype), ha)
    b = layout(r.standard_normal(sb).astype(dtype), hb)
    out = empty_in_order(shape, dtype, order)
    strides = out.strides
    got = kernels.matmul(a, b, out=out)
    assert got is out and out.strides == strides
    expect = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_allclose(out, expect, **tol(dtype, sa[-1]))
    again = kernels.matmul(a, b, out=empty_in_order(shape, dtype, order))
    np.testing.assert_array_equal(again, out)  # the same numbers for the same layouts


@pytest.mark.parametrize("use_blas", [False, True])
def test_matmul_heads_written_in_merged_layout(use_blas, monkeypatch):
    # attention's A V written as (B, L, H, dk) memory under its (B, H, L, dk) shape, and a
    # gradient of K^T (B, H, dk, S) whose memory is (B, S, H, dk): column-major matrices
    kernels.set_backend("numba")
    monkeypatch.setattr(kernels.policy, "USE_BLAS", use_blas and kernels.policy.USE_BLAS)
    r = np.random.default_rng(3)
    B, H, L, S, dk = 4, 3, 5, 7, 8
    w = r.standard_normal((B, H, L, S)).astype(np.float32)
    v = r.standard_normal((B, S, H, dk)).astype(np.float32).transpose(0, 2, 1, 3)
    out = empty_in_order((B, H, L, dk), np.float32, (0, 2, 1, 3))
    kernels.matmul(w, v, out=out)
    np.testing.assert_allclose(out, np.matmul(w, v), rtol=1e-5, atol=1e-5)
    assert out.transpose(0, 2, 1, 3).flags.c_contiguous
    q = r.standard_normal((B, L, H, dk)).astype(np.float32).transpose(0, 2, 3, 1)  # Q^T
    gk = empty_in_order((B, H, dk, S), np.float32, (0, 3, 1, 2))
    kernels.matmul(q, w, out=gk)
    np.testing.assert_allclose(gk, np.matmul(q, w), rtol=1e-5, atol=1e-5)
    assert gk.transpose(0, 3, 1, 2).flags.c_contiguous


def test_matmul_out_errors():
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    with pytest.raises(ValueError, match=r"matmul: out has shape \(2, 5, 3\) and dtype "
                                         r"float32; the product of .* needs \(2, 3, 5\)"):
        kernels.matmul(a, b, out=np.empty((2, 5, 3), np.float32))
    with pytest.raises(ValueError, match=r"needs \(2, 3, 5\) and float32"):
        kernels.matmul(a, b, out=np.empty((2, 3, 5)))
    ro = np.empty((2, 3, 5), np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernels.matmul(a, b, out=ro)
    sq = np.ones((2, 4, 4), np.float32)
    with pytest.raises(ValueError, match="shares memory with an operand"):
        kernels.matmul(sq, sq, out=sq)
    with pytest.raises(TypeError, match="out must be a NumPy array, got list"):
        kernels.matmul(a, b, out=[])


def test_blas_is_the_path_of_products_and_is_deterministic():
    if not kernels.blas.available():
        pytest.skip("no OpenBLAS found: the tiled kernel does every product")
    kernels.set_backend("numba")
    r = np.random.default_rng(5)
    x = r.standard_normal((64, 20, 128), dtype=np.float32)
    w = r.standard_normal((2000, 128), dtype=np.float32)
    threads = kernels.blas._found[3]()
    out = kernels.matmul(x, w.T)
    assert kernels.blas._found[3]() == threads  # OpenBLAS's own thread count is restored
    np.testing.assert_array_equal(out.reshape(-1, 2000),
                                  kernels.blas.matmul(x.reshape(-1, 128), w.T))
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-3)
    # one thread or two, the same blocks and so the same numbers (run in a fresh process)
    code = ("import numpy as np; from minigrad import kernels; r = np.random.default_rng(5); "
            "x = r.standard_normal((1280, 128), dtype=np.float32); "
            "w = r.standard_normal((2000, 128), dtype=np.float32); "
            "import sys; sys.stdout.write(kernels.matmul(x, w.T).tobytes().hex()[:4000] + "
            "str(float(kernels.matmul(x.T.copy().T, w.T).sum())) + "
            "kernels.matmul(x.reshape(64, 20, 128), x.reshape(64, 20, 128).swapaxes(1, 2))"
            ".tobytes().hex()[-4000:] + kernels.matmul(x.T, x).tobytes().hex()[:4000] + "
            "kernels.addmm(w[:, 0].copy(), x, w.T).tobytes().hex()[-4000:] + "
            "kernels.matmul_and_sum(x, w[:128])[1].tobytes().hex() + "
            "kernels.matmul_and_sum(x.T.copy(), x)[1].tobytes().hex())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env=dict(os.environ, NUMBA_NUM_THREADS=t), check=True).stdout
            for t in ("1", "2")}
    assert len(outs) == 1


def test_matmul_weight_grad_transposed_view(backend):
    r = np.random.default_rng(1)
    g = r.standard_normal((1280, 512), dtype=np.float32)
    x = r.standard_normal((1280, 128), dtype=np.float32)
    np.testing.assert_allclose(kernels.matmul(g.T, x), g.T @ x, rtol=1e-4, atol=1e-3)


def test_matmul_edge_cases(backend):
    a = np.ones((2, 0, 3), np.float32)
    assert kernels.matmul(a, np.ones((3, 4), np.float32)).shape == (2, 0, 4)
    z = kernels.matmul(np.ones((2, 0)), np.ones((0, 3)))
    assert z.shape == (2, 3) and not z.any()
    i = np.arange(6).reshape(2, 3)
    assert kernels.matmul(i, i.T).dtype == i.dtype
    np.testing.assert_array_equal(kernels.matmul(i, i.T), i @ i.T)   # integers: exact
    one = kernels.matmul(np.full((1, 1), 3.0), np.full((1, 1), 2.0))
    assert one.shape == (1, 1) and one[0, 0] == 6.0
    # zero strides (broadcast_to) and negative strides (reversed views)
    r = np.random.default_rng(4)
    a = np.broadcast_to(r.standard_normal((1, 5, 3)), (4, 5, 3))
    b = np.broadcast_to(r.standard_normal((3, 1)), (3, 40))
    np.testing.assert_allclose(kernels.matmul(a, b), np.matmul(a, b), rtol=1e-12)
    c = r.standard_normal((6, 7, 9))[::-1, ::-2, ::-1]
    np.testing.assert_allclose(kernels.matmul(c, c.swapaxes(1, 2)), np.matmul(c, c.swapaxes(1, 2)),
                               rtol=1e-12)


@pytest.mark.parametrize("use_blas", [False, True])
def test_matmul_from_several_threads(use_blas, monkeypatch):
    # Packing buffers are reused between calls; each thread needs its own, since another
    # thread may run between packing an operand and multiplying it. Through BLAS, each
    # call sets and restores its thread's OpenBLAS thread count.
    kernels.set_backend("numba")
    monkeypatch.setattr(kernels.policy, "USE_BLAS", use_blas and kernels.policy.USE_BLAS)
    wrong = []

    def work(seed):
        r = np.random.default_rng(seed)
        a = layout(r.standard_normal((40, 64)).astype(np.float32), "transposed")  # packs A
        b = r.standard_normal((64, 100)).astype(np.float32)                       # packs B
        want = a @ b
        for _ in range(150):
            if not np.allclose(kernels.matmul(a, b), want, rtol=1e-4, atol=1e-4):
                wrong.append(seed)
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong, f"threads {wrong} got another thread's product"


def test_matmul_errors():
    with pytest.raises(ValueError, match=r"matmul: cannot multiply \(2, 3\) by \(4, 5\): "
                                         r"inner dimensions 3 and 4 differ"):
        kernels.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"batch dimensions \(2,\) and \(3,\)"):
        kernels.matmul(np.ones((2, 4, 5)), np.ones((3, 5, 6)))
    with pytest.raises(ValueError, match=r"at least 2 dimensions.*\(3,\)"):
        kernels.matmul(np.ones(3), np.ones((3, 2)))
    with pytest.raises(TypeError, match="matmul: dtypes differ: float32 and float64"):
        kernels.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float64))
    with pytest.raises(TypeError, match="unsupported dtype complex128"):
        kernels.matmul(np.ones((2, 2), complex), np.ones((2, 2), complex))


def test_backend_switch():
    kernels.set_backend("numpy")
    assert kernels.get_backend() == "numpy"
    with pytest.raises(ValueError, match="'cuda'"):
        kernels.set_backend("cuda")
    assert kernels.get_backend() == "numpy"


def test_backend_env_var():
    code = "from minigrad import kernels; print(kernels.get_backend())"
    env = dict(os.environ, MINIGRAD_BACKEND="numpy")
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.stdout.strip() == "numpy", run.stderr
    env["MINIGRAD_BACKEND"] = "fortran"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert run.returncode != 0 and "MINIGRAD_BACKEND" in run.stderr and "'fortran'" in run.stderr


# --------------------------------------------------------------- softmax ----
@st.composite
def logits(draw):
    lead = tuple(draw(st.lists(st.integers(1, 5), max_size=2)))
    n = draw(st.integers(1, 70))
    dtype = draw(st.sampled_from(DTYPES))
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = draw(st.sampled_from([1.0, 30.0, 1e4]))
    x = (r.standard_normal(lead + (n,)) * scale).astype(dtype)
    x[r.random(x.shape) < draw(st.sampled_from([0.0, 0.3]))] = -np.inf   # masked entries
    rows = x.reshape(-1, n)
    rows[r.random(len(rows)) < 0.2] = -np.inf                            # all -inf rows
    g = r.standard_normal(x.shape).astype(dtype)
    if draw(st.booleans()) and x.ndim >= 2:   # non-contiguous input
        x, g = layout(x, "strided"), layout(g, "strided")
    return x, g


def close(a, b, dtype):
    np.testing.assert_allclose(a, b, rtol=2e-5 if dtype == np.float32 else 1e-12,
                               atol=2e-6 if dtype == np.float32 else 1e-13)


@FAST
@given(case=logits())
@pytest.mark.parametrize("name", kernels.BACKENDS)
def test_softmax_matches_reference(name, case):
    kernels.set_backend(name)
    x, g = case
    dead = np.all(x == -np.inf, axis=-1)
    y = kernels.softmax(x)
    assert y.dtype == x.dtype and y.shape == x.shape and not np.isnan(y).any()
    close(y, ref.softmax(x.astype(np.float64)), x.dtype)
    np.testing.assert_allclose(y.sum(-1)[~dead], 1, rtol=1e-5)
    assert (y[dead] == 0).all() and (y[x == -np.inf] == 0).all()
    dx = kernels.softmax_backward(y, g)
    assert not np.isnan(dx).any()
    close(dx, ref.softmax_backward(y, g), x.dtype)


@FAST
@given(case=logits())
@pytest.mark.parametrize("name", kernels.BACKENDS)
def test_log_softmax_matches_reference(name, case):
    kernels.set_backend(name)
    x, g = case
    dead = np.all(x == -np.inf, axis=-1)
    y = kernels.log_softmax(x)
    assert y.dtype == x.dtype and not np.isnan(y).any()
    expect = ref.log_softmax(x.astype(np.float64))
    assert ((y == -np.inf) == (expect == -np.inf)).all()
    fin = np.isfinite(expect)
    # absolute error: |y| can reach 1e4, where float32 spacing is 1e-3
    np.testing.assert_allclose(y[fin], expect[fin], rtol=2e-6 if x.dtype == np.float32 else 1e-12,
                               atol=1e-5 if x.dtype == np.float32 else 1e-12)
    assert (y[dead] == -np.inf).all()
    dx = kernels.log_softmax_backward(y, g)
    assert not np.isnan(dx).any() and (dx[dead] == 0).all()
    close(dx, ref.log_softmax_backward(y, g), x.dtype)


@FAST
@given(n=st.integers(1, 70), rows=st.integers(1, 4), dtype=st.sampled_from(DTYPES),
       where=st.data())
@pytest.mark.parametrize("name", kernels.BACKENDS)
def test_softmax_nan_makes_its_row_nan(name, n, rows, dtype, where):
    # anywhere in the row: in the SIMD part of the row maximum or in its scalar tail
    kernels.set_backend(name)
    x = np.random.default_rng(n).standard_normal((rows, n)).astype(dtype)
    bad = where.draw(st.integers(0, rows - 1))
    x[bad, where.draw(st.integers(0, n - 1))] = np.nan
    with np.errstate(invalid="ignore"):
        for fn in (kernels.softmax, kernels.log_softmax):
            y = fn(x)
            assert np.isnan(y[bad]).all()
            assert not np.isnan(np.delete(y, bad, axis=0)).any()


@FAST
@given(n=st.integers(1, 70), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1),
       special=st.sampled_from([None, -np.inf, np.inf, np.nan]))
def test_row_max_matches_numpy(n, dtype, seed, special):
    # the SIMD maximum of softmax: full vectors, then a scalar tail; NaN wins, as in np.max
    r = np.random.default_rng(seed)
    row = r.standard_normal(n).astype(dtype)
    if special is not None:
        row[r.integers(0, n, size=r.integers(1, 3))] = special
    np.testing.assert_array_equal(_sm_module._row_max(row), np.max(row))


@settings(max_examples=200, deadline=None)
@given(x=st.floats(-200, 88, width=32) | st.sampled_from([-np.inf, np.inf, np.nan, 0.0]))
def test_fast_exp_matches_numpy(x):
    # float32 exp written in the kernels; documented for x <= 88 (softmax needs x <= 0)
    y = _exp_of(np.array([x], np.float32))[0]
    expect = np.exp(np.float64(x))
    if np.isnan(expect) or np.isinf(expect):
        np.testing.assert_equal(y, expect)
    elif expect < np.finfo(np.float32).tiny:   # below float32's normal range: exactly 0
        assert y == 0 or abs(y - expect) <= 1e-6 * np.finfo(np.float32).tiny
    else:
        assert abs(y - expect) <= 3e-7 * expect


@numba.njit(cache=False)
def _exp_of(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = _sm_module.fast_exp(x[i])
    return out


@settings(max_examples=200, deadline=None)
@given(x=st.floats(-200, 88, width=32) | st.sampled_from([-np.inf, np.nan, 0.0, -87.5, -88.0]))
def test_fast_exp_no_overflow_matches_numpy(x):
    # the exp of softmax's x - max and sigmoid's -|x|: defined for x <= 88
    y = _exp_no_overflow_of(np.array([x], np.float32))[0]
    expect = np.exp(np.float64(x))
    if np.isnan(expect):
        assert np.isnan(y)
    elif expect < np.finfo(np.float32).tiny:   # 0, or a denormal as close as fast_exp's 0
        assert 0 <= y <= 1.1 * expect
    else:
        assert abs(y - expect) <= 3e-7 * expect


@numba.njit(cache=False)
def _exp_no_overflow_of(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = fast_exp_no_overflow(x[i])
    return out


def test_softmax_extremes(backend):
    x = np.array([[1e4, -1e4, 0.0], [-np.inf, 5.0, -np.inf], [-np.inf] * 3], np.float32)
    np.testing.assert_allclose(kernels.softmax(x), [[1, 0, 0], [0, 1, 0], [0, 0, 0]])
    ly = kernels.log_softmax(x)
    np.testing.assert_allclose(ly[0], [0, -2e4, -1e4])
    assert ly[1, 1] == 0 and (ly[2] == -np.inf).all()
    assert (kernels.log_softmax_backward(ly, np.ones_like(x))[2] == 0).all()


@pytest.mark.parametrize("shape", [(3072, 24), (768, 2000)])
def test_softmax_model_shapes(backend, shape):
    x = np.random.default_rng(2).standard_normal(shape, dtype=np.float32) * 8
    close(kernels.softmax(x), ref.softmax(x.astype(np.float64)), np.float32)
    close(kernels.log_softmax(x), ref.log_softmax(x.astype(np.float64)), np.float32)


def test_softmax_gradients_by_finite_differences(backend):
    r = np.random.default_rng(3)
    x, g = r.standard_normal((2, 5)), r.standard_normal((2, 5))
    for fwd, bwd in [(kernels.softmax, kernels.softmax_backward),
                     (kernels.log_softmax, kernels.log_softmax_backward)]:
        dx = bwd(fwd(x), g)
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            e = np.zeros_like(x)
            e[idx] = 1e-6
            num[idx] = np.sum(g * (fwd(x + e) - fwd(x - e))) / 2e-6
        np.testing.assert_allclose(dx, num, rtol=1e-6, atol=1e-8)


def test_softmax_errors():
    with pytest.raises(TypeError, match="softmax: unsupported dtype int64"):
        kernels.softmax(np.arange(3))
    with pytest.raises(ValueError, match=r"softmax_backward: output of shape \(2, 3\) and "
                                         r"gradient of shape \(3, 2\) differ"):
        kernels.softmax_backward(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(TypeError, match="log_softmax_backward: dtypes differ: float32 and float64"):
        kernels.log_softmax_backward(np.ones(3, np.float32), np.ones(3))
    with pytest.raises(ValueError, match="log_softmax: expected at least 1 dimension"):
        kernels.log_softmax(np.array(1.0))


# --------------------------------------------------------------- dropout ----
@FAST
@given(shape=st.lists(st.integers(1, 9), min_size=1, max_size=3),
       p=st.floats(0, 0.95), seed=st.integers(0, 2**64 - 1), dtype=st.sampled_from(DTYPES))
def test_dropout_mask_identical_between_backends(shape, p, seed, dtype):
    masks = []
    for name in kernels.BACKENDS:
        kernels.set_backend(name)
        masks.append(kernels.dropout_mask(shape, p, seed, dtype))
        x = np.random.default_rng(seed % 2**32).standard_normal(shape).astype(dtype)
        np.testing.assert_array_equal(kernels.dropout(x, p, seed), x * masks[-1])
    np.testing.assert_array_equal(masks[0], masks[1])
    assert masks[0].dtype == dtype and masks[0].shape == tuple(shape)
    assert set(np.unique(masks[0])) <= {0, dtype(1 / (1 - p))}


def test_dropout_statistics_and_determinism(backend):
    for p in (0.1, 0.5):
        m = kernels.dropout_mask((1000, 1000), p, seed=7, dtype=np.float64)
        assert abs((m > 0).mean() - (1 - p)) < 3e-3
        assert abs(m.mean() - 1) < 6e-3
        np.testing.assert_array_equal(m, kernels.dropout_mask((1000, 1000), p, 7, np.float64))
        assert (m != kernels.dropout_mask((1000, 1000), p, 8, np.float64)).any()
    x = np.random.default_rng(0).standard_normal((64, 20, 128)).astype(np.float32)
    np.testing.assert_array_equal(kernels.dropout(x, 0.0, 5), x)
    # backward = dropout of the gradient with the same seed
    g = np.ones_like(x)
    np.testing.assert_array_equal(kernels.dropout(g, 0.1, 5) * x, kernels.dropout(x, 0.1, 5))
    xt = x.transpose(2, 0, 1)   # non-contiguous: the flat C-order index decides
    np.testing.assert_array_equal(kernels.dropout(xt, 0.3, 1),
                                  xt * kernels.dropout_mask(xt.shape, 0.3, 1, np.float32))


def test_dropout_same_for_any_thread_count():
    kernels.set_backend("numba")
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = kernels.dropout_mask((300, 1001), 0.2, 42, np.float32)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one, kernels.dropout_mask((300, 1001), 0.2, 42, np.float32))


def test_dropout_mask_constants_kept_per_p_and_dtype_match_the_reference():
    # the entry points keep each (p, dtype)'s threshold and scale, and start over past a
    # bound: more pairs than it holds, each asked twice, the second time from the store
    kernels.set_backend("numba")
    ps = np.linspace(0.0, 0.9, dropout_ops._CONSTANTS_MAX + 7)
    for shape in (5, np.int64(5), (5,)):   # an int, a NumPy integer and a tuple alike
        for i, p in enumerate(ps):
            dtype = (np.float32, np.float64)[i % 2]
            want = ref.dropout_mask((5,), float(p), i, np.dtype(dtype))
            for _ in range(2):
                got = kernels.dropout_mask(shape, p, i, dtype)
                assert got.dtype == dtype and got.tobytes() == want.tobytes()
    assert len(dropout_ops._constants) <= dropout_ops._CONSTANTS_MAX


def test_dropout_errors():
    x = np.ones(4, np.float32)
    with pytest.raises(ValueError, match=r"dropout: p must be in \[0, 1\), got 1.0"):
        kernels.dropout(x, 1.0, 0)
    with pytest.raises(ValueError, match="p must be in"):
        kernels.dropout_mask((2,), -0.1, 0)
    with pytest.raises(ValueError, match=r"seed must be in \[0, 2\*\*64\)"):
        kernels.dropout(x, 0.5, -1)
    with pytest.raises(ValueError, match="seed must be in"):
        kernels.dropout(x, 0.5, 2**64)
    with pytest.raises(TypeError, match="dropout: seed must be an integer"):
        kernels.dropout(x, 0.5, 1.5)
    with pytest.raises(TypeError, match="dropout: unsupported dtype int64"):
        kernels.dropout(np.arange(4), 0.5, 0)
