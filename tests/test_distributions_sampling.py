"""Sampling of the distributions: repeatable under manual_seed, of PyTorch's shapes and dtypes,
drawn from the right law (sample moments and a Kolmogorov-Smirnov distance against the cdf
at fixed seeds), and Gamma's implicit reparameterisation gradient: against high-precision
references, against PyTorch's approximation, and in expectation (d/da E[x] = 1/rate)."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.distributions import (Beta, Binomial, Categorical, Cauchy, Chi2, Dirichlet,
                                    Exponential, Gamma, Geometric, Gumbel, HalfCauchy, HalfNormal,
                                    Independent, Laplace, LogNormal, MixtureSameFamily,
                                    Multinomial, MultivariateNormal, Normal, OneHotCategorical,
                                    Poisson, StudentT, Weibull)
from minigrad.distributions.gamma_sampling import standard_gamma_grad

N = 4000


def _ks(draws, cdf):
    """The largest gap between the empirical cdf of `draws` and `cdf` (NumPy arrays)."""
    x = np.sort(draws)
    c = cdf(x)
    n = len(x)
    return max(np.max(np.arange(1, n + 1) / n - c), np.max(c - np.arange(n) / n))


CONTINUOUS = [
    lambda: Exponential(mg.tensor(1.7)),
    lambda: Laplace(mg.tensor(0.3), mg.tensor(1.4)),
    lambda: Cauchy(mg.tensor(-0.5), mg.tensor(0.8)),
    lambda: Gumbel(mg.tensor(1.0), mg.tensor(2.0)),
    lambda: LogNormal(mg.tensor(0.2), mg.tensor(0.6)),
    lambda: HalfNormal(mg.tensor(1.5)),
    lambda: Normal(mg.tensor(1.0), mg.tensor(0.5)),
    lambda: Gamma(mg.tensor(0.4), mg.tensor(2.0)),
    lambda: Gamma(mg.tensor(7.5), mg.tensor(0.5)),
    lambda: HalfCauchy(mg.tensor(0.7)),
    lambda: Weibull(mg.tensor(1.5), mg.tensor(0.8)),
]


@pytest.mark.parametrize("i", range(len(CONTINUOUS)))
def test_continuous_samples_follow_the_cdf(i):
    d = CONTINUOUS[i]()
    mg.manual_seed(i)
    draws = d.sample((N,))
    mg.manual_seed(i)
    assert (d.sample((N,)).numpy() == draws.numpy()).all()
    assert draws.shape == (N,) and draws.dtype == mg.float32 and not draws.requires_grad
    x = draws.numpy().astype(np.float64)
    d64 = d.expand(())
    gap = _ks(x, lambda v: d64.cdf(mg.tensor(v.astype(np.float32))).numpy().astype(np.float64))
    assert gap < 1.63 / math.sqrt(N)  # the 1% critical value of the KS statistic


def test_moments_of_the_others():
    mg.manual_seed(0)
    b = Beta(mg.tensor([0.5, 2.0]), mg.tensor([1.5, 3.0])).sample((N,)).numpy()
    np.testing.assert_allclose(b.mean(0), [0.25, 0.4], atol=0.02)
    np.testing.assert_allclose(b.var(0), [0.25 * 0.75 / 3, 0.4 * 0.6 / 6], rtol=0.1)
    conc = np.array([0.3, 1.0, 2.7])
    d = Dirichlet(mg.tensor(conc)).sample((N,)).numpy()
    assert d.shape == (N, 3) and np.allclose(d.sum(-1), 1, atol=1e-6)
    np.testing.assert_allclose(d.mean(0), conc / conc.sum(), atol=0.02)
    t = StudentT(mg.tensor(5.0), mg.tensor(1.0), mg.tensor(2.0)).sample((N,)).numpy()
    np.testing.assert_allclose([t.mean(), t.var()], [1.0, 4 * 5 / 3], rtol=0.12)
    p = Poisson(mg.tensor([0.5, 7.0])).sample((N,)).numpy()
    # four standard errors of the mean, sqrt(rate / N)
    z = (p.mean(0) - [0.5, 7.0]) / np.sqrt(np.array([0.5, 7.0]) / N)
    assert (abs(z) < 4).all(), f"means {p.mean(0)} are {z} standard errors off"
    # and of the variance: a Poisson's fourth central moment is rate + 3 rate^2
    rate = np.array([0.5, 7.0])
    z = (p.var(0) - rate) / np.sqrt((rate + 2 * rate**2) / N)
    assert (abs(z) < 4).all(), f"variances {p.var(0)} are {z} standard errors off"
    assert (p == np.round(p)).all()
    binom = Binomial(mg.tensor([3.0, 10.0]), probs=mg.tensor([0.2, 0.7])).sample((N,)).numpy()
    np.testing.assert_allclose(binom.mean(0), [0.6, 7.0], rtol=0.05)
    assert binom.max(0).tolist() <= [3, 10]
    g = Geometric(probs=mg.tensor([0.3, 0.9])).sample((N,)).numpy()
    np.testing.assert_allclose(g.mean(0), [1 / 0.3 - 1, 1 / 0.9 - 1], rtol=0.08)
    chi2 = Chi2(mg.tensor([1.0, 6.0])).sample((N,)).numpy()
    np.testing.assert_allclose(chi2.mean(0), [1.0, 6.0], rtol=0.05)
    multi = Multinomial(10, probs=mg.tensor([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])).sample((N,))
    assert multi.shape == (N, 2, 3) and (multi.numpy().sum(-1) == 10).all()
    np.testing.assert_allclose(multi.numpy().mean(0), [[2, 3, 5], [9, 0.5, 0.5]], atol=0.05)
    oh = OneHotCategorical(probs=mg.tensor([0.2, 0.3, 0.5])).sample((N,)).numpy()
    assert oh.shape == (N, 3) and (oh.sum(-1) == 1).all()
    np.testing.assert_allclose(oh.mean(0), [0.2, 0.3, 0.5], atol=0.025)


def test_multivariate_normal_and_mixture_samples():
    cov = np.array([[2.0, 0.6, 0.0], [0.6, 1.0, -0.3], [0.0, -0.3, 0.5]])
    mvn = MultivariateNormal(mg.tensor([1.0, -1.0, 0.0], dtype=mg.float64), mg.tensor(cov))
    mg.manual_seed(4)
    x = mvn.rsample((N,)).numpy()
    assert x.shape == (N, 3)
    np.testing.assert_allclose(x.mean(0), [1, -1, 0], atol=0.06)
    np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)
    mix = MixtureSameFamily(Categorical(probs=mg.tensor([0.25, 0.75])),
                            Normal(mg.tensor([-3.0, 3.0]), mg.tensor([0.5, 0.5])))
    draws = mix.sample((N,)).numpy()
    assert draws.shape == (N,)
    np.testing.assert_allclose((draws > 0).mean(), 0.75, atol=0.025)
    gmm = MixtureSameFamily(Categorical(logits=mg.zeros(2)),
                            Independent(Normal(mg.tensor([[0.0, 5.0], [5.0, 0.0]]), 0.1), 1))
    pts = gmm.sample((6, 2)).numpy()
    assert pts.shape == (6, 2, 2)
    assert np.allclose(np.sort(np.round(pts.reshape(-1, 2) / 5), -1), [0, 1])


def _reference_grad(a, x):
    """dx/da = -(dP/da) / density, P the regularised incomplete gamma, by mpmath at 40
    digits."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    a, x = mp.mpf(a), mp.mpf(x)
    dp = mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a)
    return float(-dp / (x ** (a - 1) * mp.e ** (-x) / mp.gamma(a)))


def test_gamma_implicit_gradient_against_references(torch):
    rng = np.random.default_rng(0)
    for a in (0.05, 0.5, 1.0, 3.0, 20.0, 150.0):
        x = np.concatenate([rng.gamma(a, size=4), [a + 1.0, a + 1.0 - 1e-9]])
        got = standard_gamma_grad(np.full_like(x, a), x)
        want = np.array([_reference_grad(a, v) for v in x])
        np.testing.assert_allclose(got, want, rtol=1e-9)
        approx = torch._standard_gamma_grad(torch.tensor(np.full_like(x, a)),
                                            torch.tensor(x)).numpy()
        np.testing.assert_allclose(approx, want, rtol=1e-2)  # PyTorch's is approximate


def test_gamma_rsample_gradient_in_expectation():
    # E[x] = a / r and E[x^2] = a (a + 1) / r^2: the mean of the per-sample gradients must be
    # their derivatives in a and r
    a = mg.tensor(np.full(20000, 2.5), requires_grad=True)
    r = mg.tensor(np.full(20000, 1.5), requires_grad=True)
    mg.manual_seed(7)
    x = Gamma(a, r).rsample()
    ((x + x * x) / 20000).sum().backward()
    da = a.grad.numpy().sum()
    dr = r.grad.numpy().sum()
    np.testing.assert_allclose(da, 1 / 1.5 + (2 * 2.5 + 1) / 1.5 ** 2, rtol=0.03)
    np.testing.assert_allclose(dr, -2.5 / 1.5 ** 2 - 2 * 2.5 * 3.5 / 1.5 ** 3, rtol=0.03)
    conc = mg.tensor(np.tile([1.0, 2.0, 3.0], (20000, 1)), requires_grad=True)
    y = Dirichlet(conc).rsample()
    y[:, 0].mean().backward()  # d/da_k of E[y_0] = a_0 / sum a
    np.testing.assert_allclose(conc.grad.numpy().sum(0), [5 / 36, -1 / 36, -1 / 36], atol=0.01)
    b = Beta(conc[:, 0], conc[:, 1])
    assert b.rsample().requires_grad and b.has_rsample


def test_sample_shapes_and_dtypes_as_pytorch(torch):
    def shapes(lib):
        D = lib.distributions
        m = lib.tensor([[0.5, 1.5], [2.0, 3.0]], dtype=lib.float64)
        cov = lib.eye(2, dtype=lib.float64) * 2
        made = [D.Exponential(m), D.Laplace(m, 1.0), D.Cauchy(m, m), D.Gumbel(m, m),
                D.LogNormal(m, m), D.HalfNormal(m), D.StudentT(m), D.Gamma(m, m), D.Beta(m, m),
                D.Dirichlet(m), D.Poisson(m), D.Chi2(m), D.HalfCauchy(m), D.Weibull(m, m),
                D.Multinomial(5, m), D.Binomial(3, m / 4), D.Geometric(m / 4),
                D.OneHotCategorical(m), D.MultivariateNormal(m, cov), D.Independent(
                    D.Normal(m, 1.0), 1), D.MixtureSameFamily(D.Categorical(m), D.Normal(m, m))]
        out = []
        for d in made:
            s = d.sample((3,))
            out.append((type(d).__name__, tuple(s.shape), str(s.dtype).split(".")[-1],
                        tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                        tuple(d.sample().shape), repr(d.support).replace("torch.", "").replace("minigrad.", "")))
            if d.has_rsample:
                assert d.rsample((2, 1)).shape == (2, 1) + tuple(d.batch_shape + d.event_shape)
        return out
    assert shapes(mg) == shapes(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exponential_draws_pytorchs_numbers(torch, dtype):
    # its samples are an exponential_ fill divided by the rate, as in PyTorch
    out = []
    for L in (mg, torch):
        L.manual_seed(5)
        rate = L.tensor([0.5, 1.0, 4.0], dtype=getattr(L, dtype), requires_grad=True)
        x = L.distributions.Exponential(rate).rsample((4,))
        x.sum().backward()
        out.append((x.tolist(), rate.grad.tolist(),
                    L.distributions.Exponential(rate).sample((2,)).tolist()))
    assert out[0] == out[1]


def test_multinomial_draws_pytorchs_numbers(torch):
    # total_count categorical draws counted per category, as PyTorch's sample
    out = []
    for L in (mg, torch):
        L.manual_seed(3)
        d = L.distributions.Multinomial(7, L.tensor([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]]))
        s = d.sample((2,))
        out.append((s.tolist(), str(s.dtype).replace("torch.", ""), d.sample().tolist()))
    assert out[0] == out[1]
