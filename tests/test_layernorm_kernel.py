"""The fused layer-norm kernel against its NumPy reference, on random shapes."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from minigrad.kernels import layernorm as ln


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), d=st.integers(1, 70), dtype=st.sampled_from([np.float32, np.float64]),
       affine=st.booleans(), seed=st.integers(0, 2**31 - 1), transposed=st.booleans())
def test_layer_norm_kernel_matches_reference(n, d, dtype, affine, seed, transposed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((d, n)).T if transposed else rng.standard_normal((n, d))) * 3 + 1
    x = x.astype(dtype)
    w = rng.standard_normal(d).astype(dtype) if affine else None
    b = rng.standard_normal(d).astype(dtype) if affine else None
    g = rng.standard_normal((n, d)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-9)
    ref = ln.layer_norm_reference(x, w, b, 1e-5)
    got = ln.layer_norm_numba(x, w, b, 1e-5)
    for r, o in zip(ref, got):
        assert o.dtype == dtype
        np.testing.assert_allclose(o, r, **tol)
    ref_b = ln.layer_norm_backward_reference(g, ref[1], ref[2], w)
    got_b = ln.layer_norm_backward_numba(g, ref[1], ref[2], w)
    for r, o in zip(ref_b, got_b):
        np.testing.assert_allclose(o, r, **tol)


def test_layer_norm_kernel_rows_have_zero_mean_unit_variance():
    x = np.random.default_rng(0).standard_normal((50, 128)).astype(np.float32) * 5 + 2
    y, _, _ = ln.layer_norm_numba(x, None, None, 1e-5)
    np.testing.assert_allclose(y.mean(1), 0, atol=1e-5)
    np.testing.assert_allclose(y.var(1), 1, atol=1e-3)
