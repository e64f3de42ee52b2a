"""Compatibility cases: the torch.distributions names added after the first table (the simplex,
matrix and structural transforms, biject_to / transform_to, NegativeBinomial, the relaxed
distributions, LowRankMultivariateNormal, VonMises, Pareto, InverseGamma, Kumaraswamy,
LogisticNormal, FisherSnedecor, GeneralizedPareto, ContinuousBernoulli, ExponentialFamily).
Samples come from each library's own stream, so the cases that sample compare shapes and
dtypes only."""
from compat_table import case, f32

CASES = []
add = CASES.append


@add
@case("distributions.SoftmaxTransform", "distributions.StickBreakingTransform",
      "distributions.CorrCholeskyTransform", inputs=(f32(4, 3),))
def _(lib, x):
    D = lib.distributions
    out = []
    for t in (D.StickBreakingTransform(), D.CorrCholeskyTransform()):
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y), t.forward_shape((5, 3)),
                t.inverse_shape(tuple(y.shape)), repr(t.codomain), t.bijective]
    soft = D.SoftmaxTransform()
    return out + [soft(x), soft.inv(soft(x)), soft.bijective, repr(soft.domain)]


@add
@case("distributions.LowerCholeskyTransform", "distributions.PositiveDefiniteTransform",
      inputs=(f32(2, 3, 3),), rtol=1e-4, atol=1e-5)
def _(lib, m):
    D = lib.distributions
    low, pd = D.LowerCholeskyTransform(), D.PositiveDefiniteTransform()
    return low(m), low.inv(low(m)), pd(m), pd.inv(pd(m)), low.event_dim, repr(pd.codomain)


@add
@case("distributions.ReshapeTransform", "distributions.IndependentTransform",
      "distributions.CatTransform", "distributions.StackTransform", inputs=(f32(3, 2, 4),))
def _(lib, x):
    D = lib.distributions
    exp, sig = D.ExpTransform(), D.SigmoidTransform()
    out = []
    for t in (D.ReshapeTransform((2, 4), (8,)), D.IndependentTransform(exp, 2),
              D.CatTransform([D.IndependentTransform(exp, 1), sig], -1, [3, 1]),
              D.StackTransform([exp, sig], 1)):
        y = t(x)
        out += [y, t.inv(y), t.log_abs_det_jacobian(x, y), t.domain.event_dim,
                t.codomain.event_dim, t.forward_shape((3, 2, 4))]
    return out


@add
@case("distributions.biject_to", "distributions.transform_to", inputs=(f32(4, 3), f32(3, 3)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, m):
    D = lib.distributions
    C = D.constraints
    out = []
    for c in (C.positive, C.greater_than(1.5), C.less_than(0.0), C.unit_interval,
              C.interval(-1.0, 2.0), C.simplex, C.real_vector, C.corr_cholesky,
              C.independent(C.positive, 1)):
        for registry in (D.biject_to, D.transform_to):
            t = registry(c)
            out += [t(x), t.inv(t(x)), type(t).__name__]
    for c in (C.lower_cholesky, C.positive_definite):
        out += [D.transform_to(c)(m), type(D.transform_to(c)).__name__]
    return out


@add
@case("distributions.biject_to", compare="raises", match="Cannot transform _LowerCholesky",
      inputs=())
def _(lib):
    return lib.distributions.biject_to(lib.distributions.constraints.lower_cholesky)


@add
@case("distributions.CumulativeDistributionTransform", inputs=(f32(2, 3),
                                                               f32(2, 3, low=0.5, high=2.0)))
def _(lib, x, s):
    t = lib.distributions.CumulativeDistributionTransform(lib.distributions.Normal(x * 0, s))
    return t(x), t.inv(t(x)), t.log_abs_det_jacobian(x, t(x)), t.sign


@add
@case("distributions.NegativeBinomial", inputs=(f32(2, 3, low=0.5, high=4.0),
                                                f32(2, 3, low=0.05, high=0.9), f32(2, 3)))
def _(lib, r, p, logits):
    D = lib.distributions
    k = lib.tensor([[[0.0, 3, 1], [2, 7, 0]], [[5.0, 0, 2], [1, 1, 4]]])
    out = []
    for d in (D.NegativeBinomial(r, probs=p), D.NegativeBinomial(r, logits=logits)):
        out += [d.log_prob(k), d.mean, d.mode, d.variance, d.probs, d.logits, d.batch_shape,
                tuple(d.sample((3,)).shape), d.expand((2, 2, 3)).log_prob(k)]
    return out


@add
@case("distributions.RelaxedBernoulli", "distributions.RelaxedOneHotCategorical",
      inputs=(f32(2, 3, low=0.05, high=0.95), f32(2, 3)))
def _(lib, p, logits):
    D = lib.distributions
    t = lib.tensor(0.7)
    rb, rc = D.RelaxedBernoulli(t, probs=p), D.RelaxedOneHotCategorical(t, logits=logits)
    simplex = p / p.sum(-1, keepdim=True)
    return (rb.log_prob(p), rb.logits, D.RelaxedBernoulli(t, logits=logits).log_prob(p),
            rc.log_prob(simplex), rc.probs, tuple(rb.rsample((4,)).shape),
            tuple(rc.rsample((4,)).shape), rc.event_shape, repr(rc.support))


@add
@case("distributions.OneHotCategoricalStraightThrough", inputs=(f32(2, 3),))
def _(lib, logits):
    d = lib.distributions.OneHotCategoricalStraightThrough(logits=logits)
    s = d.rsample((5,))
    return tuple(s.shape), s.requires_grad, d.has_rsample, d.log_prob(s.detach()).shape


@add
@case("distributions.LowRankMultivariateNormal", inputs=(f32(2, 4), f32(2, 4, 2),
                                                         f32(4, low=0.5, high=2.0), f32(3, 2, 4)),
      rtol=1e-4, atol=1e-5)
def _(lib, loc, w, d, x):
    D = lib.distributions
    p = D.LowRankMultivariateNormal(loc, w, d)
    q = D.LowRankMultivariateNormal(loc[0], w[1] * 0.5, d + 0.2)
    mvn = D.MultivariateNormal(loc[1], scale_tril=lib.diag(d))
    return (p.log_prob(x), p.entropy(), p.variance, p.covariance_matrix, p.precision_matrix,
            p.scale_tril, D.kl_divergence(p, q), D.kl_divergence(p, mvn),
            D.kl_divergence(mvn, p), tuple(p.rsample((5,)).shape))


@add
@case("distributions.VonMises", "distributions.FisherSnedecor",
      inputs=(f32(2, 3), f32(2, 3, low=0.2, high=8.0), f32(4, 2, 3, low=0.1, high=3.0)))
def _(lib, loc, k, x):
    D = lib.distributions
    vm, fs = D.VonMises(loc, k), D.FisherSnedecor(k, k + 4.5)
    return (vm.log_prob(x), vm.variance, vm.mean, tuple(vm.sample((3,)).shape), fs.log_prob(x),
            fs.mean, fs.variance, tuple(fs.rsample((3,)).shape))


@add
@case("distributions.Pareto", "distributions.InverseGamma", "distributions.Kumaraswamy",
      inputs=(f32(2, 3, low=0.5, high=3.0), f32(2, 3, low=0.5, high=3.0),
              f32(4, 2, 3, low=0.05, high=0.95)))
def _(lib, a, b, q):
    D = lib.distributions
    par, ig, ku = D.Pareto(a, b + 2.0), D.InverseGamma(a, b), D.Kumaraswamy(a, b)
    y = q * 4 + 3.0
    return (par.log_prob(y), par.entropy(), par.mean, par.variance, par.cdf(y), par.icdf(q),
            D.kl_divergence(par, D.Pareto(a * 0.5, b)), D.kl_divergence(par, D.Exponential(b)),
            ig.log_prob(y), ig.entropy(), ig.mean, ig.mode, ku.log_prob(q), ku.entropy(),
            ku.mean, ku.variance, tuple(ku.rsample((2,)).shape))


@add
@case("distributions.GeneralizedPareto", inputs=(f32(2, 3), f32(2, 3, low=0.5, high=2.0),
                                                 f32(4, 2, 3, low=0.05, high=0.95)))
def _(lib, loc, scale, q):
    d = lib.distributions.GeneralizedPareto(loc, scale, loc * 0.1 + 0.1)
    x = d.icdf(q)
    return (x, d.log_prob(x.detach()), d.cdf(x.detach()), d.entropy(), d.mean, d.variance,
            d.mode)


# (float32 gradients summed from terms in the hundreds, and near p = 0.5 the log-normaliser's
# own cancels: both libraries' values there are 4 % from the float64 one, and agree to ~1e-3)
@add
@case("distributions.ContinuousBernoulli", "distributions.ExponentialFamily",
      "distributions.LogisticNormal", inputs=(f32(2, 3, low=0.05, high=0.95), f32(2, 3),
                                              f32(4, 2, 3, low=0.05, high=0.95)),
      rtol=2e-3, atol=1e-3)
def _(lib, p, logits, x):
    D = lib.distributions
    cb, cb2 = D.ContinuousBernoulli(p), D.ContinuousBernoulli(logits=logits)
    ln = D.LogisticNormal(logits, p)
    simplex = lib.cat([x, x[..., :1]], -1)
    return (cb.log_prob(x), cb.entropy(), cb.mean, cb.variance, cb.cdf(x), cb.icdf(x),
            D.kl_divergence(cb, cb2), isinstance(cb, D.ExponentialFamily),
            D.ExponentialFamily.entropy(cb2), ln.log_prob(simplex / simplex.sum(-1, keepdim=True)),
            tuple(ln.rsample((2,)).shape))


@add
@case("distributions.LKJCholesky", inputs=(f32(3, low=0.5, high=3.0), f32(5, 6)))
def _(lib, conc, x):
    D = lib.distributions
    d = D.LKJCholesky(4, conc)
    value = D.biject_to(D.constraints.corr_cholesky)(x)          # (5, 4, 4)
    return (d.log_prob(value[:, None]), D.LKJCholesky(3, 1.5).log_prob(value[:, :3, :3] * 0 +
            D.CorrCholeskyTransform()(x[:, :3])), d.batch_shape, d.event_shape,
            tuple(d.sample((2,)).shape), repr(d.support), d.expand((2, 3)).batch_shape)


@add
@case("distributions.Wishart", inputs=(f32(2, 3, 3), f32(2, low=3.5, high=6.0)), rtol=1e-4,
      atol=1e-5)
def _(lib, a, df):
    D = lib.distributions
    cov = a @ a.mT + lib.eye(3)
    w = D.Wishart(df, covariance_matrix=cov)
    w2 = D.Wishart(df + 1.0, scale_tril=lib.linalg.cholesky(cov.flip(0)))
    value = cov.flip(0) * 2.0
    return (w.log_prob(value), w.entropy(), w.mean, w.variance, w.precision_matrix,
            D.kl_divergence(w, w2), D.Wishart(4.0, precision_matrix=cov).log_prob(value),
            tuple(w.rsample((2,)).shape), w.expand((3, 2)).batch_shape)
