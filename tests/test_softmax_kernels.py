"""The softmax kernels on rows long enough for every part of the row maxima (log-softmax's
four chains of full vectors, one more vector at a time, the overlapping last vector; the
single chain; the scalar rows below one vector), against NumPy and the references; the
shorter rows, and the module's other functions, are tested in test_kernels.py."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from minigrad.kernels import reference as ref
from minigrad.kernels import softmax_kernels as sm

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]


@FAST
@given(n=st.integers(1, 400), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1),
       special=st.sampled_from([None, -np.inf, np.inf, np.nan]))
def test_row_max_matches_numpy(n, dtype, seed, special):
    r = np.random.default_rng(seed)
    row = r.standard_normal(n).astype(dtype)
    if special is not None:
        row[r.integers(0, n, size=r.integers(1, 3))] = special
    for row_max in (sm._row_max, sm._long_row_max):
        np.testing.assert_array_equal(row_max(row), np.max(row))
        # the largest value at each place of the row: in every chain, the last vector, the tail
        for j in range(n):
            peak = row.copy()
            peak[j] = np.inf if special is np.inf else 100
            np.testing.assert_array_equal(row_max(peak), np.max(peak))


@st.composite
def long_rows(draw):
    rows, n = draw(st.integers(1, 6)), draw(st.integers(60, 400))
    dtype = draw(st.sampled_from(DTYPES))
    r = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = (r.standard_normal((rows, n)) * draw(st.sampled_from([1.0, 8.0, 1e3]))).astype(dtype)
    x[r.random(x.shape) < draw(st.sampled_from([0.0, 0.3]))] = -np.inf
    x[r.random(rows) < 0.2] = -np.inf
    return x, r.standard_normal(x.shape).astype(dtype)


def _both_twins(kernels, *args):
    """The parallel and the serial twin's outputs, which must be the same bits."""
    outs = []
    for kernel in kernels:
        out = np.empty_like(args[0])
        kernel(*args, out)
        outs.append(out)
    np.testing.assert_array_equal(outs[0], outs[1])
    return outs[0]


@FAST
@given(case=long_rows())
def test_long_rows_match_reference(case):
    x, g = case
    f32 = x.dtype == np.float32
    tol = dict(rtol=2e-5 if f32 else 1e-12, atol=2e-6 if f32 else 1e-13)
    x64 = x.astype(np.float64)
    y = _both_twins((sm.softmax_2d, sm.softmax_2d_serial), x)
    np.testing.assert_allclose(y, ref.softmax(x64), **tol)
    dx = _both_twins((sm.softmax_backward_2d, sm.softmax_backward_2d_serial), y, g)
    np.testing.assert_allclose(dx, ref.softmax_backward(y, g), **tol)
    ly = _both_twins((sm.log_softmax_2d, sm.log_softmax_2d_serial), x)
    expect = ref.log_softmax(x64)
    assert ((ly == -np.inf) == (expect == -np.inf)).all()
    fin = np.isfinite(expect)
    np.testing.assert_allclose(ly[fin], expect[fin], rtol=2e-6 if f32 else 1e-12,
                               atol=1e-5 if f32 else 1e-12)
    ldx = _both_twins((sm.log_softmax_backward_2d, sm.log_softmax_backward_2d_serial), ly, g)
    np.testing.assert_allclose(ldx, ref.log_softmax_backward(ly, g), **tol)
    assert (ldx[(x == -np.inf).all(-1)] == 0).all()


@FAST
@given(rows=st.integers(1, 3), n=st.integers(1000, 2100), dtype=st.sampled_from(DTYPES),
       seed=st.integers(0, 2**32 - 1), scale=st.sampled_from([1.0, 8.0, 1e3]),
       special=st.sampled_from([None, -np.inf, np.nan, "all -inf", "tiny"]))
def test_softmax_rows_alone_in_a_block(rows, n, dtype, seed, scale, special):
    # rows longer than half a block (1,024 entries) go one by one through _softmax_long_row;
    # rows of 1,000-1,024 still through _softmax_block (two to a block)
    r = np.random.default_rng(seed)
    x = (r.standard_normal((rows, n)) * scale).astype(dtype)
    if special == "all -inf":
        x[0] = -np.inf
    elif special == "tiny":   # x - max in exp's denormal range, and below it
        x[0, :3] = x[0].max() - np.array([87.5, 87.9, 90.0], dtype)
    elif special is not None:
        x[0, r.integers(0, n, size=3)] = special
    g = r.standard_normal(x.shape).astype(dtype)
    f32 = dtype == np.float32
    tol = dict(rtol=2e-5 if f32 else 1e-12, atol=2e-6 if f32 else 1e-13)
    with np.errstate(invalid="ignore"):
        y = _both_twins((sm.softmax_2d, sm.softmax_2d_serial), x)
        want = ref.softmax(x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    np.testing.assert_allclose(y, want, **tol)
    if special == "all -inf":
        assert (y[0] == 0).all()
    # each row as in a batch of one: a row's values do not depend on its neighbours
    alone = np.empty_like(x[-1:])
    sm.softmax_2d_serial(x[-1:], alone)
    np.testing.assert_array_equal(alone, y[-1:])
    dx = _both_twins((sm.softmax_backward_2d, sm.softmax_backward_2d_serial), y, g)
    np.testing.assert_allclose(dx, ref.softmax_backward(y, g), **tol)


@FAST
@given(n=st.integers(1, 400), seed=st.integers(0, 2**32 - 1), dtype=st.sampled_from(DTYPES))
def test_nan_rows(n, seed, dtype):
    # a NaN anywhere: the forward's row is NaN; the backward's NaN stays where y has it,
    # beside -inf entries too (not an all -inf row), and the others match the reference
    r = np.random.default_rng(seed)
    x = r.standard_normal((3, n)).astype(dtype)
    y = ref.log_softmax(x)   # log-probabilities, for the backward
    x[1] = y[1] = -np.inf
    for row in (0, 1):
        x[row, r.integers(0, n)] = y[row, r.integers(0, n)] = np.nan
    g = r.standard_normal(x.shape).astype(dtype)
    with np.errstate(invalid="ignore"):
        for fwd in ((sm.softmax_2d, sm.softmax_2d_serial),
                    (sm.log_softmax_2d, sm.log_softmax_2d_serial)):
            out = _both_twins(fwd, x)
            assert np.isnan(out[:2]).all() and not np.isnan(out[2]).any()
        dx = _both_twins((sm.log_softmax_backward_2d, sm.log_softmax_backward_2d_serial), y, g)
        np.testing.assert_array_equal(np.isnan(dx), np.isnan(y))
        np.testing.assert_allclose(dx, ref.log_softmax_backward(y, g),
                                   rtol=2e-5 if dtype == np.float32 else 1e-12,
                                   atol=2e-6 if dtype == np.float32 else 1e-13)


NEG_NAN = np.copysign(np.nan, -1.0)


SPECIALS = [None, 87.9, 88.0, 88.5, 100.0, np.inf, np.nan, NEG_NAN, "all -inf",
            "-inf and -nan"]


@FAST
@given(n=st.integers(1, 300), dtype=st.sampled_from(DTYPES), seed=st.integers(0, 2**32 - 1))
def test_log_softmax_backward_checks_in_its_pass(n, dtype, seed):
    # the gradient's pass tells from y's bits whether a row needs the checked row function
    # (a y of 88 or more, +inf, a NaN with its sign bit clear, an all -inf row): the values
    # are that function's bit for bit, except beside a NaN whose sign bit is set
    r = np.random.default_rng(seed)
    for special in SPECIALS:
        y = ref.log_softmax(r.standard_normal((4, n))).astype(dtype)
        g = r.standard_normal(y.shape).astype(dtype)
        rows = r.integers(0, 4, size=2)
        if special == "all -inf":
            y[rows] = -np.inf
        elif special == "-inf and -nan":
            y[rows] = -np.inf
            y[rows, r.integers(0, n)] = NEG_NAN
        elif special is not None:
            y[rows, r.integers(0, n, size=2)] = special
        with np.errstate(invalid="ignore", over="ignore"):
            dx = _both_twins((sm.log_softmax_backward_2d, sm.log_softmax_backward_2d_serial),
                             y, g)
            checked = np.empty_like(y)
            for i in range(len(y)):
                sm._log_softmax_backward_row_checked(y[i], g[i], checked[i])
            expect = ref.log_softmax_backward(y, g)
        np.testing.assert_array_equal(np.isnan(dx), np.isnan(expect))
        if special is NEG_NAN or special == "-inf and -nan":
            np.testing.assert_allclose(dx, expect, rtol=2e-5 if dtype == np.float32 else 1e-12,
                                       atol=2e-6 if dtype == np.float32 else 1e-13)
        else:
            np.testing.assert_array_equal(dx, checked)
        if special == "all -inf":
            assert (dx[rows] == 0).all()
