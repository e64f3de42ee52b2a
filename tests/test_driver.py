"""The driver's own parts: how it shares the work among calls, and what its calls refuse.

The ops it runs are tested against their NumPy references (and the parallel kernel against
its serial twin, bit for bit) in the kernels' own test files."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from numba.core.errors import TypingError

from minigrad.kernels import driver
from minigrad.kernels.views import flat


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 5000), nblk=st.integers(1, 8), unit=st.sampled_from([1, 16, 64, 102]))
def test_shares_cover_the_range_once_cut_at_multiples_of_the_unit(n, nblk, unit):
    shares = [driver._share(k, nblk, n, unit) for k in range(nblk)]
    covered = [i for lo, hi in shares for i in range(lo, hi)]
    assert covered == list(range(n))
    assert all(lo % unit == 0 or lo == n for lo, _ in shares)
    units = -(-n // unit)   # the shares are equal runs of whole units, the last ones shorter
    assert all(hi - lo <= -(-units // nblk) * unit for lo, hi in shares)


def test_a_block_function_is_never_handed_a_strided_array():
    # the blocks are compiled for C-contiguous arrays, and read whatever memory they are given
    x = np.zeros((4, 8), np.float32)
    nothing, mask = np.empty((0, 0), np.float32), np.empty((0, 0), np.bool_)
    with pytest.raises(TypingError, match="C-contiguous"):
        driver.run_serial(0, 0, driver.ELEMENTWISE, 0, 1, x[:, ::2], x, x, nothing, nothing,
                          nothing, nothing, mask, np.empty(0, np.int64), np.empty(0),
                          np.uint64(0), np.uint64(0), np.float32(1), 0.0)


@njit
def _flat_copy_and_negate(x, lo, hi):
    v = flat(x, lo, hi)
    out = v.copy()
    for i in range(len(v)):   # writes through the view land in x
        v[i] = -v[i]
    return out


@settings(max_examples=30, deadline=None)
@given(shape=st.lists(st.integers(0, 6), min_size=1, max_size=3), data=st.data())
def test_flat_is_the_run_of_elements_of_a_c_contiguous_array(shape, data):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    lo = data.draw(st.integers(0, x.size))
    hi = data.draw(st.integers(lo, x.size))
    want = x.reshape(-1)[lo:hi].copy()
    got = _flat_copy_and_negate(x, lo, hi)
    assert got.dtype == x.dtype and got.shape == (hi - lo,)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(x.reshape(-1)[lo:hi], -want)


def test_flat_refuses_an_array_that_is_not_c_contiguous():
    x = np.zeros((4, 8), np.float32)
    with pytest.raises(TypingError):
        _flat_copy_and_negate(x[:, ::2], 0, 4)
    with pytest.raises(TypingError):
        _flat_copy_and_negate(x.T, 0, 4)
