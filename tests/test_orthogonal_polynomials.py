"""torch.special's orthogonal polynomials (minigrad/orthogonal_polynomials.py) against PyTorch:
every family on a grid of x (the interval's ends, the switch to the trigonometric forms, inf)
by degrees from negative to past Hermite's limit, integer and float degrees, float32, numbers
for either operand, broadcasting, results that never require grad, and the errors."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

NAMES = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]

# x: a grid over [-3, 3], the ends of [-1, 1] and [0, 1] and points a rounding away, inf;
# NaN is left out at degree >= 2, where PyTorch returns an uninitialised value
_X = np.concatenate([np.linspace(-3, 3, 61), [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf,
                                               1e-300, 1 - 1e-16, -1 + 1e-16, 0.5 + 1e-17,
                                               np.cos(1e-9), 1e-9]])
_N = np.array([-3, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 30, 129, 600])


def _both(name, x, n, **kw):
    to_t = lambda v: torch.tensor(v, **kw) if isinstance(v, np.ndarray) else v
    to_m = lambda v: mg.tensor(v, **kw) if isinstance(v, np.ndarray) else v
    return (getattr(mg.special, name)(to_m(x), to_m(n)),
            getattr(torch.special, name)(to_t(x), to_t(n)))


def _close(m, t, rtol):
    got, want = m.numpy(), t.numpy()
    assert got.dtype == want.dtype and got.shape == want.shape
    # atol: the trigonometric forms cancel near their zeros, to a few roundings of 1
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-3, equal_nan=True)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("degrees", [np.int64, np.float64])
def test_grid_float64(name, degrees):
    x, n = np.meshgrid(_X, _N)
    m, t = _both(name, x, n.astype(degrees))
    _close(m, t, 1e-11)
    assert not m.requires_grad


@pytest.mark.parametrize("name", NAMES)
def test_float32_random_and_numbers(name):
    rng = np.random.default_rng(7)
    x = rng.uniform(-1.5, 1.5, (5, 4)).astype(np.float32)
    n = rng.integers(-1, 12, (5, 4))
    _close(*_both(name, x, n), 1e-4)  # PyTorch computes in float32, minigrad in float64
    _close(*_both(name, x, 7), 1e-4)
    _close(*_both(name, x, 3.7), 1e-4)  # a float degree is truncated
    _close(*_both(name, 0.3, n), 1e-4)  # a number x: the default float
    _close(*_both(name, x[:, :1], np.arange(4)), 1e-4)  # broadcast
    _close(*_both(name, x[:0], n[:0]), 1e-4)
    _close(*_both(name, x.T[::2], n[0, 0]), 1e-4)
    _close(*_both(name, np.arange(-2, 3), np.arange(5)), 1e-6)  # integers: the default float


@pytest.mark.parametrize("name", NAMES)
def test_float_degrees_edges(name):
    x = np.array([0.3, 0.3, 0.3, 0.3, 0.3, 2.0])
    n = np.array([np.nan, np.inf, -np.inf, 1e30, -2.5, 4.99])
    _close(*_both(name, x, n), 1e-12)


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_limit(name):
    x, n = np.full(4, 0.5), np.array([128, 129, 512, 513])
    _close(*_both(name, x, n), 1e-12)
    # float32 above 128: NaN (below, H_128 overflows float32: PyTorch's recurrence reaches
    # inf - inf, minigrad's float64 one rounds to inf)
    _close(*_both(name, x[1::2].astype(np.float32), n[1::2]), 1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_no_grad_and_errors(name):
    x = mg.tensor([0.2, 0.7], requires_grad=True)
    y = getattr(mg.special, name)(x, 5)
    assert not y.requires_grad and y.grad_fn is None
    fn = getattr(mg.special, name)
    with pytest.raises(NotImplementedError, match=f'"{name}_cpu" not implemented for \'Half\''):
        fn(mg.ones(2, dtype=mg.float16), 2)
    for lib in (mg, torch):
        with pytest.raises(TypeError, match=f"special_{name}\\(\\) received an invalid "
                                            f"combination of arguments - got \\(int, int\\)"):
            getattr(lib.special, name)(2, 3)
    with pytest.raises(RuntimeError, match=r"The size of tensor a \(2\) must match the size of "
                                           r"tensor b \(3\) at non-singleton dimension 0"):
        fn(mg.ones(2), mg.ones(3))


def test_large_degree_trigonometric():
    # degree 10^6 in the trigonometric forms: no recurrence, PyTorch's values
    x = np.linspace(-0.99, 0.99, 7)
    for name in NAMES[:8]:
        _close(*_both(name, x, np.int64(10 ** 6)), 1e-6)
