"""The activation kernels (GELU in both forms, SiLU, sigmoid, tanh, ReLU): each against its
NumPy reference on random shapes, serial and parallel; the float32 erf and tanh against the
C library's; values and gradients against PyTorch; and a float64 gradcheck of each op."""
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import njit

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.autograd import gradcheck
from minigrad.kernels import reference as ref
from minigrad.kernels.mathfn import fast_erf, fast_tanh

from kernel_variants import both_variants, restore_kernel_settings  # noqa: F401 (autouse fixture)

FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
DTYPES = [np.float32, np.float64]

# name: (forward kernel, backward kernel, reference forward, reference backward, backward
# reads the input x (else the output y))
OPS = {
    "gelu": (kernels.gelu, kernels.gelu_backward, ref.gelu, ref.gelu_backward, True),
    "gelu tanh": (lambda x: kernels.gelu(x, "tanh"),
                  lambda x, g: kernels.gelu_backward(x, g, "tanh"),
                  lambda x: ref.gelu(x, "tanh"), lambda x, g: ref.gelu_backward(x, g, "tanh"),
                  True),
    "silu": (kernels.silu, kernels.silu_backward, ref.silu, ref.silu_backward, True),
    "sigmoid": (kernels.sigmoid, kernels.sigmoid_backward, ref.sigmoid, ref.sigmoid_backward,
                False),
    "tanh": (kernels.tanh, kernels.tanh_backward, ref.tanh, ref.tanh_backward, False),
    "relu": (kernels.relu, kernels.relu_backward, ref.relu, ref.relu_backward, False),
}
# float32 kernels use polynomial exp/erf/tanh (about 4e-7 relative); float64 the C library's
TOL = {np.float32: dict(rtol=2e-6, atol=2e-6), np.float64: dict(rtol=1e-13, atol=1e-14)}


@FAST
@given(name=st.sampled_from(sorted(OPS)), dtype=st.sampled_from(DTYPES),
       shape=st.lists(st.integers(0, 40), min_size=0, max_size=3),
       scale=st.sampled_from([1.0, 8.0]), seed=st.integers(0, 2**32 - 1))
def test_kernel_matches_reference(name, dtype, shape, scale, seed):
    fwd, bwd, rfwd, rbwd, from_input = OPS[name]
    r = np.random.default_rng(seed)
    x = np.asarray(r.standard_normal(shape) * scale, dtype)
    g = np.asarray(r.standard_normal(shape), dtype)
    want = np.asarray(rfwd(x))
    for y in both_variants(fwd, x):
        assert y.dtype == dtype and y.shape == x.shape
        np.testing.assert_allclose(y, want, **TOL[dtype])
    saved = x if from_input else want
    want_dx = rbwd(saved, g)
    for dx in both_variants(bwd, saved, g):
        assert dx.dtype == dtype and dx.shape == x.shape
        np.testing.assert_allclose(dx, want_dx, **TOL[dtype])


@pytest.mark.parametrize("name", sorted(OPS))
def test_many_chunks_and_strided_input(name):
    """More elements than one task of the pool (several chunks), from a non-contiguous view."""
    fwd, bwd, rfwd, rbwd, from_input = OPS[name]
    r = np.random.default_rng(1)
    x = (r.standard_normal((300, 260)) * 3).astype(np.float32)[:, ::2]
    g = r.standard_normal(x.shape).astype(np.float32)
    for y in both_variants(fwd, x):
        np.testing.assert_allclose(y, rfwd(x), **TOL[np.float32])
    saved = x if from_input else rfwd(x)
    for dx in both_variants(bwd, saved, g):
        np.testing.assert_allclose(dx, rbwd(saved, g), **TOL[np.float32])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_special_values_as_the_reference(name, dtype):
    fwd, bwd, rfwd, rbwd, from_input = OPS[name]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 50, -50, 100, -100,
                  1e4, -1e4], dtype)
    with np.errstate(all="ignore"):
        want = np.asarray(rfwd(x))
        saved = x if from_input else want
        want_dx = rbwd(saved, np.ones_like(x))
    for y in both_variants(fwd, x):
        np.testing.assert_allclose(y, want, equal_nan=True, **TOL[dtype])
    for dx in both_variants(bwd, saved, np.ones_like(x)):
        np.testing.assert_allclose(dx, want_dx, equal_nan=True, **TOL[dtype])


@njit
def _apply(x, out, which):
    for i in range(len(x)):
        out[i] = fast_erf(x[i]) if which == 0 else fast_tanh(x[i])


@pytest.mark.parametrize("which, exact", [(0, np.vectorize(math.erf)), (1, np.tanh)])
def test_float32_erf_and_tanh_accuracy(which, exact):
    x = np.linspace(-9, 9, 200_001, dtype=np.float32)
    out = np.empty_like(x)
    _apply(x, out, which)
    np.testing.assert_allclose(out, exact(x.astype(np.float64)), rtol=5e-7, atol=5e-7)
    assert np.abs(out).max() <= 1
    _apply(np.float32([np.nan, np.inf, -np.inf]), out[:3], which)
    assert np.isnan(out[0]) and out[1] == 1 and out[2] == -1


def _torch_and_ours(name):
    return {"gelu": (TF.gelu, F.gelu),
            "gelu tanh": (lambda x: TF.gelu(x, approximate="tanh"),
                          lambda x: F.gelu(x, approximate="tanh")),
            "silu": (TF.silu, F.silu), "sigmoid": (torch.sigmoid, mg.sigmoid),
            "tanh": (torch.tanh, mg.tanh), "relu": (TF.relu, F.relu)}[name]


@pytest.mark.parametrize("name", sorted(OPS))
def test_values_and_gradients_match_pytorch(name):
    tfn, ours = _torch_and_ours(name)
    r = np.random.default_rng(3)
    a = (r.standard_normal((64, 700)) * 4).astype(np.float32)
    a[0, :5] = [np.nan, -np.inf, 0.0, 90.0, -90.0]   # (+inf: below)
    g = r.standard_normal(a.shape).astype(np.float32)
    t = torch.tensor(a, requires_grad=True)
    tfn(t).backward(torch.tensor(g))
    x = mg.tensor(a, requires_grad=True)
    y = ours(x)
    y.backward(mg.tensor(g))
    assert y.dtype == mg.float32 and x.grad.dtype == mg.float32
    # (1 + erf(x / sqrt 2) cancels for x << 0: both libraries are within 1.4e-6 of exact)
    np.testing.assert_allclose(y.numpy(), tfn(torch.tensor(a)).numpy(), rtol=1e-5, atol=3e-6,
                               equal_nan=True)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-5,
                               equal_nan=True)
    # +inf: the function's limit (PyTorch's vectorised GELU gives NaN there)
    want = np.inf if name in ("gelu", "gelu tanh", "silu", "relu") else 1.0
    assert ours(mg.tensor(np.float32([np.inf]))).item() == want


@pytest.mark.parametrize("name", sorted(OPS))
def test_gradcheck_float64(name):
    _, ours = _torch_and_ours(name)
    r = np.random.default_rng(4)
    a = r.uniform(-3, 3, (3, 5))
    a[np.abs(a) < 0.05] = 0.5   # away from ReLU's kink
    x = mg.tensor(a, requires_grad=True)
    assert ours(x).dtype == mg.float64
    assert gradcheck(ours, [x])


def test_numpy_backend_runs_the_references():
    x = np.linspace(-3, 3, 50, dtype=np.float32)
    kernels.set_backend("numpy")
    np.testing.assert_array_equal(kernels.gelu(x), ref.gelu(x))
    np.testing.assert_array_equal(kernels.silu_backward(x, x), ref.silu_backward(x, x))


def test_bad_input_names_the_op():
    x = np.zeros(4, np.float32)
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        kernels.gelu(x, "erf")
    with pytest.raises(TypeError, match="sigmoid: unsupported dtype int64"):
        kernels.sigmoid(np.arange(3))
    with pytest.raises(ValueError, match=r"tanh_backward: output of shape \(4,\) and gradient "
                                         r"of shape \(3,\) differ"):
        kernels.tanh_backward(x, x[:3])
    with pytest.raises(TypeError, match="silu: x must be a numpy array"):
        kernels.silu([1.0])
    with pytest.raises(ValueError, match="gelu: approximate"):
        F.gelu(mg.tensor(x), approximate="fast")


def test_other_dtypes_take_the_reference():
    """float16 and integer tensors keep working (NumPy's semantics), as in PyTorch."""
    assert F.relu(mg.tensor([-1, 2, -3])).tolist() == [0, 2, 0]
    h = F.gelu(mg.tensor(np.float16([0.5, -1.0])))
    assert h.dtype == mg.float16


def test_each_kernel_has_a_cache_index_of_its_own():
    # the kernels are one loop compiled per element and per variant; Numba names its cache
    # files after a function's qualified name and line, so shared names would share an index
    from minigrad.kernels.activation import KERNELS
    dispatchers = [k for pair in KERNELS.values() for variants in pair for k in variants]
    assert len(dispatchers) == 4 * len(KERNELS)
    names = {k._cache._cache_file._index_name for k in dispatchers}
    assert len(names) == len(dispatchers)


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "relu", "silu"])
def test_tiny_and_large_arrays_give_the_same_values(name):
    """The value of an element does not depend on its array's size (the tiny path is the same
    kernel), nor on the array's layout or on the serial or parallel variant."""
    fwd, bwd, _, _, from_input = OPS[name]
    r = np.random.default_rng(7)
    big = (r.standard_normal(70_000) * 4).astype(np.float32)
    g = r.standard_normal(big.shape).astype(np.float32)
    y, dx = fwd(big), bwd(big if from_input else fwd(big), g)
    tiny = big[:16].reshape(4, 4)
    np.testing.assert_array_equal(fwd(tiny).reshape(-1), y[:16])
    saved = tiny if from_input else fwd(tiny)
    np.testing.assert_array_equal(bwd(saved, g[:16].reshape(4, 4)).reshape(-1), dx[:16])
    strided = big[:32][::2]   # not contiguous: copied, same values
    np.testing.assert_array_equal(fwd(strided), y[:32][::2])
    for ys in both_variants(fwd, big):
        np.testing.assert_array_equal(ys, y)


def test_errors_name_the_op():
    with pytest.raises(TypeError, match="tanh: unsupported dtype int64"):
        kernels.tanh(np.arange(3))
    with pytest.raises(TypeError, match="sigmoid: x must be a numpy array, got list"):
        kernels.sigmoid([1.0])
    with pytest.raises(ValueError, match=r"silu_backward: input of shape \(2,\) and gradient "
                                         r"of shape \(3,\) differ"):
        kernels.silu_backward(np.ones(2), np.ones(3))
    with pytest.raises(TypeError, match="relu_backward: dtypes differ"):
        kernels.relu_backward(np.ones(2), np.ones(2, np.float32))
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh'"):
        kernels.gelu(np.ones(2), approximate="erf")


@FAST
@given(dtype=st.sampled_from(DTYPES), shape=st.lists(st.integers(0, 40), min_size=0, max_size=3),
       scale=st.sampled_from([1.0, 8.0, 60.0]), seed=st.integers(0, 2**32 - 1))
def test_silu_keeping_its_sigmoid_matches_reference(dtype, shape, scale, seed):
    """The forward that also returns sigmoid(x), and the backward that reads it: against the
    references, and bit for bit the kernels that recompute it (serial and parallel)."""
    r = np.random.default_rng(seed)
    x = np.asarray(r.standard_normal(shape) * scale, dtype)
    g = np.asarray(r.standard_normal(shape), dtype)
    for y, s in both_variants(kernels.silu_with_sigmoid, x):
        assert y.dtype == s.dtype == dtype and y.shape == s.shape == x.shape
        np.testing.assert_allclose(s, ref.sigmoid(x), **TOL[dtype])
        np.testing.assert_array_equal(y, kernels.silu(x))
    for dx in both_variants(kernels.silu_backward_from_sigmoid, x, s, g):
        np.testing.assert_allclose(dx, ref.silu_backward(x, g), **TOL[dtype])
        np.testing.assert_array_equal(dx, kernels.silu_backward(x, g))
    kernels.set_backend("numpy")
    np.testing.assert_allclose(kernels.silu_backward_from_sigmoid(x, s, g), dx, **TOL[dtype])


def test_silu_op_keeps_the_sigmoid_only_for_a_gradient():
    x = (np.random.default_rng(5).standard_normal((30, 40)) * 6).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, -100.0]
    t = mg.tensor(x, requires_grad=True)
    y = F.silu(t)
    assert len(y.grad_fn.saved) == 2
    with mg.no_grad():
        y0 = F.silu(t)
    np.testing.assert_array_equal(y0.numpy(), y.numpy())
    g = np.ones_like(x)
    y.backward(mg.tensor(g))
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(t.grad.numpy(), kernels.silu_backward(x, g))
    with pytest.raises(ValueError, match=r"silu_backward: input of shape \(2,\) and sigmoid "):
        kernels.silu_backward_from_sigmoid(np.ones(2), np.ones(3), np.ones(2))
