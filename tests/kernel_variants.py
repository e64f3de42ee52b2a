"""Running a kernel entry point by its serial twin and by its parallel kernel, for the tests that
compare the two (kernels.policy.PARALLEL_MIN_WORK decides which one runs, read at call time)."""
import pytest

from minigrad import kernels

ALWAYS_SERIAL = 2**62      # a threshold no array reaches


@pytest.fixture(autouse=True)
def restore_kernel_settings():
    """The numba backend for the test, then the backend and threshold as they were."""
    before, small = kernels.get_backend(), kernels.policy.PARALLEL_MIN_WORK
    kernels.set_backend("numba")
    yield
    kernels.set_backend(before)
    kernels.policy.PARALLEL_MIN_WORK = small


def both_variants(fn, *args):
    """fn(*args) run by the serial kernels, then by the parallel ones."""
    out = []
    for threshold in (ALWAYS_SERIAL, 0):
        kernels.policy.PARALLEL_MIN_WORK = threshold
        out.append(fn(*args))
    return out
