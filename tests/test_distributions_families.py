"""The distributions beyond the first four against torch.distributions on the same inputs:
log_prob, entropy, mean, mode, variance, stddev, cdf, icdf and KL values, dtypes and
gradients in float32 and float64; shapes, supports, expand; float64 gradient checks of
log_prob, entropy and KL."""
import numpy as np
import pytest

from test_distributions import _compare

rng = np.random.default_rng(5)
A, B = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
X = rng.standard_normal((4, 2, 3))
Q = rng.uniform(0.05, 0.95, (4, 2, 3))


def pos(t, shift=0.5):
    return t.abs() + shift


def _scalar_outputs(d, x, q=None, cdf=True, mode=True):
    out = [d.log_prob(x), d.entropy(), d.mean, d.variance, d.stddev]
    out += [d.mode] if mode else []
    out += [d.cdf(x), d.icdf(q)] if cdf else []
    return out


def _location_scale(lib, a, b, x, q):
    D = lib.distributions
    out = []
    for cls in (D.Laplace, D.Cauchy, D.Gumbel):
        d = cls(a, pos(b))
        out += [d.log_prob(x), d.entropy(), d.mode, d.cdf(x), d.icdf(q)]
        if cls is not D.Cauchy:
            out += [d.mean, d.variance, d.stddev]
    s = D.StudentT(pos(b, 2.5), a, pos(a))
    out += [s.log_prob(x), s.entropy(), s.mean, s.variance, s.mode]
    out += [D.StudentT(pos(b, 0.2)).log_prob(x), D.Laplace(0.0, 2.0).log_prob(x)]
    return out


def _positive(lib, a, b, x, q):
    D = lib.distributions
    y = pos(x, 0.1)
    out = _scalar_outputs(D.Exponential(pos(a)), y, q)
    out += _scalar_outputs(D.LogNormal(a, pos(b)), y, q)
    out += _scalar_outputs(D.HalfNormal(pos(b)), y, q)
    g = D.Gamma(pos(a), pos(b))
    # PyTorch has no gradient of gammainc in the concentration: compare the one in x
    out += _scalar_outputs(g, y, cdf=False) + [D.Gamma(pos(a).detach(), pos(b)).cdf(y)]
    out += [D.Gamma(pos(a, 1.5), 2.0).mode, D.Exponential(3.0).log_prob(y)]
    out += _scalar_outputs(D.HalfCauchy(pos(b)), y, q, mode=True)[:2] + [D.HalfCauchy(pos(
        b)).cdf(y), D.HalfCauchy(pos(a)).icdf(q), D.HalfCauchy(pos(a)).mode]
    out += _scalar_outputs(D.Weibull(pos(a), pos(b)), y, q)
    chi2 = D.Chi2(pos(a, 1.0))
    out += [chi2.log_prob(y), chi2.entropy(), chi2.mean, chi2.variance, chi2.df,
            D.kl_divergence(chi2, D.Chi2(pos(b))), D.kl_divergence(chi2, D.Gamma(pos(b), 0.5))]
    beta = D.Beta(pos(a), pos(b, 1.2))
    out += _scalar_outputs(beta, q, cdf=False) + [D.Beta(0.5, 2.5).log_prob(q)]
    return out


def _discrete(lib, a, b):
    D = lib.distributions
    counts = lib.tensor(np.array([[0.0, 1, 3], [2, 5, 0]]), dtype=a.dtype)
    p = a.sigmoid()
    out = []
    pois = D.Poisson(pos(b))
    out += [pois.log_prob(counts), pois.mean, pois.variance, pois.mode]
    geo, geo_l = D.Geometric(probs=p), D.Geometric(logits=b)
    out += [geo.log_prob(counts), geo.entropy(), geo.mean, geo.variance, geo.mode, geo.logits,
            geo_l.log_prob(counts), geo_l.probs, geo_l.entropy()]
    binom = D.Binomial(5, probs=p)
    binom_l = D.Binomial(lib.tensor(np.array([[5.0, 6, 7], [5, 9, 5]]), dtype=a.dtype), logits=b)
    out += [binom.log_prob(counts), binom.entropy(), binom.mean, binom.variance, binom.mode,
            binom.enumerate_support(), binom_l.log_prob(counts), binom_l.mean, binom_l.mode,
            binom.logits, binom_l.probs]
    multi = D.Multinomial(6, logits=b)
    six = lib.tensor(np.array([[1.0, 2, 3], [0, 0, 6]]), dtype=a.dtype)
    out += [multi.log_prob(six), multi.entropy(), multi.mean, multi.variance,
            D.Multinomial(4, probs=p).log_prob(lib.tensor(np.array([4.0, 0, 0]), dtype=a.dtype))]
    return out


def _vectors(lib, a, b, x, q):
    D = lib.distributions
    loc = a[0]                                   # (3,)
    m = b.T @ b + lib.eye(3, dtype=a.dtype)      # (3, 3) positive definite
    tril = lib.linalg.cholesky(m)
    value = x[:, 0]                              # (4, 3)
    out = []
    for d, v in ((D.MultivariateNormal(loc, covariance_matrix=m), value),
                 (D.MultivariateNormal(loc, precision_matrix=m), value),
                 (D.MultivariateNormal(a, scale_tril=tril), x)):
        out += [d.log_prob(v), d.entropy(), d.mean, d.variance, d.mode,
                d.covariance_matrix, d.precision_matrix, d.scale_tril]
    out.append(D.MultivariateNormal(a, m).log_prob(x))
    conc = pos(a)
    simplex = q / q.sum(-1, keepdim=True)
    dirichlet = D.Dirichlet(conc)
    out += [dirichlet.log_prob(simplex), dirichlet.entropy(), dirichlet.mean,
            dirichlet.variance, dirichlet.mode, D.Dirichlet(conc * 0.3).mode]
    onehot = D.OneHotCategorical(logits=b)
    hot = lib.eye(3, dtype=a.dtype)[lib.tensor([[0, 2], [1, 1], [2, 0], [0, 0]])]
    out += [onehot.log_prob(hot), onehot.entropy(), onehot.mean, onehot.variance, onehot.mode,
            onehot.enumerate_support(), D.OneHotCategorical(probs=conc).probs]
    ind = D.Independent(D.Normal(a, pos(b)), 1)
    out += [ind.log_prob(x), ind.entropy(), ind.mean, ind.variance, ind.mode]
    out += [D.Independent(D.Normal(x, 1.0), 2).log_prob(x * 0.5)]
    return out


def _built(lib, a, b, x, q):
    D = lib.distributions
    T = D.transforms
    out = []
    squashed = D.TransformedDistribution(D.Normal(a, pos(b)),
                                         [T.TanhTransform(), T.AffineTransform(0.5, 2.0)])
    y = 0.5 + 2.0 * (2 * q - 1) * 0.9
    out += [squashed.log_prob(y), squashed.cdf(y), squashed.icdf(q)]
    flip = D.TransformedDistribution(D.Normal(a, pos(b)), [T.AffineTransform(a, -pos(b))])
    out += [flip.log_prob(x), flip.cdf(x), flip.icdf(q)]
    logistic = D.TransformedDistribution(D.Uniform(0.0, 1.0), T.SigmoidTransform().inv)
    out += [logistic.log_prob(x)]
    for t, v in ((T.SoftplusTransform(), x), (T.PowerTransform(pos(a)), pos(x))):
        out += [t(v), t.inv(t(v)), t.log_abs_det_jacobian(v, t(v))]
    composed = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, a)])
    out += [composed(x), composed.inv(composed(x)), composed.log_abs_det_jacobian(x, composed(x))]
    vec = D.TransformedDistribution(D.Normal(a, 1.0), T.AffineTransform(b, pos(a), event_dim=1))
    out += [vec.log_prob(x)]
    mix = D.MixtureSameFamily(D.Categorical(logits=b), D.Normal(a, pos(b)))  # batch (2,)
    value = x[:, :, 0]
    out += [mix.log_prob(value), mix.mean, mix.variance, mix.cdf(value)]
    gmm = D.MixtureSameFamily(D.Categorical(logits=b[0]),
                              D.Independent(D.Normal(x[:3, 0], pos(x[:3, 1])), 1))
    out += [gmm.log_prob(x[0]), gmm.mean, gmm.variance]
    return out


def _kls(lib, a, b, x, q):
    D = lib.distributions
    kl = D.kl_divergence
    pa, pb = pos(a), pos(b)
    m1 = b.T @ b + lib.eye(3, dtype=a.dtype)
    m2 = a.T @ a + 2 * lib.eye(3, dtype=a.dtype)
    return [kl(D.Exponential(pa), D.Exponential(pb)), kl(D.Gamma(pa, pb), D.Gamma(pb, pa * 2)),
            kl(D.Beta(pa, pb), D.Beta(pb, pa)), kl(D.Dirichlet(pa), D.Dirichlet(pb)),
            kl(D.Laplace(a, pb), D.Laplace(b, pa)), kl(D.Poisson(pa), D.Poisson(pb)),
            kl(D.Cauchy(a, pb), D.Cauchy(b, pa)), kl(D.Gumbel(a, pb), D.Gumbel(b, pa)),
            kl(D.HalfNormal(pa), D.HalfNormal(pb)), kl(D.LogNormal(a, pb), D.LogNormal(b, pa)),
            kl(D.Geometric(a.sigmoid()), D.Geometric(b.sigmoid())),
            kl(D.Binomial(4, a.sigmoid()), D.Binomial(4, logits=b)),
            kl(D.Uniform(a, a + pa), D.Uniform(a - pb, a + pa + 1)),
            kl(D.MultivariateNormal(a, m1), D.MultivariateNormal(b[1], scale_tril=lib.linalg.
                                                                  cholesky(m2))),
            kl(D.Independent(D.Normal(a, pb), 1), D.Independent(D.Normal(b, pa), 1)),
            kl(D.OneHotCategorical(logits=a), D.OneHotCategorical(probs=pb)),
            kl(D.Independent(D.Normal(a, pb), 1), D.Independent(D.Normal(0.0, 1.0).expand((2, 3)), 1))]


PROGRAMS = {"location_scale": _location_scale, "positive": _positive, "vectors": _vectors,
            "built": _built, "kl": _kls}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_matches_torch(torch, name, dtype):
    # digamma's gradient is trigamma, which PyTorch computes to about 5e-10 (minigrad's to
    # rounding, see the notes on special functions)
    _compare(torch, PROGRAMS[name], [A, B, X, Q], dtype,
             grad_tol=1e-9 if dtype == "float64" else None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_discrete_matches_torch(torch, dtype):
    _compare(torch, _discrete, [A, B], dtype)
