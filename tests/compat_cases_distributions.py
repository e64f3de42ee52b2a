"""Compatibility cases: torch.distributions (Bernoulli, Categorical, Normal, Uniform,
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
