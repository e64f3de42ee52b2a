"""NegativeBinomial, RelaxedBernoulli, RelaxedOneHotCategorical, Pareto, InverseGamma,
Kumaraswamy, LogisticNormal and ContinuousBernoulli against torch.distributions: log_prob,
entropy, moments, cdf/icdf, their KL pairs (values, dtypes, gradients in float32 and float64);
rsample's gradient given PyTorch's noise; shapes, supports, expand and argument errors; float64
gradient checks."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad import distributions as D

from test_distributions import _compare

rng = np.random.default_rng(31)
A, B = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
Q = rng.uniform(0.05, 0.95, (4, 2, 3))
K = rng.integers(0, 7, (4, 2, 3)).astype(float)


def pos(t, shift=0.5):
    return t.abs() + shift


def _negative_binomial(lib, a, b, q, k):
    D = lib.distributions
    by_p = D.NegativeBinomial(pos(a), probs=q[0] * 0.9)
    by_l = D.NegativeBinomial(pos(b, 1.5), logits=a)
    out = []
    for d in (by_p, by_l):
        out += [d.log_prob(k), d.mean, d.mode, d.variance, d.stddev, d.probs, d.logits]
    out += [D.NegativeBinomial(3.0, probs=q[0]).log_prob(k),
            D.NegativeBinomial(0.0 * pos(a), logits=b).log_prob(k * 0)]  # the point mass at 0
    return out


def _relaxed(lib, a, b, q, k):
    D = lib.distributions
    t = pos(a[0, 0], 0.3)
    rb, rb_l = D.RelaxedBernoulli(t, probs=q[0]), D.RelaxedBernoulli(t, logits=b)
    lrb = D.relaxed_bernoulli.LogitRelaxedBernoulli(t, logits=b)
    out = [rb.log_prob(q), rb_l.log_prob(q), rb.probs, rb.logits, rb_l.probs, lrb.log_prob(a)]
    simplex = q / q.sum(-1, keepdim=True)
    rc = D.RelaxedOneHotCategorical(t, logits=b)
    rc_p = D.RelaxedOneHotCategorical(pos(b[1, 1], 0.2), probs=pos(a))
    erc = D.relaxed_categorical.ExpRelaxedCategorical(t, logits=b)
    out += [rc.log_prob(simplex), rc_p.log_prob(simplex), rc.probs, rc_p.logits,
            erc.log_prob(simplex.log())]
    return out


def _positive(lib, a, b, q, k):
    D = lib.distributions
    y = pos(q, 2.5) * 2
    par = D.Pareto(pos(a), pos(b, 1.2))
    ig = D.InverseGamma(pos(a), pos(b))
    ku = D.Kumaraswamy(pos(a), pos(b, 0.8))
    out = [par.log_prob(y), par.entropy(), par.mean, par.variance, par.mode, par.cdf(y),
           par.icdf(q), D.Pareto(1.0, pos(b, 0.1)).mean, D.Pareto(1.0, pos(b, 0.1)).variance]
    out += [ig.log_prob(y), ig.entropy(), ig.mean, ig.variance, ig.mode,
            D.InverseGamma(pos(a, 2.5), 1.5).mean, D.InverseGamma(pos(a, 2.5), 1.5).variance]
    out += [ku.log_prob(q), ku.entropy(), ku.mean, ku.variance,
            D.Kumaraswamy(pos(a, 1.1), pos(b, 1.1)).mode, ku.mode]
    ln = D.LogisticNormal(a, pos(b))
    simplex = lib.cat([q, q[..., :1]], -1)
    simplex = simplex / simplex.sum(-1, keepdim=True)
    out += [ln.log_prob(simplex), ln.loc, ln.scale]
    return out


def _continuous_bernoulli(lib, a, b, q, k):
    D = lib.distributions
    # 0.4995 and 0.5 fall in the Taylor-series region around 1/2
    p = lib.stack([q[0, 0], q[0, 1] * 0 + lib.tensor([0.4995, 0.5, 0.5007], dtype=q.dtype)])
    out = []
    for d in (D.ContinuousBernoulli(p), D.ContinuousBernoulli(logits=b * 3)):
        out += [d.log_prob(q), d.entropy(), d.mean, d.variance, d.stddev, d.cdf(q), d.icdf(q),
                d.probs, d.logits]
    return out


def _kls(lib, a, b, q, k):
    D = lib.distributions
    kl = D.kl_divergence
    pa, pb = pos(a), pos(b)
    par = D.Pareto(pa, pb + 2.5)
    cb, cb2 = D.ContinuousBernoulli(q[0]), D.ContinuousBernoulli(logits=b)
    return [kl(par, D.Pareto(pa * 0.8, pb)), kl(par, D.Pareto(pa * 1.2, pb)),
            kl(par, D.Exponential(pb)), kl(par, D.Gamma(pa, pb)), kl(par, D.Normal(a, pb)),
            kl(D.Pareto(pa, pb), D.Normal(a, pb)), kl(D.Uniform(pa, pa + pb), D.Pareto(pa, pb)),
            kl(D.Uniform(pa, pa + pb), D.Pareto(pa + 0.1, pb)),
            kl(D.Normal(a, pb), par), kl(par, D.Uniform(a, pa + 9)), kl(D.Gamma(pa, pb), par),
            kl(cb, cb2), kl(cb, D.Exponential(pb)), kl(cb, D.Normal(a, pb)),
            kl(cb, D.Uniform(-pa, pb + 1)), kl(cb, D.Uniform(a * 0, pb + 1)),
            kl(D.Beta(pa, pb), cb2), kl(D.Uniform(q[0] * 0.5, q[0] * 0.5 + 0.3), cb2),
            kl(D.Laplace(a, pb), cb), kl(cb, par),
            kl(D.InverseGamma(pa, pb), D.InverseGamma(pb, pa))]


PROGRAMS = {"negative_binomial": _negative_binomial, "relaxed": _relaxed,
            "positive": _positive, "continuous_bernoulli": _continuous_bernoulli, "kl": _kls}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(torch, name, dtype):
    # digamma's gradient is trigamma, which PyTorch computes to about 5e-10
    _compare(torch, PROGRAMS[name], [A, B, Q, K], dtype,
             grad_tol=1e-9 if dtype == "float64" else 3e-5)


U = rng.uniform(0.01, 0.99, (5, 2, 3))


def _with_noise(lib, monkeypatch, u):
    """lib.rand (and the modules' own imports of minigrad.rand) return `u` in its dtype."""
    def fake(*shape, dtype=None, **kwargs):
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        assert shape == u.shape, (shape, u.shape)
        return lib.tensor(u, dtype=dtype)
    if lib is mg:
        import minigrad.distributions.continuous_bernoulli as cb
        import minigrad.distributions.relaxed_bernoulli as rb
        import minigrad.distributions.relaxed_categorical as rc
        import minigrad.distributions.uniform as un
        for module in (cb, rb, rc, un):
            monkeypatch.setattr(module, "rand", fake)
    else:
        monkeypatch.setattr(lib, "rand", fake)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rsample_and_its_gradients_match_torch_given_the_same_noise(torch, monkeypatch, dtype):
    def program(lib, a, b):
        _with_noise(lib, monkeypatch, U)
        D = lib.distributions
        t = pos(a[0, 0], 0.2)
        return [D.RelaxedBernoulli(t, logits=b).rsample((5,)),
                D.RelaxedBernoulli(t, probs=a.sigmoid()).rsample((5,)),
                D.RelaxedOneHotCategorical(t, logits=b).rsample((5,)),
                D.ContinuousBernoulli(a.sigmoid()).rsample((5,)),
                D.ContinuousBernoulli(logits=b).rsample((5,)),
                D.Kumaraswamy(pos(a), pos(b)).rsample((5,))]
    _compare(torch, program, [A, B], dtype, grad_tol=1e-4 if dtype == "float32" else None)


def test_shapes_supports_and_expand(torch):
    a, b, q = (lambda lib: lib.tensor(A)), (lambda lib: lib.tensor(B)), (lambda lib: lib.tensor(Q))

    def make(lib):
        D = lib.distributions
        return [D.NegativeBinomial(pos(a(lib)), logits=b(lib)),
                D.NegativeBinomial(2.0, probs=0.3),
                D.RelaxedBernoulli(lib.tensor(0.5), logits=b(lib)),
                D.RelaxedBernoulli(lib.tensor(0.5), probs=0.3),
                D.RelaxedOneHotCategorical(lib.tensor(0.5), logits=b(lib)),
                D.Pareto(pos(a(lib)), 2.0), D.InverseGamma(pos(a(lib)), pos(b(lib))),
                D.Kumaraswamy(pos(a(lib)), 3.0), D.LogisticNormal(a(lib), pos(b(lib))),
                D.LogisticNormal(0.0, 1.0), D.ContinuousBernoulli(q(lib)[0]),
                D.ContinuousBernoulli(0.3)]

    for dm, dt in zip(make(mg), make(torch)):
        name = type(dt).__name__
        assert tuple(dm.batch_shape) == tuple(dt.batch_shape), name
        assert tuple(dm.event_shape) == tuple(dt.event_shape), name
        assert repr(dm.support) == repr(dt.support) or name == "Pareto", name
        assert dm.has_rsample == dt.has_rsample, name
        for shape in ((), (4,), (2, 1)):
            assert tuple(dm.sample(shape).shape) == tuple(dt.sample(shape).shape), name
            if dt.has_rsample:
                assert tuple(dm.rsample(shape).shape) == tuple(dt.rsample(shape).shape), name
        big = (5,) + tuple(dt.batch_shape)
        em, et = dm.expand(big), dt.expand(big)
        assert type(em) is type(dm) and tuple(em.batch_shape) == tuple(et.batch_shape), name
        x = et.sample()
        np.testing.assert_allclose(em.log_prob(mg.tensor(x.numpy())).numpy(),
                                   et.log_prob(x).numpy(), rtol=1e-5, atol=1e-5, err_msg=name)
    assert np.all(D.NegativeBinomial(3.0, probs=0.4).sample((2000,)).numpy() % 1 == 0)
    draws = D.RelaxedOneHotCategorical(mg.tensor(0.3), logits=mg.tensor(B)).sample((50,))
    np.testing.assert_allclose(draws.sum(-1).numpy(), 1.0, rtol=1e-5)


def test_sample_moments():
    mg.manual_seed(0)
    nb = D.NegativeBinomial(mg.tensor([2.5, 7.0]), probs=mg.tensor([0.3, 0.6]))
    draws = nb.sample((20000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), nb.mean.numpy(), rtol=0.05)
    np.testing.assert_allclose(draws.var(0), nb.variance.numpy(), rtol=0.1)
    for d in (D.Pareto(mg.tensor(1.5), mg.tensor(4.0)), D.InverseGamma(4.0, 2.0),
              D.Kumaraswamy(2.0, 3.0), D.ContinuousBernoulli(mg.tensor(0.8))):
        x = d.sample((20000,)).numpy()
        np.testing.assert_allclose(x.mean(), d.mean.item(), rtol=0.03, err_msg=type(d).__name__)


def test_argument_errors_match_torch(torch):
    for lib in (torch, mg):
        D = lib.distributions
        cases = [lambda: D.NegativeBinomial(-1.0, probs=0.5, validate_args=True),
                 lambda: D.NegativeBinomial(2.0, probs=1.0, validate_args=True),
                 lambda: D.Pareto(-1.0, 2.0, validate_args=True),
                 lambda: D.InverseGamma(1.0, 0.0, validate_args=True),
                 lambda: D.Kumaraswamy(1.0, -2.0, validate_args=True),
                 lambda: D.LogisticNormal(0.0, -1.0, validate_args=True),
                 lambda: D.RelaxedBernoulli(lib.tensor(1.0), probs=1.5, validate_args=True),
                 lambda: D.RelaxedOneHotCategorical(lib.tensor(1.0), probs=lib.tensor(
                     [0.5, -0.1]), validate_args=True)]
        for make in cases:
            with pytest.raises(ValueError, match="to satisfy the constraint"):
                make()
        with pytest.raises(ValueError, match="The parameter probs has invalid values"):
            D.ContinuousBernoulli(1.5, validate_args=True)
        with pytest.raises(ValueError, match="but not both"):
            D.NegativeBinomial(2.0, probs=0.5, logits=0.0)
        with pytest.raises(ValueError, match="but not both"):
            D.RelaxedBernoulli(lib.tensor(1.0))
        with pytest.raises(ValueError, match="within the support"):
            D.Pareto(2.0, 1.0, validate_args=True).log_prob(lib.tensor([1.5]))
        with pytest.raises(ValueError, match="within the support"):
            D.NegativeBinomial(2.0, probs=0.5, validate_args=True).log_prob(lib.tensor([1.5]))
        with pytest.raises(NotImplementedError, match="different exponential families"):
            D.kl_divergence(D.ContinuousBernoulli(0.3), _OtherFamily(lib))


def _OtherFamily(lib):
    class Other(lib.distributions.ExponentialFamily):
        pass
    return Other(validate_args=False)


def test_exponential_family_entropy_and_bregman_kl_match_torch(torch):
    def program(lib, a, b):
        D = lib.distributions
        p, q = D.ContinuousBernoulli(logits=a), D.ContinuousBernoulli(logits=b * 2)
        return [D.ExponentialFamily.entropy(p), _bregman(lib, p, q)]
    _compare(torch, program, [A, B], "float64")


def _bregman(lib, p, q):
    """The ExponentialFamily pair of kl_divergence, called directly (ContinuousBernoulli's own
    pair takes precedence in kl_divergence)."""
    if lib is mg:
        from minigrad.distributions.kl_exp_family import _kl_expfamily_expfamily
    else:
        from torch.distributions.kl import _kl_expfamily_expfamily
    return _kl_expfamily_expfamily(p, q)


def test_gradchecks():
    a = mg.tensor(A, requires_grad=True)
    b = mg.tensor(B, requires_grad=True)
    q = mg.tensor(Q)
    k = mg.tensor(K)

    def log_probs(a, b):
        t = pos(a[0, 0], 0.3)
        simplex = q / q.sum(-1, keepdim=True)
        y = pos(q, 2.5) * 2
        return [D.NegativeBinomial(pos(a), logits=b).log_prob(k),
                D.RelaxedBernoulli(t, logits=b).log_prob(q),
                D.RelaxedOneHotCategorical(t, logits=b).log_prob(simplex),
                D.Pareto(pos(a), pos(b)).log_prob(y), D.Pareto(pos(a), pos(b)).entropy(),
                D.InverseGamma(pos(a), pos(b)).log_prob(y),
                D.Kumaraswamy(pos(a), pos(b)).log_prob(q),
                D.Kumaraswamy(pos(a), pos(b)).entropy(),
                D.ContinuousBernoulli(logits=b).log_prob(q),
                D.ContinuousBernoulli(logits=b).entropy(), D.ContinuousBernoulli(
                    logits=b).cdf(q), D.ContinuousBernoulli(logits=b).icdf(q),
                D.kl_divergence(D.Pareto(pos(a), pos(b, 2.5)), D.Normal(a, pos(b))),
                D.kl_divergence(D.ContinuousBernoulli(logits=a), D.ContinuousBernoulli(
                    logits=b))]

    def total(a, b):
        return sum((o * (i + 1)).sum() for i, o in enumerate(log_probs(a, b)))

    def rsamples(a, b):
        mg.manual_seed(4)  # the same noise at every evaluation
        t = pos(a[0, 0], 0.3)
        out = [D.RelaxedBernoulli(t, logits=b).rsample((2,)),
               D.RelaxedOneHotCategorical(t, logits=b).rsample((2,)),
               D.ContinuousBernoulli(logits=b).rsample((2,)),
               D.Kumaraswamy(pos(a), pos(b)).rsample((2,)),
               D.Pareto(pos(a), pos(b)).rsample((2,)), D.LogisticNormal(a, pos(b)).rsample()]
        return sum((o * (i + 1)).sum() for i, o in enumerate(out))

    assert gradcheck(total, [a, b])
    assert gradcheck(rsamples, [a, b])
