"""The kernels of the fused memory-bound ops, each against its NumPy reference on random shapes.

Embedding backward (a scatter-add of rows), ReLU followed by dropout, cross entropy with label
smoothing, and dropout + residual add + layer norm. Kernels that run rows in parallel are also
checked serial against parallel (kernels.policy.PARALLEL_MIN_WORK decides which runs): the dropout
masks are a hash of the element index, so both give the same numbers.
"""
import functools
import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels
from minigrad.kernels import reference as ref

from kernel_variants import ALWAYS_SERIAL, both_variants, restore_kernel_settings  # noqa: F401 (autouse fixture)

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]


# ---------------------------------------------------------- embedding backward ----
@FAST
@given(n=st.integers(0, 300), d=st.integers(1, 40), v=st.integers(1, 50),
       dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_embedding_backward_matches_add_at(n, d, v, dtype, seed):
    r = np.random.default_rng(seed)
    ids = r.integers(0, v, n)
    g = r.standard_normal((n, d)).astype(dtype)
    got = kernels.embedding_backward(ids, g, v)
    assert got.dtype == dtype and got.shape == (v, d)
    # the same additions in the same order: equal bit for bit
    np.testing.assert_array_equal(got, ref.embedding_backward(ids, g, v))
    kernels.set_backend("numpy")
    np.testing.assert_array_equal(kernels.embedding_backward(ids, g, v), got)


def test_embedding_backward_errors():
    g = np.ones((2, 3), np.float32)
    with pytest.raises(IndexError, match="embedding_backward: id 5 is out of range for a table of 4 rows"):
        kernels.embedding_backward(np.array([1, 5]), g, 4)
    with pytest.raises(ValueError, match=r"embedding_backward: expected ids \(N,\) and grad \(N, D\)"):
        kernels.embedding_backward(np.array([1, 2, 3]), g, 4)
    with pytest.raises(TypeError, match="embedding_backward: ids must be integers"):
        kernels.embedding_backward(np.array([1.0, 2.0]), g, 4)


# ------------------------------------------------------------ relu then dropout ----
def _array(r, shape, dtype):
    x = r.standard_normal(shape).astype(dtype)
    x.reshape(-1)[: x.size // 7] = 0.0    # exact zeros: ReLU's boundary
    return x


@FAST
@given(shape=st.lists(st.integers(0, 40), min_size=0, max_size=3),
       p=st.sampled_from([0.0, 0.1, 0.5, 0.9]), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**63 - 1))
def test_relu_dropout_matches_reference(shape, p, dtype, seed):
    r = np.random.default_rng(seed % 2**32)
    x = _array(r, tuple(shape), dtype)
    serial, parallel = both_variants(kernels.relu_dropout, x, p, seed)
    want = ref.relu_dropout(x, p, seed)
    np.testing.assert_array_equal(serial, want)
    np.testing.assert_array_equal(parallel, want)
    # the very numbers of relu followed by the dropout kernel
    np.testing.assert_array_equal(serial, kernels.dropout(np.asarray(np.maximum(x, 0)), p, seed))
    g = r.standard_normal(x.shape).astype(dtype)
    bs, bp = both_variants(kernels.relu_dropout_backward, serial, g, p)
    bwant = ref.relu_dropout_backward(serial, g, p)
    np.testing.assert_array_equal(bs, bwant)
    np.testing.assert_array_equal(bp, bwant)
    # backward = relu's backward of dropout's backward (dropout applied to g with the same seed)
    np.testing.assert_array_equal(bs, np.where(np.maximum(x, 0) > 0,
                                               kernels.dropout(g, p, seed), 0))


def test_relu_dropout_nan_and_errors():
    x = np.array([np.nan, -1.0, 2.0, -0.0], np.float32)
    np.testing.assert_array_equal(kernels.relu_dropout(x, 0.0, 1), np.maximum(x, 0))
    with pytest.raises(ValueError, match=r"relu_dropout: p must be in \[0, 1\), got 1.0"):
        kernels.relu_dropout(x, 1.0, 1)
    with pytest.raises(ValueError, match="relu_dropout_backward: output of shape"):
        kernels.relu_dropout_backward(x, x[:2], 0.1)
    with pytest.raises(TypeError, match="relu_dropout: unsupported dtype int64"):
        kernels.relu_dropout(np.arange(3), 0.1, 1)


# -------------------------------------------------------------------- cross entropy ----
@FAST
@given(n=st.integers(1, 40), c=st.integers(1, 300), dtype=st.sampled_from(DTYPES),
       eps=st.sampled_from([0.0, 0.1, 1.0]), scale=st.sampled_from([1.0, 30.0]),
       masked=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_cross_entropy_matches_reference(n, c, dtype, eps, scale, masked, seed):
    r = np.random.default_rng(seed)
    x = (r.standard_normal((n, c)) * scale).astype(dtype)
    target = r.integers(0, c, n)
    if masked:   # -inf logits away from the target; with smoothing the loss is then inf
        x[r.random(x.shape) < 0.3] = -np.inf
        x[np.arange(n), target] = r.standard_normal(n)
    w = r.standard_normal(n)
    w[r.random(n) < 0.2] = 0.0   # ignored rows
    (loss_s, stats_s), (loss_p, stats_p) = both_variants(kernels.cross_entropy, x, target, eps)
    loss_r, stats_r = ref.cross_entropy(x, target, eps)
    tol = dict(rtol=2e-5, atol=2e-5 * scale) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-11 * scale)
    for loss, stats in ((loss_s, stats_s), (loss_p, stats_p)):
        assert loss.dtype == np.float64 and stats.dtype == dtype
        np.testing.assert_allclose(loss, loss_r, **tol)
        np.testing.assert_allclose(stats, stats_r, **tol)
    # the loss of the log-softmax reference, as the unfused op computed it
    logp = ref.log_softmax(x.astype(np.float64))
    want = -(1 - eps) * logp[np.arange(n), target] - (eps / c * logp.sum(axis=1) if eps else 0)
    np.testing.assert_allclose(loss_s, want, **tol)
    gs, gp = both_variants(kernels.cross_entropy_backward, x, target, stats_s, w, eps)
    gr = ref.cross_entropy_backward(x, target, stats_s, w, eps)
    np.testing.assert_array_equal(gs, gp)   # the same row code: the same bits
    assert gs.dtype == dtype
    np.testing.assert_allclose(gs, gr, rtol=tol["rtol"], atol=tol["rtol"])
    q = np.full((n, c), eps / c) + (1 - eps) * (np.arange(c) == target[:, None])
    np.testing.assert_allclose(gs, w[:, None] * (np.exp(logp) - q), rtol=tol["rtol"],
                               atol=tol["rtol"])


@FAST
@given(n=st.integers(1, 8), c=st.integers(1, 200), dtype=st.sampled_from(DTYPES),
       nans=st.integers(0, 2), seed=st.integers(0, 2**32 - 1))
def test_cross_entropy_row_max_is_numpys_max(n, c, dtype, nans, seed):
    """The forward pass's row maximum (stats[:, 0]) in its vector chains, for every length
    around the vectors' widths: exactly np.max, a NaN anywhere in a row included."""
    r = np.random.default_rng(seed)
    x = (r.standard_normal((n, c)) * 10).astype(dtype)
    x[r.integers(0, n, nans), r.integers(0, c, nans)] = np.nan
    for stats in (v[1] for v in both_variants(kernels.cross_entropy, x, np.zeros(n, np.int64))):
        np.testing.assert_array_equal(stats[:, 0], x.max(axis=1))


def test_cross_entropy_kernel_edge_cases_and_errors():
    x = np.array([[-np.inf, -np.inf], [np.nan, 1.0], [1e4, -1e4]], np.float32)
    loss, stats = kernels.cross_entropy(x, np.array([0, 1, 0]), 0.0)
    assert loss[0] == np.inf and np.isnan(loss[1]) and loss[2] == 0.0
    g = kernels.cross_entropy_backward(x, np.array([0, 1, 0]), stats, np.ones(3), 0.0)
    np.testing.assert_array_equal(g[0], [-1.0, 0.0])   # p = 0 everywhere: only -onehot
    assert np.isnan(g[1]).all() and (g[2] == 0).all()
    with pytest.raises(IndexError, match="cross_entropy: target 5 is out of range for 2 classes"):
        kernels.cross_entropy(x, np.array([0, 5, 1]))
    with pytest.raises(ValueError, match=r"cross_entropy: expected logits \(N, C\) and target \(N,\)"):
        kernels.cross_entropy(x, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"cross_entropy: label_smoothing must be in \[0, 1\]"):
        kernels.cross_entropy(x, np.array([0, 1, 1]), 1.5)
    with pytest.raises(ValueError, match=r"cross_entropy_backward: expected stats \(3, 2\)"):
        kernels.cross_entropy_backward(x, np.array([0, 1, 1]), stats[:2], np.ones(3))


# ------------------------------------------------------- dropout + add + layer norm ----
@FAST
@given(n=st.integers(0, 60), d=st.integers(1, 200), dtype=st.sampled_from(DTYPES),
       p=st.sampled_from([0.0, 0.1, 0.5]), affine=st.sampled_from(["both", "weight", "none"]),
       seed=st.integers(0, 2**63 - 1))
def test_dropout_add_layer_norm_matches_the_separate_kernels(n, d, dtype, p, affine, seed):
    r = np.random.default_rng(seed % 2**32)
    x, s = (r.standard_normal((n, d)).astype(dtype) for _ in range(2))
    w = r.standard_normal(d).astype(dtype) if affine != "none" else None
    b = r.standard_normal(d).astype(dtype) if affine == "both" else None
    for threshold in (ALWAYS_SERIAL, 0):
        kernels.policy.PARALLEL_MIN_WORK = threshold
        got = kernels.dropout_add_layer_norm(x, s, p, seed, w, b, 1e-5)
        # bit for bit what the three kernels give one after the other
        want = kernels.layer_norm(x + kernels.dropout(s, p, seed), w, b, 1e-5)
        for a, c in zip(got, want):
            assert a.dtype == dtype
            np.testing.assert_array_equal(a, c)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for a, c in zip(got, ref.dropout_add_layer_norm(x, s, p, seed, w, b, 1e-5)):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol)


@FAST
@given(n=st.integers(0, 60), d=st.integers(1, 200), dtype=st.sampled_from(DTYPES),
       p=st.sampled_from([0.0, 0.1, 0.5]), weighted=st.booleans(),
       seed=st.integers(0, 2**63 - 1))
def test_dropout_add_layer_norm_backward_matches_the_separate_kernels(n, d, dtype, p, weighted,
                                                                      seed):
    r = np.random.default_rng(seed % 2**32)
    x, s, g = (r.standard_normal((n, d)).astype(dtype) for _ in range(3))
    w = r.standard_normal(d).astype(dtype) if weighted else None
    _, xhat, rstd = kernels.dropout_add_layer_norm(x, s, p, seed, w, None, 1e-5)
    for threshold in (ALWAYS_SERIAL, 0):   # (the weight's partial sums: one, or a thread's)
        kernels.policy.PARALLEL_MIN_WORK = threshold
        got = kernels.dropout_add_layer_norm_backward(g, xhat, rstd, w, p, seed)
        # bit for bit layer norm's backward kernel, then the dropout kernel on its dx
        dx, dw, db = kernels.layer_norm_backward(g, xhat, rstd, w)
        for a, c in zip(got, (dx, kernels.dropout(dx, p, seed), dw, db)):
            assert a.dtype == dtype and a.shape == c.shape
            np.testing.assert_array_equal(a, c)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    # dx is rstd times a difference of terms of g * w: its rounding grows with rstd, which
    # eps alone sets where a row's values are all equal (d = 1: 1 / sqrt(1e-5) = 316)
    scale = max(1.0, float(rstd.max())) if rstd.size else 1.0
    for a, c in zip(got, ref.dropout_add_layer_norm_backward(g, xhat, rstd, w, p, seed)):
        np.testing.assert_allclose(a, c, rtol=tol, atol=tol * scale)


def test_dropout_add_layer_norm_errors():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"dropout_add_layer_norm: expected x and s of one shape"):
        kernels.dropout_add_layer_norm(x, x[:1], 0.1, 1, None, None, 1e-5)
    with pytest.raises(ValueError, match=r"dropout_add_layer_norm: weight of shape \(2,\)"):
        kernels.dropout_add_layer_norm(x, x, 0.1, 1, np.ones(2, np.float32), None, 1e-5)
    with pytest.raises(TypeError, match="dropout_add_layer_norm: dtypes differ"):
        kernels.dropout_add_layer_norm(x, x.astype(np.float64), 0.1, 1, None, None, 1e-5)
    with pytest.raises(ValueError, match=r"dropout_add_layer_norm: p must be in \[0, 1\)"):
        kernels.dropout_add_layer_norm(x, x, 1.0, 1, None, None, 1e-5)
    rstd = np.ones((2, 1), np.float32)
    op = "dropout_add_layer_norm_backward"
    with pytest.raises(ValueError, match=rf"{op}: expected grad and x_hat of one shape"):
        kernels.dropout_add_layer_norm_backward(x, x[:1], rstd, None, 0.1, 1)
    with pytest.raises(ValueError, match=rf"{op}: expected .* and rstd \(N, 1\), got .*\(3, 1\)"):
        kernels.dropout_add_layer_norm_backward(x, x, np.ones((3, 1), np.float32), None, 0.1, 1)
    with pytest.raises(TypeError, match=f"{op}: dtypes differ"):
        kernels.dropout_add_layer_norm_backward(x, x.astype(np.float64), rstd, None, 0.1, 1)
    with pytest.raises(ValueError, match=rf"{op}: weight of shape \(2,\)"):
        kernels.dropout_add_layer_norm_backward(x, x, rstd, np.ones(2, np.float32), 0.1, 1)
    with pytest.raises(ValueError, match=rf"{op}: p must be in \[0, 1\)"):
        kernels.dropout_add_layer_norm_backward(x, x, rstd, None, 1.0, 1)


# ------------------------------------------------ attention: mask, softmax, dropout ----
@st.composite
def attention_scores(draw):
    """(x, allowed, g): scores (..., S), a bool mask broadcastable to them (or None), a gradient."""
    lead = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    s = draw(st.integers(1, 40))
    dtype = draw(st.sampled_from(DTYPES))
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (r.standard_normal(lead + (s,)) * draw(st.sampled_from([1.0, 30.0]))).astype(dtype)
    shape = lead + (s,)
    allowed = None
    if draw(st.booleans()):   # a mask of the full shape or with broadcast (size-1) dims
        mshape = tuple(1 if draw(st.booleans()) else n for n in shape)
        allowed = r.random(mshape) < draw(st.sampled_from([0.0, 0.5, 0.9]))
    return x, allowed, r.standard_normal(shape).astype(dtype)


@FAST
@given(case=attention_scores(), p=st.sampled_from([0.0, 0.1, 0.5]),
       seed=st.integers(0, 2**63 - 1))
def test_masked_softmax_dropout_matches_the_separate_kernels(case, p, seed):
    x, allowed, g = case
    blocked = None if allowed is None else ~np.broadcast_to(allowed, x.shape)
    for threshold in (ALWAYS_SERIAL, 0):
        kernels.policy.PARALLEL_MIN_WORK = threshold
        y, out = kernels.masked_softmax_dropout(x, allowed, p, seed)
        dx = kernels.masked_softmax_dropout_backward(y, g, allowed, p, seed)
        # bit for bit: masked_fill, softmax and dropout kernels in turn, and their backward
        ym = kernels.softmax(x if blocked is None else np.where(blocked, x.dtype.type(-np.inf), x))
        np.testing.assert_array_equal(y, ym)
        np.testing.assert_array_equal(out, kernels.dropout(ym, p, seed) if p else ym)
        want = kernels.softmax_backward(ym, kernels.dropout(g, p, seed) if p else g)
        if blocked is not None:
            want = np.where(blocked, 0, want)
        np.testing.assert_array_equal(dx, want)
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    kernels.set_backend("numpy")
    y_r, out_r = kernels.masked_softmax_dropout(x, allowed, p, seed)
    np.testing.assert_allclose(y, y_r, rtol=tol, atol=tol)
    np.testing.assert_allclose(out, out_r, rtol=tol, atol=tol)
    np.testing.assert_allclose(dx, kernels.masked_softmax_dropout_backward(y_r, g, allowed, p, seed),
                               rtol=tol * 10, atol=tol * 10)


def test_masked_softmax_dropout_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match=r"masked_softmax_dropout: mask of shape \(4,\) does not broadcast"):
        kernels.masked_softmax_dropout(x, np.ones(4, bool))
    with pytest.raises(TypeError, match="masked_softmax_dropout: allowed must be a bool array"):
        kernels.masked_softmax_dropout(x, np.ones(3))
    with pytest.raises(ValueError, match="masked_softmax_dropout_backward: output of shape"):
        kernels.masked_softmax_dropout_backward(x, x[:1])
    with pytest.raises(ValueError, match=r"masked_softmax_dropout: the last dim of the input "
                                         r"of shape \(2, 0\) has size 0"):
        kernels.masked_softmax_dropout(np.zeros((2, 0), np.float32))
    for shape in ((0, 3), (0, 0), (2, 0, 4)):   # no rows at all: empty results
        y, out = kernels.masked_softmax_dropout(np.zeros(shape, np.float32), np.ones(shape, bool), 0.1, 1)
        assert y.shape == out.shape == shape


@FAST
@given(shape=st.lists(st.integers(0, 40), min_size=0, max_size=3), dtype=st.sampled_from(DTYPES),
       p=st.sampled_from([0.0, 0.1, 0.5]), seed=st.integers(0, 2**63 - 1))
def test_dropout_add_matches_the_separate_kernels(shape, dtype, p, seed):
    r = np.random.default_rng(seed % 2**32)
    x, s = (r.standard_normal(tuple(shape)).astype(dtype) for _ in range(2))
    want = x + kernels.dropout(s, p, seed)
    for got in both_variants(kernels.dropout_add, x, s, p, seed):
        assert got.dtype == dtype and got.shape == x.shape
        np.testing.assert_array_equal(got, want)   # bit for bit: no multiply-add
    np.testing.assert_array_equal(ref.dropout_add(x, s, p, seed), want)
    with pytest.raises(ValueError, match="dropout_add: x of shape"):
        kernels.dropout_add(x, np.zeros(x.size + 1, dtype), p, seed)


# ------------------------------------------------------------- softmax in blocks ----
_sm = importlib.import_module("minigrad.kernels.softmax_kernels")


@functools.lru_cache(maxsize=None)
def _row_by_row_softmax():
    # compiled once for the whole test, not once per example
    from numba import njit

    @njit(fastmath=kernels.FASTMATH)   # as the kernels are compiled
    def row_by_row(x, y):
        for i in range(x.shape[0]):
            _sm._softmax_block(x, y, i, i + 1)   # a block of one row
    return row_by_row


@FAST
@given(rows=st.integers(1, 300), n=st.integers(1, 150), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**32 - 1))
def test_softmax_in_blocks_gives_the_bits_of_the_row_by_row_kernel(rows, n, dtype, seed):
    # the blocked kernel (exp over a whole block at once) against blocks of one row
    row_by_row = _row_by_row_softmax()
    r = np.random.default_rng(seed)
    x = (r.standard_normal((rows, n)) * 10).astype(dtype)
    x[r.random(x.shape) < 0.2] = -np.inf
    x[r.random(rows) < 0.1] = -np.inf
    want = np.empty_like(x)
    row_by_row(x, want)
    for got in both_variants(kernels.softmax, x):
        np.testing.assert_array_equal(got, want)


# ----------------------------------------------------------------- determinism ----
def test_fused_kernels_give_the_same_numbers_on_1_and_2_threads():
    import numba
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("Numba has one thread here (NUMBA_NUM_THREADS=1)")
    kernels.policy.PARALLEL_MIN_WORK = 0
    r = np.random.default_rng(12)
    x, s, g = (r.standard_normal((300, 64)).astype(np.float32) for _ in range(3))
    w = r.standard_normal(64).astype(np.float32)
    target, allowed = r.integers(0, 64, 300), r.random((300, 64)) < 0.8

    def run():
        ce, stats = kernels.cross_entropy(x, target, 0.1)
        y, out = kernels.masked_softmax_dropout(x, allowed, 0.1, 3)
        return [kernels.relu_dropout(x, 0.1, 3), kernels.dropout_add(x, s, 0.1, 3),
                *kernels.dropout_add_layer_norm(x, s, 0.1, 3, w, w, 1e-5), ce, stats,
                kernels.cross_entropy_backward(x, target, stats, np.ones(300), 0.1), y, out,
                kernels.masked_softmax_dropout_backward(y, g, allowed, 0.1, 3)]

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = run()
        numba.set_num_threads(2)
        two = run()
    finally:
        numba.set_num_threads(before)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
