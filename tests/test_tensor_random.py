"""The in-place random fills (`bernoulli_`, `random_`, `exponential_`, `geometric_`,
`log_normal_`, `cauchy_`), `Tensor.bernoulli` and `poisson`: minigrad's stream is not
PyTorch's, so each is checked for its distribution (mean, spread or quantiles of many draws
from a fixed seed, within a few standard errors), repeatability under `manual_seed` and a
`Generator`, and against PyTorch for the dtypes it fills and the arguments it refuses."""
import math

import numpy as np
import pytest

import minigrad as mg

N = 200_000


def draws(fill, dtype=mg.float64, seed=0):
    mg.manual_seed(seed)
    return fill(mg.zeros(N, dtype=dtype)).numpy().astype(np.float64)


def close_mean(x, mean, sd):
    """x's mean within 5 standard errors of `mean` (a false alarm about once in 3.5 million)."""
    assert abs(x.mean() - mean) < 5 * sd / math.sqrt(x.size), (x.mean(), mean)


def test_bernoulli_fills():
    x = draws(lambda t: t.bernoulli_(0.3))
    assert set(np.unique(x)) == {0.0, 1.0}
    close_mean(x, 0.3, math.sqrt(0.3 * 0.7))
    p = mg.linspace(0, 1, N, dtype=mg.float64)
    mg.manual_seed(1)
    y = mg.zeros(N).bernoulli_(p).numpy()
    assert y[0] == 0 and y[-1] == 1
    close_mean(y[p.numpy() < 0.5], 0.25, 0.5)  # the mean of p over [0, 0.5)
    mg.manual_seed(2)
    z = p.bernoulli().numpy()
    assert z.dtype == np.float64
    close_mean(z, 0.5, 0.5)
    close_mean(p.bernoulli(0.9).numpy(), 0.9, 0.3)


def test_random_fills_their_ranges():
    x = draws(lambda t: t.random_(-3, 4), dtype=mg.int64)
    assert set(np.unique(x)) == set(range(-3, 4))
    close_mean(x, 0.0, math.sqrt((7 ** 2 - 1) / 12))
    assert set(np.unique(draws(lambda t: t.random_(5), dtype=mg.float32))) == set(range(5))
    assert set(np.unique(draws(lambda t: t.random_(), dtype=mg.bool))) == {0.0, 1.0}
    u8 = draws(lambda t: t.random_(), dtype=mg.uint8)
    assert u8.min() == 0 and u8.max() == 255
    f16 = draws(lambda t: t.random_(), dtype=mg.float16)
    assert f16.max() <= 2 ** 11 and f16.max() > 2 ** 10 and (f16 == np.round(f16)).all()
    i64 = draws(lambda t: t.random_(), dtype=mg.int64)
    assert i64.min() >= 0 and i64.max() > 2 ** 62


def test_continuous_fills_have_their_moments():
    close_mean(draws(lambda t: t.exponential_(2.0)), 0.5, 0.5)
    x = draws(lambda t: t.log_normal_(0.5, 0.25))
    close_mean(np.log(x), 0.5, 0.25)
    assert abs(np.log(x).std() - 0.25) < 0.01
    c = draws(lambda t: t.cauchy_(1.0, 2.0))  # no mean: its quartiles are median -+ sigma
    np.testing.assert_allclose(np.quantile(c, [0.25, 0.5, 0.75]), [-1.0, 1.0, 3.0], atol=0.05)


def test_geometric_and_poisson_counts():
    g = draws(lambda t: t.geometric_(0.25), dtype=mg.int32)
    assert g.min() == 1
    close_mean(g, 4.0, math.sqrt(0.75) / 0.25)
    rates = mg.full((N,), 3.5, dtype=mg.float32)
    mg.manual_seed(3)
    p = mg.poisson(rates)
    assert p.dtype == mg.float32 and (p.numpy() == np.round(p.numpy())).all()
    close_mean(p.numpy().astype(np.float64), 3.5, math.sqrt(3.5))
    assert (mg.poisson(mg.zeros(4)).numpy() == 0).all()


def test_fills_repeat_under_a_seed_and_a_generator():
    fills = [lambda t, **k: t.bernoulli_(0.5, **k), lambda t, **k: t.random_(10, **k),
             lambda t, **k: t.exponential_(**k), lambda t, **k: t.geometric_(0.5, **k),
             lambda t, **k: t.log_normal_(**k), lambda t, **k: t.cauchy_(**k)]
    for fill in fills:
        a = draws(lambda t: fill(t), seed=7)[:50]
        b = draws(lambda t: fill(t), seed=7)[:50]
        np.testing.assert_array_equal(a, b)
        g1, g2 = mg.Generator().manual_seed(4), mg.Generator().manual_seed(4)
        np.testing.assert_array_equal(fill(mg.zeros(20), generator=g1).numpy(),
                                      fill(mg.zeros(20), generator=g2).numpy())


CALLS = {
    "bernoulli_ p": lambda L, t: t.bernoulli_(0.5),
    "bernoulli_ tensor": lambda L, t: t.bernoulli_(L.full(t.shape, 0.5)),
    "bernoulli_ bad p": lambda L, t: t.bernoulli_(1.5),
    "bernoulli": lambda L, t: t.bernoulli(),
    "random_": lambda L, t: t.random_(),
    "random_ to": lambda L, t: t.random_(3),
    "random_ range": lambda L, t: t.random_(1, 3),
    "random_ empty range": lambda L, t: t.random_(3, 3),
    "random_ below": lambda L, t: t.random_(-1, 3),
    "exponential_": lambda L, t: t.exponential_(),
    "exponential_ 0": lambda L, t: t.exponential_(0),
    "geometric_": lambda L, t: t.geometric_(0.5),
    "geometric_ 1": lambda L, t: t.geometric_(1),
    "log_normal_": lambda L, t: t.log_normal_(),
    "log_normal_ std 0": lambda L, t: t.log_normal_(0, 0),
    "cauchy_": lambda L, t: t.cauchy_(),
    "cauchy_ sigma 0": lambda L, t: t.cauchy_(0, 0),
    "poisson": lambda L, t: L.poisson(t),
    "poisson negative": lambda L, t: L.poisson(t.to(L.float32) - 1),
}


def outcome(L, name, dtype):
    t = L.zeros(3, dtype=getattr(L, dtype))
    try:
        out = CALLS[name](L, t)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        return type(e).__name__
    return str(out.dtype).replace("torch.", ""), tuple(out.shape), out is t


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_dtypes_and_errors_as_in_pytorch(torch, dtype):
    for name in CALLS:
        assert outcome(mg, name, dtype) == outcome(torch, name, dtype), (name, dtype)


def test_a_fill_is_refused_on_a_leaf_that_requires_grad(torch):
    for lib in (torch, mg):
        w = lib.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf|requires grad"):
            w.exponential_()
        with lib.no_grad():
            w.exponential_()
        assert (w.detach().numpy() > 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multinomial_draws_pytorchs_samples_from_its_weights_in_their_dtype(torch, dtype):
    # weights read in their own dtype (no float64 round trip), strided or not, 1-D or 2-D,
    # with and without replacement: PyTorch's samples under the same seed, input unchanged
    rng = np.random.default_rng(3)
    w = rng.random((4, 2 * 33)).astype(dtype)
    w[:, ::5] = 0
    for x in (w, w[:, ::2], w[1]):
        for n, replace in ((1, False), (3, False), (4, True)):
            got = []
            for lib in (mg, torch):
                lib.manual_seed(11)
                t = lib.from_numpy(np.array(x)) if lib is torch else mg.tensor(x)
                if lib is mg and x.base is not None:
                    t = mg.tensor(w)[:, ::2] if x.ndim == 2 else mg.tensor(w)[1]
                got.append(lib.multinomial(t, n, replacement=replace).numpy())
                assert np.array_equal(t.numpy(), x)
            np.testing.assert_array_equal(*got)
