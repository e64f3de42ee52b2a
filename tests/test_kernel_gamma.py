"""kernels.lgamma, the compiled loop, against its reference (math.lgamma element by element):
two implementations of the function, equal but for the last bits."""
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, arrays

from minigrad import kernels
from minigrad.kernels import reference as ref

# values of every kind lgamma meets: poles, both infinities, NaN, both signs of zero,
# negative non-integers (where Gamma changes sign), tiny and huge magnitudes
_SPECIAL = [0.0, -0.0, -1.0, -2.0, -7.0, 1.0, 2.0, -0.5, -2.5, 0.5, 1e-300, -1e-300, 1e300,
            171.7, 2.6e305, math.inf, -math.inf, math.nan]
_values = st.one_of(st.sampled_from(_SPECIAL),
                    st.floats(-50, 200, allow_nan=False, allow_infinity=False))


@settings(max_examples=60, deadline=None)
@given(x=arrays(np.float64, array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=7),
                elements=_values))
def test_lgamma_kernel_is_the_reference(x):
    got = kernels.lgamma(x)
    assert got.shape == x.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, ref.lgamma(x), rtol=1e-13, atol=1e-13)


def test_lgamma_kernel_reads_strided_input():
    x = np.linspace(-4.25, 9.5, 40).reshape(5, 8)[:, ::3]
    np.testing.assert_allclose(kernels.lgamma(x), ref.lgamma(np.ascontiguousarray(x)),
                               rtol=1e-13, atol=1e-13)


def test_lgamma_kernel_names_itself_on_bad_input():
    with pytest.raises(TypeError, match="lgamma: unsupported dtype float32"):
        kernels.lgamma(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="lgamma: x must be a numpy array"):
        kernels.lgamma([1.0, 2.0])
