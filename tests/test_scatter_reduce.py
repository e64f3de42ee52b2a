"""`Tensor.scatter_reduce` ("sum", "prod", "mean", "amax", "amin", with and without the
tensor's own values): float64 gradchecks, and values and gradients equal to PyTorch's, ties,
zero factors and integer means included."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck

REDUCES = ["sum", "prod", "mean", "amax", "amin"]


def _inputs(rng, shape_a=(4, 3), shape_src=(6, 3)):
    """Distinct nonzero values in `a` and `src` (no ties, no zero factors); index for dim 0."""
    a = rng.permutation(np.arange(1, 1 + np.prod(shape_a))).reshape(shape_a) * 0.37
    a = a * rng.choice([-1, 1], shape_a)
    src = rng.uniform(0.5, 2, shape_src) * rng.choice([-1, 1], shape_src)
    return a, src, rng.integers(0, shape_a[0], shape_src)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_gradcheck(reduce, include_self):
    rng = np.random.default_rng(REDUCES.index(reduce))
    a, src, index = _inputs(rng)  # distinct values: amax/amin are differentiable there
    ta = mg.tensor(a, requires_grad=True)
    ts = mg.tensor(src, requires_grad=True)
    idx = mg.tensor(index)
    assert gradcheck(lambda x, s: x.scatter_reduce(0, idx, s, reduce, include_self=include_self),
                     [ta, ts])


def test_gradcheck_of_a_product_with_one_zero_factor():
    rng = np.random.default_rng(5)
    a, src, index = _inputs(rng)
    src[0, 1] = 0.0  # the other factors of its position get a gradient through it
    ta, ts = mg.tensor(a, requires_grad=True), mg.tensor(src, requires_grad=True)
    idx = mg.tensor(index)
    assert gradcheck(lambda x, s: x.scatter_reduce(0, idx, s, "prod"), [ta, ts])


@pytest.mark.parametrize("dim", [0, 1])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_matches_pytorch_with_ties_and_zeros(torch, reduce, include_self, dim):
    """Small integers make ties (amax/amin share the gradient among them) and zero factors
    (prod); the index is smaller than the tensor in the other dim. (PyTorch's backward
    fails where src is larger than the index, so src has the index's shape here.)"""
    rng = np.random.default_rng(7 + dim)
    a = rng.integers(-2, 3, (4, 5)).astype(np.float32)
    index = rng.integers(0, a.shape[dim], (5, 4) if dim == 0 else (3, 6))
    src = rng.integers(-2, 3, index.shape).astype(np.float32)
    weight = np.arange(20, dtype=np.float32).reshape(4, 5) + 1
    results = []
    for lib in (torch, mg):
        x, s = lib.tensor(a, requires_grad=True), lib.tensor(src, requires_grad=True)
        out = x.scatter_reduce(dim, lib.tensor(index), s, reduce, include_self=include_self)
        (out * lib.tensor(weight)).sum().backward()
        results.append([out.detach().numpy(), x.grad.numpy(), s.grad.numpy()])
    for want, got, what in zip(*results, ("values", "grad self", "grad src")):
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=f"{reduce} {what}")


@pytest.mark.parametrize("reduce", REDUCES)
def test_integer_tensors_and_the_in_place_form(torch, reduce):
    a = np.array([[5, -3], [7, 2], [0, 9]], dtype=np.int64)
    src = np.array([[4, 4], [-6, 1], [3, 8], [2, 2]], dtype=np.int64)
    index = np.array([[0, 2], [0, 0], [2, 2], [0, 1]])
    want = torch.tensor(a).scatter_reduce_(0, torch.tensor(index), torch.tensor(src), reduce,
                                           include_self=False)
    got = mg.tensor(a)
    assert got.scatter_reduce_(0, mg.tensor(index), mg.tensor(src), reduce,
                               include_self=False) is got
    np.testing.assert_array_equal(got.numpy(), want.numpy())  # an integer mean is floored
    assert got.dtype == np.int64


def test_errors_name_the_operation():
    x = mg.zeros(3, 2)
    with pytest.raises(ValueError, match="scatter_reduce: reduce must be one of"):
        x.scatter_reduce(0, mg.tensor([[0, 1]]), mg.ones(1, 2), "max")
    with pytest.raises(RuntimeError, match=r"scatter_reduce: self \(float32\) and source "
                                           r"\(float64\)"):
        x.scatter_reduce(0, mg.tensor([[0, 1]]), mg.ones(1, 2, dtype=mg.float64), "sum")
    with pytest.raises(TypeError, match="scatter_reduce: reduce='mean' is not implemented for "
                                        "bool"):  # as PyTorch, which has no bool mean
        mg.zeros(2, dtype=mg.bool).scatter_reduce(0, mg.tensor([1]), mg.ones(1, dtype=mg.bool),
                                                  "mean")
    with pytest.raises(IndexError, match="scatter_reduce: index 3 is out of range"):
        x.scatter_reduce(0, mg.tensor([[3, 0]]), mg.ones(1, 2), "amax")
