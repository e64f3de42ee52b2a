"""The kernels of the fused memory-bound ops, each against its NumPy reference on random shapes.

Embedding backward (a scatter-add of rows), ReLU followed by dropout, cross entropy with label
smoothing, and dropout + residual add + layer norm. Kernels that run rows in parallel are also
checked serial against parallel (kernels.PARALLEL_MIN_WORK decides which runs): the dropout
masks are a hash of the element index, so both give the same numbers.
"""
import importlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from minigrad import kernels
from minigrad.kernels import reference as ref

FAST = settings(max_examples=30, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]
ALWAYS_SERIAL = 2**62


@pytest.fixture(autouse=True)
def restore_kernel_settings():
    before, small = kernels.get_backend(), kernels.PARALLEL_MIN_WORK
    kernels.set_backend("numba")
    yield
    kernels.set_backend(before)
    kernels.PARALLEL_MIN_WORK = small


def both_variants(fn, *args):
    """fn(*args) run by the serial kernels, then by the parallel ones."""
    out = []
    for threshold in (ALWAYS_SERIAL, 0):
        kernels.PARALLEL_MIN_WORK = threshold
        out.append(fn(*args))
    return out


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
