"""The compiled random fills (kernels/normal_fill.py, uniform_fill.py, fma.py) against their
NumPy references, on random sizes and seeds: the same bits. (That both equal PyTorch's draws
is tests/test_rng_pytorch.py's.)"""
import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad import normal_avx
from minigrad import random_draws as draws
from minigrad.kernels import fma, normal_fill, uniform_fill
from minigrad.random import Generator

# below 16 (the pair path), exactly 16, and sizes not multiples of 8 or 16
_sizes = st.one_of(st.sampled_from([1, 7, 8, 15, 16, 17, 24, 31, 32, 33, 40, 255]),
                   st.integers(1, 600))
_seeds = st.integers(0, 2 ** 32 - 1)
_params = st.sampled_from([(0.0, 1.0), (0.3, 1.7), (-2.5, 0.01), (1e3, 3e-3)])


def _words(seed, n):
    return np.random.default_rng(seed).integers(0, 2 ** 32, n, dtype=np.uint64)


def _two(seed):
    return Generator().manual_seed(seed), Generator().manual_seed(seed)


@settings(max_examples=60, deadline=None)
@given(n=_sizes, seed=_seeds, params=_params)
def test_normal32_is_the_avx_transcription(n, seed, params):
    n = max(n, 16)
    mean, std = params
    tail = 16 if n % 16 else 0
    words = _words(seed, n + tail)
    u = (words & np.uint64(2 ** 24 - 1)).astype(np.float32) * np.float32(2.0 ** -24)
    want = u[:n].copy()
    full = n // 16 * 16
    want[:full] = normal_avx.box_muller_16(want[:full].reshape(-1, 16), mean, std).reshape(-1)
    if tail:
        want[n - 16:] = normal_avx.box_muller_16(u[n:].reshape(1, 16), mean, std)[0]
    got = np.empty(n, np.float32)
    normal_fill.normal32(words, mean, std, got)
    assert np.array_equal(got.view(np.int32), want.view(np.int32))


def test_normal32_at_the_ends_of_the_uniforms():
    # u = 0 (log of 1), the largest u (log of 2**-24) and angles at multiples of pi / 4
    words = np.array([0, 2 ** 24 - 1, 2 ** 23, 2 ** 22, 1, 2 ** 24 - 2, 3, 2 ** 21] * 2
                     + [0] * 16, np.uint64)
    u = (words[:16] & np.uint64(2 ** 24 - 1)).astype(np.float32) * np.float32(2.0 ** -24)
    got = np.empty(16, np.float32)
    normal_fill.normal32(words, 0.0, 1.0, got)
    assert np.array_equal(got, normal_avx.box_muller_16(u.reshape(1, 16), 0.0, 1.0)[0])


@settings(max_examples=40, deadline=None)
@given(n=_sizes, seed=_seeds, params=_params)
def test_normal64_is_its_reference(n, seed, params):
    n = max(n, 16)
    mean, std = params
    words = _words(seed, 2 * (n + (16 if n % 16 else 0)))
    got = np.empty(n)
    normal_fill.normal64(words, mean, std, got)
    assert np.array_equal(got, normal_fill.normal64_reference(words, mean, std, n))


@settings(max_examples=40, deadline=None)
@given(n=_sizes, seed=_seeds, params=_params, dtype=st.sampled_from([np.float32, np.float64]))
def test_normal_draws_equal_the_numpy_reference(n, seed, params, dtype):
    # the whole of random_draws.normal, sizes below 16 included: the generator's words and
    # its kept normal move alike
    mean, std = params
    a, b = _two(seed)
    got = draws.normal(a, n, dtype, mean, std)
    if n < 16:
        want = draws._fused(draws._pairs(b, n), std, mean).astype(dtype)
    elif dtype == np.float32:
        want = draws.normal_reference(b, n, dtype, mean, std)
    else:
        tail = 16 if n % 16 else 0
        want = normal_fill.normal64_reference(b.random32(2 * (n + tail)), mean, std, n)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(a.random32(3), b.random32(3)) and a.normal_cache == b.normal_cache


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 600), seed=_seeds, dtype=st.sampled_from([np.float32, np.float64]),
       bounds=st.sampled_from([(0.0, 1.0), (-2.5, 3.1), (1e-3, 7.0), (-1e6, 1e6)]))
def test_uniform_kernels_are_the_reference(n, seed, dtype, bounds):
    a, b = _two(seed)
    got = draws.uniform(a, n, dtype, *bounds)
    want = draws.uniform_reference(b, n, dtype, *bounds)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(a.random32(2), b.random32(2))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 600), seed=_seeds, dtype=st.sampled_from([np.float32, np.float64]),
       one=st.booleans())
def test_bernoulli_kernels_are_the_reference(n, seed, dtype, one):
    a, b = _two(seed)
    probs = (np.array([0.3]) if one else np.random.default_rng(seed).random(n)).astype(dtype)
    got = draws.bernoulli(a, probs, n)
    assert np.array_equal(got, draws.bernoulli_reference(b, probs, n))
    assert np.array_equal(a.random32(2), b.random32(2))


@settings(max_examples=40, deadline=None)
@given(x=st.lists(st.floats(-1e300, 1e300), max_size=40), scale=st.floats(-1e3, 1e3),
       shift=st.floats(-1e3, 1e3))
def test_affine_rounds_once(x, scale, shift):
    x = np.array(x, np.float64)
    assert np.array_equal(fma.affine(x, scale, shift), draws._fused(x, scale, shift))


def test_fma_rounds_once_where_a_product_then_sum_would_not():
    e = 2.0 ** -52
    got = fma.affine(np.array([1.0 + e]), 1.0 - e, -1.0)[0]
    assert got == -e * e and (1.0 + e) * (1.0 - e) - 1.0 == 0.0  # exact, not rounded to 0
    assert math.isnan(fma.affine(np.array([np.inf]), 0.0, 1.0)[0])


@settings(max_examples=40, deadline=None)
@given(seed=_seeds, skip=st.integers(0, 1300), n=st.one_of(st.sampled_from([1, 623, 624, 625]),
                                                         st.integers(0, 3000)))
def test_mt19937_words_are_numpys(seed, skip, n):
    from minigrad.kernels import mt19937
    from minigrad.random import _state_view
    ours, numpys = np.random.MT19937(), np.random.MT19937()
    for bits in (ours, numpys):
        bits._legacy_seeding(seed)
        bits.random_raw(skip)
    state = _state_view(ours)
    got = np.empty(n, np.uint64)
    mt19937.words(state, n, got)
    assert np.array_equal(got, numpys.random_raw(n))
    assert np.array_equal(ours.random_raw(5), numpys.random_raw(5))  # the state moved alike


def test_a_generators_long_and_short_runs_are_one_stream():
    a, b = _two(11)
    long = a.random32(5000)   # the compiled loop
    assert np.array_equal(long, np.concatenate([b.random32(7) for _ in range(714)] +
                                               [b.random32(2)]))
    assert np.array_equal(a.random64(300), b.random64(300))
