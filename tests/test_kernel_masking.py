"""masked_fill's kernel (kernels.masked_fill): against its NumPy reference bit for bit on random
shapes and masks broadcast in every way, the inputs it leaves to the reference, its errors;
the op's float64 gradcheck, and values and gradients of masked_fill + softmax against
PyTorch."""
import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import kernels
from minigrad.autograd import gradcheck
from minigrad.kernels import reference as ref
from minigrad.kernels import masking as mf
from minigrad.kernels.masking import _mask_row

from kernel_variants import restore_kernel_settings  # noqa: F401 (autouse fixture)

FAST = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
FILLS = [0.0, -np.inf, np.inf, np.nan, -0.0, 3.5, -1e30]


@pytest.fixture(autouse=True)
def kernel_at_every_size(monkeypatch):
    """The kernel for arrays of any size (small ones go to the reference by default)."""
    monkeypatch.setattr(mf, "MIN_SIZE", 0)


def _same_bits(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    ints = np.int32 if a.dtype == np.float32 else np.int64
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(ints),
                                  np.ascontiguousarray(b).view(ints))


@st.composite
def _shapes_and_masks(draw):
    """(x's shape, a mask shape broadcasting to it): the mask drops some leading axes and
    takes 1 or the size on each axis it keeps."""
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=4)))
    keep = draw(st.integers(0, len(shape)))
    mask = tuple(draw(st.sampled_from([1, n])) for n in shape[len(shape) - keep:])
    return shape, mask


@FAST
@given(sm=_shapes_and_masks(), dtype=st.sampled_from([np.float32, np.float64]),
       fill=st.sampled_from(FILLS), seed=st.integers(0, 2**32 - 1))
def test_kernel_matches_reference(sm, dtype, fill, seed):
    shape, mshape = sm
    r = np.random.default_rng(seed)
    x = r.standard_normal(shape).astype(dtype)
    if x.size:
        x.flat[r.integers(0, x.size)] = np.nan   # a NaN kept where not masked
    mask = r.random(mshape) < 0.5
    f = np.asarray(fill, dtype)
    got = kernels.masked_fill(x, mask, f)
    _same_bits(got, ref.masked_fill(x, mask, f))
    assert got.flags.c_contiguous and not np.shares_memory(got, x)


def test_default_size_threshold(monkeypatch):
    monkeypatch.setattr(mf, "MIN_SIZE", 4096)
    calls = []
    real = mf.masked_fill_rows

    def counted(*args):
        calls.append(args[0].size)
        return real(*args)
    monkeypatch.setattr(mf, "masked_fill_rows", counted)
    mask, fill = np.triu(np.ones((32, 32), bool), 1), np.float32(-np.inf)
    for b in (3, 4):   # 3,072 elements: the reference; 4,096: the kernel
        x = np.random.default_rng(b).standard_normal((b, 32, 32)).astype(np.float32)
        _same_bits(kernels.masked_fill(x, mask, fill), ref.masked_fill(x, mask, fill))
    assert calls == [4096]


def test_causal_mask_is_one_row():
    # attention's (L, S) mask over (B, H, L, S): a row of L * S, never broadcast to x's size
    mask = np.triu(np.ones((5, 7), bool), 1)
    row = _mask_row(mask, (3, 2, 5, 7))
    assert row.shape == (35,) and np.shares_memory(row, mask)   # a view, no copy
    assert _mask_row(mask.T.copy().T, (3, 2, 5, 7)).shape == (35,)   # (not C-contiguous)
    assert _mask_row(np.ones((3, 1, 1, 7), bool), (3, 2, 5, 7)).shape == (210,)
    assert _mask_row(np.ones((1, 7), bool), (3, 5, 7)).shape == (7,)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_left_to_the_reference(backend):
    kernels.set_backend(backend)
    r = np.random.default_rng(0)
    mask = np.triu(np.ones((4, 4), bool), 1)
    for x in (r.standard_normal((3, 4, 4)).astype(np.float32).transpose(0, 2, 1),  # strided
              r.integers(-5, 5, (3, 4, 4)), r.standard_normal((3, 4, 4)) > 0,  # int, bool
              r.standard_normal((3, 4, 4)).astype(np.float16)):
        fill = np.asarray(1, x.dtype)
        np.testing.assert_array_equal(kernels.masked_fill(x, mask, fill),
                                      np.where(mask, fill, x))
    got = kernels.masked_fill(np.float32(2.0), np.bool_(True), np.float32(0))   # a scalar
    assert got == 0 and np.ndim(got) == 0


def test_errors():
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(TypeError, match="masked_fill: mask must be a bool array, got dtype"):
        kernels.masked_fill(x, np.ones((2, 3), np.int8), np.float32(0))
    with pytest.raises(ValueError):
        kernels.masked_fill(x, np.ones((2,), bool), np.float32(0))
    with pytest.raises(ValueError, match=r"masked_fill: mask of shape \(2,\) does not "
                                         r"broadcast to the tensor's shape \(2, 3\)"):
        mg.zeros(2, 3).masked_fill(mg.tensor(np.ones((2,), bool)), 0.0)


def test_gradcheck_causal_and_padding_masks():
    r = np.random.default_rng(1)
    x = mg.tensor(r.standard_normal((2, 3, 4, 4)), requires_grad=True)
    causal = mg.tensor(np.triu(np.ones((4, 4), bool), 1))
    padding = mg.tensor(r.random((2, 1, 1, 4)) < 0.3)
    assert gradcheck(lambda t: F.softmax(t.masked_fill(causal, float("-inf")), dim=-1), (x,))
    assert gradcheck(lambda t: t.masked_fill(padding, 2.0) * t, (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("mask_shape", [(5, 5), (3, 1, 1, 5), (1, 5), (3, 2, 5, 5)])
def test_masked_softmax_against_pytorch(dtype, mask_shape):
    r = np.random.default_rng(2)
    x = r.standard_normal((3, 2, 5, 5)).astype(dtype)
    g = r.standard_normal((3, 2, 5, 5)).astype(dtype)
    mask = (np.triu(np.ones((5, 5), bool), 1) if mask_shape == (5, 5)
            else r.random(mask_shape) < 0.3)
    a, t = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya = F.softmax(a.masked_fill(mg.tensor(mask), float("-inf")), dim=-1)
    yt = torch.softmax(t.masked_fill(torch.tensor(mask), float("-inf")), dim=-1)
    ya.backward(mg.tensor(g))
    yt.backward(torch.tensor(g))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(ya.numpy(), yt.detach().numpy(), **tol, equal_nan=True)
    np.testing.assert_allclose(a.grad.numpy(), np.nan_to_num(t.grad.numpy()), **tol)
    assert ya.dtype == mg.float32 if dtype == np.float32 else mg.float64


@pytest.mark.parametrize("case", ["0-d", "empty", "non-contiguous", "in place"])
def test_tensor_cases_against_pytorch(case):
    r = np.random.default_rng(3)
    x = r.standard_normal((4, 3)).astype(np.float32)
    mask = r.random((4, 3)) < 0.5
    if case == "0-d":
        x, mask = np.array(1.5, np.float32), np.array(True)
    elif case == "empty":
        x, mask = np.zeros((0, 3), np.float32), np.zeros((3,), bool)
    a, t = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ma, mt = mg.tensor(mask), torch.tensor(mask)
    if case == "non-contiguous":
        ya, yt = a.t().masked_fill(ma.t(), -2.0), t.t().masked_fill(mt.t(), -2.0)
    elif case == "in place":
        ya, yt = (a * 1).masked_fill_(ma, -2.0), (t * 1).masked_fill_(mt, -2.0)
    else:
        ya, yt = a.masked_fill(ma, -2.0), t.masked_fill(mt, -2.0)
    np.testing.assert_array_equal(ya.numpy(), yt.detach().numpy())
    assert tuple(ya.shape) == tuple(yt.shape)
    ya.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), t.grad.numpy())
