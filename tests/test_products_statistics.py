"""prod and cumprod (minigrad/ops/product_reductions.py), median, var_mean, std_mean and
count_nonzero (minigrad/statistics.py) against PyTorch: values, dtypes, indices, gradients
(through zeros and ties), second derivatives, forward mode and errors. The dtype sweep
(tests/test_compat_sweep.py) runs them on every dtype and layout as well."""
import numpy as np
import pytest

import minigrad as mg
from helpers import same_as_torch
from minigrad.autograd import gradcheck, gradgradcheck

# rows with no zero, one zero and two zeros, and a 0-d and an empty input
ROWS = np.array([[1.5, -2.0, 0.5, 3.0], [2.0, 0.0, -1.5, 0.5], [0.0, 2.5, 0.0, -1.0]])


@pytest.mark.parametrize("program", [
    lambda L, x: x.prod(), lambda L, x: x.prod(1), lambda L, x: L.prod(x, 0, keepdim=True),
    lambda L, x: x.t().prod(-1), lambda L, x: x.prod(1, dtype=L.float32),
    lambda L, x: x.cumprod(1), lambda L, x: L.cumprod(x.t(), 1), lambda L, x: x.cumprod(0),
    lambda L, x: x[:, :0].prod(1), lambda L, x: x[:0].prod(), lambda L, x: x[:0].cumprod(0),
    lambda L, x: x[1, 2].prod(), lambda L, x: x[1, 2].cumprod(0),
    lambda L, x: x.long().prod(1), lambda L, x: (x > 0).prod(), lambda L, x: x.int().cumprod(1),
    lambda L, x: x.cumprod(1, dtype=L.float32),
])
def test_products_as_pytorch(torch, program):
    same_as_torch(torch, program, ROWS)


def test_product_gradients_of_both_orders_through_zeros():
    x = mg.tensor(ROWS, requires_grad=True)
    for fn in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.prod(0, keepdim=True),
               lambda x: x.cumprod(1), lambda x: x.cumprod(0)):
        assert gradcheck(fn, [x]) and gradgradcheck(fn, [x])


def test_product_forward_mode_is_the_directional_derivative():
    fw = mg.autograd.forward_ad
    t = np.random.default_rng(0).standard_normal(ROWS.shape)
    eps = 1e-6
    for fn in (lambda x: x.prod(), lambda x: x.prod(1), lambda x: x.cumprod(1)):
        with fw.dual_level():
            tangent = fw.unpack_dual(fn(fw.make_dual(mg.tensor(ROWS), mg.tensor(t)))).tangent
        numeric = (fn(mg.tensor(ROWS + eps * t)) - fn(mg.tensor(ROWS - eps * t))) / (2 * eps)
        np.testing.assert_allclose(tangent.numpy(), numeric.numpy(), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype, dim", [("float32", 0), ("float32", 1), ("float16", 1)])
def test_float_cumprod_accumulates_as_pytorchs_cpu_kernel(torch, seed, dtype, dim):
    # PyTorch's CPU cumprod keeps a running product in a wider type (float32: double,
    # float16: float32) and rounds each output once; NumPy's own float32 scan rounds each step
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(1, 4)), int(rng.integers(1000, 4000)))
    shape = shape if dim == 1 else shape[::-1]
    x = rng.normal(1.0, float(rng.uniform(0.01, 0.3)), shape).astype(dtype)
    want = torch.from_numpy(x).cumprod(dim).numpy()
    for got in (mg.tensor(x).cumprod(dim), mg.cumprod(mg.tensor(x), dim),
                mg.tensor(x).cumprod_(dim),
                mg.tensor(x.astype(np.float64)).cumprod(dim, dtype=getattr(mg, dtype))):
        assert got.dtype == getattr(mg, dtype)
        np.testing.assert_array_equal(got.numpy(), want)


def test_product_errors(torch):
    x = mg.ones(2, 3)
    with pytest.raises(TypeError, match="prod: dim must be one int"):
        x.prod((0, 1))
    for lib in (torch, mg):
        with pytest.raises(IndexError):
            lib.ones(2, 3).prod(2)
        with pytest.raises(IndexError):
            lib.ones(2, 3).cumprod(-3)
        with pytest.raises(TypeError):
            lib.ones(2).cumprod()


MEDIAN_INPUT = np.array([[1.0, 5.0, 3.0, 2.0], [4.0, 4.0, 1.0, 4.0], [2.0, np.nan, 0.5, 7.0]])


@pytest.mark.parametrize("program", [
    lambda L, x: x[:2].median(), lambda L, x: L.median(x[1]), lambda L, x: x.median(),
    lambda L, x: tuple(x.median(1)), lambda L, x: tuple(L.median(x[:2], 0, keepdim=True)),
    lambda L, x: tuple(x.t().median(-1)), lambda L, x: tuple(x[0, 1].median(0)),
    lambda L, x: x[:2].long().median(), lambda L, x: tuple(x[:2].int().median(1)),
    lambda L, x: tuple(x[:0].median(1)), lambda L, x: x[:0].median(),
])
def test_median_as_pytorch(torch, program):
    """Lower medians, their indices (the first of equal values), NaN rows, the even
    sharing of the gradient among the elements equal to a median of all elements."""
    same_as_torch(torch, program, MEDIAN_INPUT)


def test_median_gradcheck_and_errors(torch):
    x = mg.tensor(np.random.default_rng(1).permutation(12).reshape(3, 4) * 1.0, requires_grad=True)
    assert gradcheck(lambda x: x.median(), [x]) and gradcheck(lambda x: x.median(0).values, [x])
    assert gradgradcheck(lambda x: x.median() * x.sum(), [x])
    for lib in (torch, mg):
        with pytest.raises(NotImplementedError):
            lib.tensor([True, False]).median()
        with pytest.raises(IndexError, match="median.*non-zero size"):
            lib.zeros(0, 3).median(0)


@pytest.mark.parametrize("program", [
    lambda L, x: L.var_mean(x), lambda L, x: L.std_mean(x, 1),
    lambda L, x: L.var_mean(x, 1, True), lambda L, x: L.std_mean(x, False),
    lambda L, x: L.var_mean(x, (0, 1), keepdim=True, correction=0),
    lambda L, x: L.std_mean(x.t(), dim=0, correction=2),
])
def test_var_mean_and_std_mean_as_pytorch(torch, program):
    same_as_torch(torch, program, ROWS)
    assert type(program(mg, mg.tensor(ROWS))) is tuple


def test_count_nonzero_as_pytorch(torch):
    for program in (lambda L, x: x.count_nonzero(), lambda L, x: L.count_nonzero(x, 1),
                    lambda L, x: L.count_nonzero(x, (0, 1)), lambda L, x: (x > 0).count_nonzero(0),
                    lambda L, x: x[0, 1].count_nonzero(), lambda L, x: x[:0].count_nonzero(1)):
        same_as_torch(torch, program, ROWS, grad=False)


DISTINCT = np.array([[1.0, 5.0, 3.0, 2.0], [8.5, 4.0, 1.0, 6.0], [2.0, np.nan, 0.5, 7.0]])


@pytest.mark.parametrize("program", [
    lambda L, x: tuple(x.kthvalue(1)), lambda L, x: tuple(L.kthvalue(x, 3, 1, keepdim=True)),
    lambda L, x: tuple(x.kthvalue(4, -1)), lambda L, x: tuple(x[:2].kthvalue(2, 0)),
    lambda L, x: tuple(x.t().kthvalue(2)), lambda L, x: tuple(x[0, 1].kthvalue(1)),
    lambda L, x: tuple(x[:2].long().kthvalue(2)), lambda L, x: tuple(x[:, :0].kthvalue(1, 0)),
])
def test_kthvalue_as_pytorch(torch, program):
    """Distinct values (among equal ones PyTorch's index is not fixed), NaN as the largest."""
    same_as_torch(torch, program, DISTINCT)


def test_kthvalue_gradcheck_and_errors(torch):
    x = mg.tensor(np.random.default_rng(2).permutation(12).reshape(3, 4) * 1.0, requires_grad=True)
    assert gradcheck(lambda x: x.kthvalue(2, 0).values, [x])
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
            lib.ones(2, 3).kthvalue(4)
        with pytest.raises(RuntimeError, match="kthvalue\\(\\): selected number k out of range"):
            lib.ones(2, 3).kthvalue(0)
        with pytest.raises(NotImplementedError):
            lib.tensor([True]).kthvalue(1)


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_as_pytorch(torch, interpolation):
    """Values and gradients (to the order statistics the quantile falls between), NaN rows,
    levels as a tensor (put first), keepdim with and without a dim."""
    def program(L, x):
        levels = L.tensor([0.0, 0.1, 0.5, 0.625, 0.9, 1.0], dtype=L.float64)
        kw = {"interpolation": interpolation}
        return (L.quantile(x[:2], 0.4, **kw), x[0].quantile(levels, **kw),
                x.quantile(0.3, dim=1, keepdim=True, **kw), L.quantile(x, levels, 0, **kw),
                x.t().quantile(levels[:2], dim=0, keepdim=True, **kw),
                x[:2].quantile(0.7, keepdim=True, **kw), x[1, 2].quantile(levels, **kw))
    same_as_torch(torch, program, DISTINCT)


def test_quantile_gradcheck_and_errors(torch):
    x = mg.tensor(np.random.default_rng(4).standard_normal((3, 5)), requires_grad=True)
    assert gradcheck(lambda x: x.quantile(mg.tensor([0.2, 0.55], dtype=mg.float64), 1), [x])
    for lib in (torch, mg):
        for fn in (lambda: lib.ones(3).quantile(1.5), lambda: lib.ones(3).long().quantile(0.5),
                   lambda: lib.ones(3).quantile(lib.tensor([0.5], dtype=lib.float64)),
                   lambda: lib.zeros(0).quantile(0.5), lambda: lib.ones(3).quantile(lib.ones(2, 2)),
                   lambda: lib.ones(3).quantile(0.5, interpolation="cubic")):
            with pytest.raises(RuntimeError, match="quantile\\(\\)"):
                fn()
