"""Compatibility cases: torch.distributions (every distribution minigrad has, the transforms,
kl_divergence, register_kl and the Distribution base). Samples come from each library's own
random stream, so the cases that sample compare shapes and dtypes only."""
from compat_table import case, f32

CASES = []
add = CASES.append


@add
@case("distributions.Categorical", "distributions.kl_divergence",
      inputs=(f32(2, 4, low=0.1, high=1.0), f32(2, 4)))
def _(lib, p, logits):
    D = lib.distributions
    by_p, by_l = D.Categorical(probs=p), D.Categorical(logits=logits)
    ids = lib.tensor([[3, 0], [1, 1], [2, 0]])
    return (by_p.log_prob(ids), by_p.entropy(), by_p.probs, by_p.logits, by_l.log_prob(ids),
            by_l.entropy(), by_l.probs, by_l.logits, by_l.mode, by_l.batch_shape,
            by_l.param_shape, by_l.enumerate_support(), D.kl_divergence(by_p, by_l),
            D.Categorical(p[0]).log_prob(lib.tensor(2)), repr(by_l.support))


@add
@case("distributions.Categorical", compare="meta", inputs=(f32(3, 5, low=0.1, high=1.0),))
def _(lib, p):
    c = lib.distributions.Categorical(p)
    return c.sample(), c.sample((4, 2)), c.sample([7])


@add
@case("distributions.Categorical", compare="raises", match="constraint Simplex", inputs=())
def _(lib):
    # validate_args given: torch.compile turns PyTorch's default off for the whole process
    return lib.distributions.Categorical(probs=lib.tensor([0.5, -0.2, 0.7]), validate_args=True)


@add
@case("distributions.Normal", "distributions.kl_divergence",
      inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0), f32(4, 2, 3)))
def _(lib, loc, scale, x):
    D = lib.distributions
    n, m = D.Normal(loc, scale), D.Normal(0.5, 2.0)
    return (n.log_prob(x), n.entropy(), n.mean, n.stddev, n.variance, n.mode, m.log_prob(x),
            m.entropy(), D.Normal(loc, 1.5).log_prob(x), D.kl_divergence(n, m),
            D.kl_divergence(m, D.Normal(loc[0], scale[1])), n.batch_shape, repr(m))


@add
@case("distributions.Normal", compare="meta", inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0)))
def _(lib, loc, scale):
    n = lib.distributions.Normal(loc, scale)
    # the noise differs between the libraries, so the gradients of rsample are not compared
    return (n.sample(), n.sample((5,)), n.rsample((2, 1)).detach(), n.rsample().requires_grad,
            n.sample().requires_grad)


@add
@case("distributions.Normal", compare="raises", match="to be within the support",
      inputs=())
def _(lib):
    normal = lib.distributions.Normal(0.0, 1.0, validate_args=True)
    return normal.log_prob(lib.tensor(float("nan")))


@add
@case("distributions.Distribution", "distributions.register_kl", inputs=(f32(3),))
def _(lib, x):
    D = lib.distributions

    class Shifted(D.Normal):
        pass

    @D.register_kl(Shifted, Shifted)
    def _kl(p, q):
        return (p.loc - q.loc).abs()

    base = D.Distribution((2,), validate_args=False)
    return (D.kl_divergence(Shifted(x, 1.0), Shifted(x * 2, 1.0)), base.batch_shape,
            base.event_shape, isinstance(D.Normal(0.0, 1.0), D.Distribution),
            D.kl_divergence(D.Normal(x, 1.0), Shifted(x * 0, 2.0)))


@add
@case("distributions.Bernoulli", "distributions.kl_divergence",
      inputs=(f32(2, 3, low=0.05, high=0.95), f32(2, 3)))
def _(lib, p, logits):
    D = lib.distributions
    by_p, by_l = D.Bernoulli(probs=p), D.Bernoulli(logits=logits)
    value = lib.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    return (by_p.log_prob(value), by_p.entropy(), by_p.logits, by_p.mean, by_p.variance,
            by_l.log_prob(value), by_l.entropy(), by_l.probs, by_l.mode, by_l.batch_shape,
            by_l.enumerate_support(), D.kl_divergence(by_p, by_l), repr(D.Bernoulli(0.5)),
            D.Bernoulli(logits=logits[0]).log_prob(lib.tensor(1.0)))


@add
@case("distributions.Bernoulli", compare="meta", inputs=(f32(2, 3, low=0.05, high=0.95),))
def _(lib, p):
    b = lib.distributions.Bernoulli(p)
    return b.sample(), b.sample((4,)), lib.distributions.Bernoulli(0.3).sample((2,))


@add
@case("distributions.Uniform", inputs=(f32(2, 3, low=-2, high=0), f32(2, 3, low=0.5, high=2),
                                       f32(4, 2, 3, low=0.1, high=0.9)))
def _(lib, low, width, q):
    D = lib.distributions
    u = D.Uniform(low, low + width)
    inside = u.icdf(q)
    return (u.log_prob(inside), u.entropy(), u.mean, u.stddev, u.variance, u.cdf(inside),
            inside, u.mode.detach(), u.batch_shape, D.Uniform(0.0, 2.0).log_prob(q),
            D.Uniform(low, 1.0, validate_args=False).log_prob(q - 1.0))


@add
@case("distributions.Uniform", compare="meta", inputs=(f32(2, 3, low=-2, high=0),))
def _(lib, low):
    u = lib.distributions.Uniform(low, low + 1.0)
    return u.sample(), u.sample((4,)), u.rsample((2,)).detach(), u.rsample().requires_grad


@add
@case("distributions.Normal.cdf", "distributions.Normal.icdf", "distributions.Distribution.expand",
      inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0), f32(4, 2, 3), f32(2, 3, low=0.05,
                                                                         high=0.95)))
def _(lib, loc, scale, x, q):
    n = lib.distributions.Normal(loc, scale)
    wide = n.expand((4, 2, 3))
    return n.cdf(x), n.icdf(q), wide.log_prob(x), wide.batch_shape, wide.cdf(x), wide.mean


@add
@case("distributions.Exponential", "distributions.Laplace", "distributions.Cauchy",
      "distributions.Gumbel", "distributions.HalfNormal", "distributions.LogNormal",
      "distributions.StudentT",
      inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0), f32(4, 2, 3, low=0.1, high=3.0),
              f32(2, 3, low=0.05, high=0.95)))
def _(lib, loc, scale, x, q):
    D = lib.distributions
    out = []
    for d in (D.Exponential(scale), D.Laplace(loc, scale), D.Cauchy(loc, scale),
              D.Gumbel(loc, scale), D.HalfNormal(scale), D.LogNormal(loc, scale)):
        out += [d.log_prob(x), d.entropy(), d.cdf(x), d.icdf(q), d.mode, d.batch_shape,
                repr(d.support), d.has_rsample]
        if not isinstance(d, D.Cauchy):
            out += [d.mean, d.variance, d.stddev]
    t = D.StudentT(scale + 2.0, loc, scale)
    return out + [t.log_prob(x), t.entropy(), t.mean, t.variance, D.StudentT(3.0).log_prob(x)]


@add
@case("distributions.Gamma", "distributions.Beta", "distributions.Dirichlet",
      inputs=(f32(2, 3, low=0.5, high=3.0), f32(2, 3, low=0.5, high=3.0),
              f32(4, 2, 3, low=0.05, high=0.95)))
def _(lib, a, b, x):
    D = lib.distributions
    g, beta, dirichlet = D.Gamma(a, b), D.Beta(a, b), D.Dirichlet(a)
    simplex = x / x.sum(-1, keepdim=True)
    return (g.log_prob(x), g.entropy(), g.mean, g.mode, g.variance, beta.log_prob(x),
            beta.entropy(), beta.mean, beta.mode, beta.variance, beta.concentration1,
            dirichlet.log_prob(simplex), dirichlet.entropy(), dirichlet.mean, dirichlet.mode,
            dirichlet.variance, dirichlet.event_shape, D.kl_divergence(g, D.Gamma(b, a)),
            D.kl_divergence(beta, D.Beta(b, a)), D.kl_divergence(dirichlet, D.Dirichlet(b)))


@add
@case("distributions.Gamma", "distributions.Beta", "distributions.Dirichlet", compare="meta",
      inputs=(f32(2, 3, low=0.5, high=3.0),))
def _(lib, a):
    D = lib.distributions
    # the draws differ between the libraries: their shapes, dtypes and graph do not
    return (D.Gamma(a, 2.0).rsample((4,)).detach(), D.Beta(a, a).sample((2,)),
            D.Dirichlet(a).rsample((5,)).detach(), D.Gamma(a, 1.0).rsample().requires_grad)


@add
@case("distributions.Poisson", "distributions.Binomial", "distributions.Geometric",
      inputs=(f32(2, 3, low=0.5, high=4.0), f32(2, 3, low=0.1, high=0.9), f32(2, 3)))
def _(lib, rate, p, logits):
    D = lib.distributions
    k = lib.tensor([[0.0, 1.0, 4.0], [2.0, 0.0, 3.0]])
    pois, binom, geo = D.Poisson(rate), D.Binomial(4, probs=p), D.Geometric(logits=logits)
    return (pois.log_prob(k), pois.mean, pois.mode, binom.log_prob(k), binom.entropy(),
            binom.mean, binom.mode, binom.variance, binom.logits,
            binom.enumerate_support(), geo.log_prob(k), geo.entropy(), geo.probs, geo.mean,
            D.kl_divergence(pois, D.Poisson(rate * 2)),
            D.kl_divergence(binom, D.Binomial(4, logits=logits)),
            D.kl_divergence(geo, D.Geometric(p)), pois.sample((3,)).shape)


@add
@case("distributions.MultivariateNormal",
      inputs=(f32(2, 3), f32(3, 3), f32(5, 2, 3)))
def _(lib, loc, m, x):
    D = lib.distributions
    cov = m @ m.T + lib.eye(3)
    by_cov = D.MultivariateNormal(loc, covariance_matrix=cov)
    by_prec = D.MultivariateNormal(loc[0], precision_matrix=cov)
    by_tril = D.MultivariateNormal(loc, scale_tril=lib.linalg.cholesky(cov))
    return (by_cov.log_prob(x), by_cov.entropy(), by_cov.variance, by_cov.scale_tril,
            by_cov.precision_matrix, by_prec.log_prob(x), by_prec.covariance_matrix,
            by_tril.log_prob(x), by_tril.covariance_matrix, by_cov.batch_shape,
            by_cov.event_shape, by_cov.rsample((4,)).shape,
            D.kl_divergence(by_cov, D.MultivariateNormal(loc * 0, lib.eye(3) * 2)))


@add
@case("distributions.Independent", "distributions.OneHotCategorical",
      "distributions.MixtureSameFamily",
      inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0), f32(4, 2, 3)))
def _(lib, loc, scale, x):
    D = lib.distributions
    diag = D.Independent(D.Normal(loc, scale), 1)
    standard = D.Independent(D.Normal(lib.zeros(2, 3), 1.0), 1)
    onehot = D.OneHotCategorical(logits=loc)
    hot = lib.eye(3)[lib.tensor([[0, 2], [1, 1]])]
    mix = D.MixtureSameFamily(D.Categorical(logits=scale), D.Normal(loc, scale))
    gmm = D.MixtureSameFamily(D.Categorical(logits=loc[0, :2]), D.Independent(D.Normal(
        x[0], scale), 1))
    return (diag.log_prob(x), diag.entropy(), diag.batch_shape, diag.event_shape,
            D.kl_divergence(diag, standard), onehot.log_prob(hot), onehot.entropy(),
            onehot.mode, onehot.enumerate_support(), onehot.sample((3,)).shape,
            mix.log_prob(x[..., 0]), mix.mean, mix.variance, mix.batch_shape,
            gmm.log_prob(x), gmm.mean, gmm.sample((5,)).shape,
            D.kl_divergence(onehot, D.OneHotCategorical(probs=scale)))


@add
@case("distributions.TransformedDistribution", "distributions.transforms",
      "distributions.TanhTransform", "distributions.AffineTransform",
      "distributions.ExpTransform", "distributions.SigmoidTransform",
      "distributions.ComposeTransform", "distributions.AbsTransform",
      "distributions.Transform", "distributions.identity_transform",
      inputs=(f32(2, 3), f32(2, 3, low=0.3, high=2.0), f32(2, 3, low=-0.95, high=0.95)))
def _(lib, loc, scale, y):
    D = lib.distributions
    T = D.transforms
    # SAC's policy: a Normal squashed by tanh, then scaled to the action bounds
    policy = D.TransformedDistribution(D.Normal(loc, scale),
                                       [D.TanhTransform(cache_size=1), D.AffineTransform(0.0, 2.0)])
    compose = D.ComposeTransform([D.ExpTransform(), D.AffineTransform(1.0, scale)])
    sig = D.SigmoidTransform()
    return (policy.log_prob(2 * y), policy.batch_shape, repr(policy.support),
            policy.rsample((3,)).shape, compose(loc), compose.inv(compose(loc)),
            compose.log_abs_det_jacobian(loc, compose(loc)), sig(loc), sig.inv(sig(loc)),
            sig.log_abs_det_jacobian(loc, sig(loc)), T.AbsTransform()(loc),
            T.identity_transform(loc), isinstance(sig, D.Transform),
            D.TransformedDistribution(D.Normal(loc, scale), T.ExpTransform()).log_prob(scale))


@add
@case("distributions.Chi2", "distributions.HalfCauchy", "distributions.Weibull",
      "distributions.Multinomial", "distributions.PowerTransform",
      "distributions.SoftplusTransform",
      inputs=(f32(2, 3, low=0.5, high=3.0), f32(2, 3, low=0.5, high=3.0),
              f32(4, 2, 3, low=0.1, high=3.0), f32(2, 3, low=0.05, high=0.95)))
def _(lib, a, b, x, q):
    D = lib.distributions
    chi2, half, weibull = D.Chi2(a), D.HalfCauchy(b), D.Weibull(a, b)
    multi = D.Multinomial(5, probs=a)
    counts = lib.tensor([[1.0, 0.0, 4.0], [2.0, 2.0, 1.0]])
    power, soft = D.PowerTransform(b), D.SoftplusTransform()
    return (chi2.log_prob(x), chi2.entropy(), chi2.df, chi2.mean, half.log_prob(x),
            half.entropy(), half.cdf(x), half.icdf(q), half.mode, weibull.log_prob(x),
            weibull.entropy(), weibull.mean, weibull.variance, weibull.cdf(x), weibull.icdf(q),
            multi.log_prob(counts), multi.entropy(), multi.mean, multi.variance,
            multi.sample((3,)).shape, multi.event_shape, power(a), power.inv(power(a)),
            power.log_abs_det_jacobian(a, power(a)), soft(x), soft.inv(soft(x)),
            soft.log_abs_det_jacobian(x, soft(x)), D.kl_divergence(chi2, D.Chi2(b)))
