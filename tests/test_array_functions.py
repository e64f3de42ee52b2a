"""take_along_dim, tensor_split, rot90 and isin (minigrad/array_functions.py): float64
gradients of first and second order, against NumPy's take_along_axis, array_split and rot90
on random shapes, and the errors. Values, dtypes and layouts against PyTorch are in the
compat table and sweep."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck, gradgradcheck

RNG = np.random.default_rng(3)


def test_gradients_of_first_and_second_order():
    x = mg.tensor(RNG.standard_normal((3, 4)), requires_grad=True)
    index = mg.tensor([[0, 3, 3], [1, 1, 0], [2, 0, 1]])
    cases = [lambda t: t.take_along_dim(index, 1),  # repeated indices: gradients add up
             lambda t: mg.take_along_dim(t, mg.tensor([[1, 0, 2, 2]]), 0),
             lambda t: mg.take_along_dim(t, mg.tensor([11, 0, 0])),
             lambda t: mg.cat([p * (i + 1) for i, p in enumerate(t.tensor_split(3, 1))], 1),
             lambda t: t.tensor_split([-1], 0)[0],
             lambda t: t.rot90(), lambda t: t.rot90(2, (1, 0)), lambda t: t.rot90(-1)]
    for fn in cases:
        assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])


@pytest.mark.parametrize("seed", range(4))
def test_against_numpy_on_random_shapes(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, rng.integers(2, 5)))
    a = rng.standard_normal(shape)
    d = int(rng.integers(-len(shape), len(shape)))
    index = rng.integers(0, shape[d], shape[:d % len(shape)] + (3,) + shape[d % len(shape) + 1:])
    got = mg.take_along_dim(mg.tensor(a), mg.tensor(index), d).numpy()
    np.testing.assert_array_equal(got, np.take_along_axis(a, index, d))
    sections = int(rng.integers(1, 7))
    for got, want in zip(mg.tensor_split(mg.tensor(a), sections, d),
                         np.array_split(a, sections, d)):
        np.testing.assert_array_equal(got.numpy(), want)
    k, dims = int(rng.integers(-5, 6)), tuple(rng.choice(len(shape), 2, replace=False).tolist())
    np.testing.assert_array_equal(mg.rot90(mg.tensor(a), k, dims).numpy(), np.rot90(a, k, dims))


def test_errors_as_pytorchs(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="same number of dimensions"):
            lib.take_along_dim(lib.ones(2, 3), lib.tensor([0]), dim=1)
        with pytest.raises(RuntimeError, match="dtype of indices should be Long"):
            lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0.5]]), dim=1)
        with pytest.raises(IndexError):
            lib.take_along_dim(lib.ones(2, 3), lib.tensor([[0]]), dim=2)
        with pytest.raises(RuntimeError, match="number of sections must be larger than 0"):
            lib.tensor_split(lib.ones(3), 0)
        with pytest.raises(RuntimeError, match="at least a 1-dimensional tensor"):
            lib.tensor_split(lib.tensor(1.0), 2)
        with pytest.raises(TypeError):
            lib.tensor_split(lib.ones(3), 2.0)
        with pytest.raises(RuntimeError, match="rotation dims == 2"):
            lib.rot90(lib.ones(2, 2), 1, (0,))
        with pytest.raises(RuntimeError, match="total dims >= 2"):
            lib.rot90(lib.ones(3))
        with pytest.raises(RuntimeError, match="rotation dims to be different"):
            lib.rot90(lib.ones(2, 2), 1, (0, -2))
        with pytest.raises(IndexError):
            lib.rot90(lib.ones(2, 2), 1, (0, 5))
        with pytest.raises(RuntimeError):
            lib.isin(lib.tensor([True]), lib.tensor([True]))
    with pytest.raises(ValueError, match=r"take_along_dim: shapes minigrad.Size\(\[2, 3\]\) "
                                          r"and \(3, 1\)"):
        mg.take_along_dim(mg.ones(2, 3), mg.tensor([[0], [0], [0]]), 1)


def test_isin_has_no_gradient_and_keeps_the_shape():
    x = mg.tensor([[1.0, 2.0], [3.0, 1.0]], requires_grad=True)
    got = mg.isin(x, mg.tensor([1.0, 5.0]))
    assert not got.requires_grad and got.dtype == mg.bool
    assert got.tolist() == [[True, False], [False, True]]
    assert mg.isin(x, 1.0, invert=True).tolist() == [[False, True], [True, False]]
