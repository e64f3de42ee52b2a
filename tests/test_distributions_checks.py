"""Float64 gradient checks of the new distributions (log_prob, entropy, cdf, KL, rsample at
a fixed seed), their argument and support errors as PyTorch's (type and wording), expand,
and the transforms' inverses and caches."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.distributions import (Beta, Binomial, Categorical, Cauchy, Chi2, Dirichlet,
                                    Exponential, Gamma, Geometric, Gumbel, HalfCauchy,
                                    HalfNormal, Independent, Laplace, LogNormal,
                                    MixtureSameFamily, Multinomial, MultivariateNormal, Normal,
                                    OneHotCategorical, Poisson, StudentT,
                                    TransformedDistribution, Weibull, kl_divergence)
from minigrad.distributions.transforms import AffineTransform, TanhTransform

rng = np.random.default_rng(3)


def leaf(array):
    return mg.tensor(np.asarray(array, dtype=np.float64), requires_grad=True)


LOC, RAW, X = leaf(rng.standard_normal(3)), leaf(rng.standard_normal(3)), leaf(rng.uniform(
    0.2, 2.0, (2, 3)))


def pos(t):
    return t.abs() + 0.5


SCALAR = [lambda a, b: Exponential(pos(a)), lambda a, b: Laplace(a, pos(b)),
          lambda a, b: Cauchy(a, pos(b)), lambda a, b: Gumbel(a, pos(b)),
          lambda a, b: LogNormal(a, pos(b)), lambda a, b: HalfNormal(pos(b)),
          lambda a, b: StudentT(pos(b) + 1, a, pos(a)), lambda a, b: Gamma(pos(a), pos(b)),
          lambda a, b: HalfCauchy(pos(b)), lambda a, b: Weibull(pos(a), pos(b)),
          lambda a, b: Chi2(pos(a)), lambda a, b: Beta(pos(a), pos(b))]


@pytest.mark.parametrize("i", range(len(SCALAR)))
def test_gradcheck_scalar_families(i):
    make = SCALAR[i]
    value = X if i != len(SCALAR) - 1 else leaf(X.detach().numpy() / 2.5)  # Beta's: in (0, 1)
    assert gradcheck(lambda a, b, x: make(a, b).log_prob(x), [LOC, RAW, value])
    assert gradcheck(lambda a, b: make(a, b).entropy(), [LOC, RAW])
    if i < 6 or SCALAR[i] in SCALAR[-4:-2]:
        assert gradcheck(lambda a, b, x: make(a, b).cdf(x), [LOC, RAW, value])
        assert gradcheck(lambda a, b: make(a, b).icdf(mg.tensor([0.2, 0.5, 0.9],
                                                                dtype=mg.float64)), [LOC, RAW])


def test_gradcheck_discrete_and_vector_families():
    counts = mg.tensor(np.array([[0.0, 2, 5], [1, 1, 3]]))
    assert gradcheck(lambda a: Poisson(pos(a)).log_prob(counts), [LOC])
    assert gradcheck(lambda a: Binomial(6, logits=a).log_prob(counts), [LOC])
    assert gradcheck(lambda a: Binomial(6, probs=a.sigmoid()).entropy(), [LOC])
    assert gradcheck(lambda a: Geometric(probs=a.sigmoid()).log_prob(counts), [LOC])
    assert gradcheck(lambda a: Geometric(logits=a).entropy(), [LOC])
    simplex = leaf((X / X.sum(-1, keepdim=True)).detach().numpy())
    # the differences step off the simplex, so the support check is off here
    assert gradcheck(lambda a, s: Dirichlet(pos(a), validate_args=False).log_prob(s),
                     [LOC, simplex])
    assert gradcheck(lambda a: Dirichlet(pos(a)).entropy(), [LOC])
    five = mg.tensor([[1.0, 2, 2], [0, 5, 0]])
    assert gradcheck(lambda a: Multinomial(5, logits=a).log_prob(five), [LOC])
    assert gradcheck(lambda a: Multinomial(3, probs=pos(a)).entropy(), [LOC])
    hot = mg.tensor(np.eye(3)[[2, 0]])
    assert gradcheck(lambda a: OneHotCategorical(logits=a).log_prob(hot), [LOC])
    m = leaf(rng.standard_normal((3, 3)))

    def pd(m):
        return m @ m.T + mg.eye(3, dtype=mg.float64)
    for form in ("covariance_matrix", "precision_matrix"):
        assert gradcheck(lambda a, m, x: MultivariateNormal(a, **{form: pd(m)}).log_prob(x),
                         [LOC, m, X])
    assert gradcheck(lambda m: MultivariateNormal(LOC, scale_tril=mg.linalg.cholesky(pd(m)))
                     .entropy(), [m])
    assert gradcheck(lambda a, b, x: MixtureSameFamily(Categorical(logits=a), Normal(
        b, pos(a))).log_prob(x), [LOC, RAW, X])
    squashed = lambda a, b, y: TransformedDistribution(  # noqa: E731
        Normal(a, pos(b)), [TanhTransform(), AffineTransform(1.0, 2.0)]).log_prob(y)
    assert gradcheck(squashed, [LOC, RAW, leaf(rng.uniform(-0.9, 2.9, (2, 3)))])
    assert gradcheck(lambda a, b, x: Independent(Normal(a, pos(b)), 1).log_prob(x),
                     [LOC, RAW, X])


def test_gradcheck_kl_and_rsample():
    m = leaf(rng.standard_normal((3, 3)))
    pd = m @ m.T + mg.eye(3, dtype=mg.float64)
    pairs = [lambda a, b: (Gamma(pos(a), pos(b)), Gamma(pos(b), 1.5)),
             lambda a, b: (Beta(pos(a), pos(b)), Beta(pos(b), pos(a))),
             lambda a, b: (Dirichlet(pos(a)), Dirichlet(pos(b))),
             lambda a, b: (Laplace(a, pos(b)), Laplace(b, pos(a))),
             lambda a, b: (Exponential(pos(a)), Exponential(pos(b))),
             lambda a, b: (Poisson(pos(a)), Poisson(pos(b))),
             lambda a, b: (MultivariateNormal(a, pd), MultivariateNormal(b, pd * pos(a)[0])),
             lambda a, b: (Independent(Normal(a, pos(b)), 1), Independent(Normal(b, 1.0), 1))]
    for pair in pairs:
        assert gradcheck(lambda a, b: kl_divergence(*pair(a, b)), [LOC, RAW])

    def draws(a, b):
        mg.manual_seed(2)  # the same noise at every evaluation
        out = [Exponential(pos(a)).rsample((2,)), Laplace(a, pos(b)).rsample((2,)),
               Cauchy(a, pos(b)).rsample((2,)), LogNormal(a, pos(b)).rsample((2,)),
               HalfNormal(pos(b)).rsample((2,)), Gumbel(a, pos(b)).rsample((2,)),
               MultivariateNormal(a, scale_tril=mg.diag(pos(b))).rsample((2,)),
               Gamma(2.0, pos(b)).rsample((2,)),  # the rate only: d/da is implicit, not
               StudentT(3.0, a, pos(b)).rsample((2,)), HalfCauchy(pos(a)).rsample((2,)),
               Weibull(pos(a), pos(b)).rsample((2,))]  # the rejection sampler's at fixed seed
        return mg.cat([o.reshape(-1) for o in out])
    assert gradcheck(draws, [LOC, RAW])


ERRORS = [
    (lambda D, t: D.Exponential(t([-1.0]), validate_args=True),
     r"parameter rate .* constraint GreaterThan\(lower_bound=0.0\)"),
    (lambda D, t: D.Gamma(t([1.0]), t([0.0]), validate_args=True),
     r"parameter rate .*constraint GreaterThan"),
    (lambda D, t: D.Beta(t([1.0]), t([-2.0]), validate_args=True),
     r"constraint IndependentConstraint\(GreaterThan\(lower_bound=0.0\), 1\)"),
    (lambda D, t: D.Dirichlet(t(1.0)), "`concentration` parameter must be at least one-dim"),
    (lambda D, t: D.Dirichlet(t([0.5, 0.5]), validate_args=True).log_prob(t([0.7, 0.7])),
     r"within the support \(Simplex\(\)\)"),
    (lambda D, t: D.Poisson(t([2.0]), validate_args=True).log_prob(t([1.5])),
     r"within the support \(IntegerGreaterThan\(lower_bound=0\)\)"),
    (lambda D, t: D.Poisson(t([-2.0]), validate_args=True),
     r"constraint GreaterThanEq\(lower_bound=0.0\)"),
    (lambda D, t: D.Binomial(3, t([0.5]), validate_args=True).log_prob(t([4.0])),
     r"within the support \(IntegerInterval\(lower_bound=0, upper_bound="),
    (lambda D, t: D.Binomial(t([2.5]), t([0.5]), validate_args=True),
     r"total_count .* constraint IntegerGreaterThan\(lower_bound=0\)"),
    (lambda D, t: D.Binomial(3), "Either `probs` or `logits` must be specified"),
    (lambda D, t: D.Geometric(t([1.5]), validate_args=True),
     r"constraint Interval\(lower_bound=0.0, upper_bound=1.0\)"),
    (lambda D, t: D.LogNormal(0.0, 1.0, validate_args=True).log_prob(t(-1.0)),
     r"within the support \(GreaterThan\(lower_bound=0.0\)\)"),
    (lambda D, t: D.HalfNormal(1.0, validate_args=True).log_prob(t(-1.0)),
     r"within the support \(GreaterThanEq\(lower_bound=0.0\)\)"),
    (lambda D, t: D.StudentT(t([-1.0]), validate_args=True), r"parameter df"),
    (lambda D, t: D.Weibull(t([1.0]), t([-1.0]), validate_args=True),
     r"parameter concentration .* constraint GreaterThan\(lower_bound=0.0\)"),
    (lambda D, t: D.Chi2(t([-1.0]), validate_args=True), r"parameter df .* of distribution Chi2"),
    (lambda D, t: D.HalfCauchy(1.0, validate_args=True).log_prob(t(-1.0)),
     r"within the support \(GreaterThanEq\(lower_bound=0.0\)\)"),
    (lambda D, t: D.Multinomial(3, t([0.5, 0.5]), validate_args=True).log_prob(t([3.0, 1.0])),
     r"within the support \(Multinomial\(\)\)"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 2.0], [2.0, 1.0]]),
                                       validate_args=True), r"constraint PositiveDefinite\(\)"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[-1.0, 0.0], [0.0, 1.0]]),
                                       validate_args=True), r"constraint LowerCholesky\(\)"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0])), "Exactly one of covariance_matrix"),
    (lambda D, t: D.MultivariateNormal(t(0.0), t([[1.0]])), "loc must be at least one-dim"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([1.0, 1.0])),
     "covariance_matrix must be at least two-dimensional"),
    (lambda D, t: D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]]),
                                       validate_args=True).log_prob(t([1.0, 2.0, 3.0])),
     "The right-most size of value must match event_shape"),
    (lambda D, t: D.Independent(D.Normal(t([0.0]), 1.0), 2),
     r"Expected reinterpreted_batch_ndims <= len\(base_distribution.batch_shape\), actual 2 vs 1"),
    (lambda D, t: D.TransformedDistribution(D.Normal(0.0, 1.0), "exp"),
     "transforms must be a Transform or list"),
    (lambda D, t: D.TransformedDistribution(D.Normal(0.0, 1.0), ["exp"]),
     "transforms must be a Transform or a list of Transforms"),
    (lambda D, t: D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(t([0.0]), 1.0)),
     "needs to be an  instance of torch.distributions.Categorical"),
    (lambda D, t: D.MixtureSameFamily(D.Categorical(t([0.5, 0.5])), D.Normal(t([0.0] * 3), 1.0)),
     r"`mixture_distribution component` \(2\) does not equal"),
    (lambda D, t: D.OneHotCategorical(t([0.5, 0.5]), validate_args=True).log_prob(t([1.0, 1.0])),
     r"within the support \(OneHot\(\)\)"),
    (lambda D, t: D.kl_divergence(D.MultivariateNormal(t([0.0, 0.0]), t([[1.0, 0.0], [0.0, 1.0]])),
                                  D.MultivariateNormal(t([0.0]), t([[1.0]]))),
     "different event shapes cannot be computed"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_as_pytorch(torch, i):
    make, match = ERRORS[i]
    for lib in (torch, mg):
        with pytest.raises(ValueError, match=match):
            make(lib.distributions, lambda v: lib.tensor(v))


def test_not_implemented_as_pytorch(torch):
    for lib in (torch, mg):
        D = lib.distributions
        with pytest.raises(NotImplementedError, match="Inhomogeneous total count"):
            D.Binomial(lib.tensor([2.0, 3.0]), lib.tensor([0.5, 0.5])).entropy()
        with pytest.raises(NotImplementedError):
            D.Poisson(lib.tensor([2.0])).entropy()
        with pytest.raises(NotImplementedError, match="inhomogeneous total_count"):
            D.Multinomial(lib.tensor(3), lib.tensor([0.5, 0.5]))
        with pytest.raises(NotImplementedError):
            D.Poisson(lib.tensor([2.0])).rsample()
        with pytest.raises(NotImplementedError):
            D.Independent(D.Bernoulli(lib.tensor([0.5])), 1).enumerate_support()


def test_expand_as_pytorch(torch):
    def program(lib):
        D = lib.distributions
        t = lambda v: lib.tensor(np.asarray(v, dtype=np.float64))  # noqa: E731
        made = [D.Normal(t([0.5, 1.0]), 2.0), D.Exponential(t([1.5, 0.5])),
                D.Gamma(t([1.5, 2.5]), 2.0), D.Beta(t([1.5, 2.5]), 2.0),
                D.Laplace(t([0.5, 1.0]), 2.0), D.Gumbel(t([0.5, 1.0]), 2.0),
                D.LogNormal(t([0.5, 1.0]), 2.0), D.HalfNormal(t([0.5, 1.0])),
                D.Poisson(t([0.5, 1.0])), D.Geometric(t([0.5, 0.1])),
                D.Binomial(4, t([0.5, 0.1])), D.Categorical(t([[0.2, 0.8], [0.5, 0.5]])),
                D.Bernoulli(t([0.5, 0.1])), D.Uniform(t([0.0, 0.5]), 3.0),
                D.StudentT(t([3.0, 4.0])), D.Cauchy(t([0.5, 1.0]), 2.0)]
        out = []
        for d in made:
            e = d.expand((3, 2))
            value = t(np.ones((3, 2)) if not isinstance(d, D.Uniform) else np.full((3, 2), 1.5))
            out.append((type(e).__name__, tuple(e.batch_shape), e.log_prob(value).numpy(),
                        tuple(e.sample().shape)))
        vec = [D.MultivariateNormal(t([0.0, 1.0]), t(np.eye(2))), D.Dirichlet(t([1.0, 2.0])),
               D.OneHotCategorical(t([0.3, 0.7])),
               D.Independent(D.Normal(t([0.0, 1.0]), 1.0), 1),
               D.MixtureSameFamily(D.Categorical(t([0.3, 0.7])), D.Normal(t([0.0, 1.0]), 1.0)),
               D.TransformedDistribution(D.Normal(t(0.5), 1.0), D.transforms.ExpTransform())]
        for d in vec:
            e = d.expand((3,))
            value = t([1.0, 0.0]) if isinstance(d, D.OneHotCategorical) else t([0.3, 0.7])
            value = value if d.event_shape else value[:1]
            out.append((type(e).__name__, tuple(e.batch_shape), tuple(e.event_shape),
                        e.log_prob(value).numpy(), tuple(e.sample((2,)).shape)))
        return out
    for want, got in zip(program(torch), program(mg)):
        assert want[:2] == got[:2] and want[-1] == got[-1]
        np.testing.assert_allclose(got[-2], want[-2], rtol=1e-12)


def test_transforms_inverse_cache_and_shapes(torch):
    T = mg.distributions.transforms
    x = mg.tensor([-30.0, 0.0, 2.0], dtype=mg.float64)
    tanh = T.TanhTransform(cache_size=1)
    y = tanh(x)
    assert tanh.inv(y) is x  # the cached pair: atanh(tanh(-30)) alone would be -inf
    assert np.isinf(T.TanhTransform().inv(y).numpy()[0])
    assert tanh.inv.inv is tanh and tanh.sign == 1 and tanh.bijective
    aff = T.AffineTransform(mg.tensor([1.0, 2.0]), -2.0, event_dim=1)
    assert aff.sign == -1 and aff.event_dim == 1
    assert aff.log_abs_det_jacobian(mg.zeros(4, 2), None).shape == (4,)
    c = T.ComposeTransform([T.ExpTransform(), aff])
    assert c.domain.event_dim == 1 and c.inv.inv is c
    for lib in (torch, mg):
        D = lib.distributions
        d = D.TransformedDistribution(D.Normal(lib.zeros(4, 2), 1.0),
                                      D.transforms.AffineTransform(0.0, 2.0, event_dim=1))
        assert tuple(d.batch_shape) == (4,) and tuple(d.event_shape) == (2,)
        with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
            D.transforms.ExpTransform(cache_size=2)
        assert D.transforms.ExpTransform() == D.transforms.ExpTransform()
        assert repr(D.transforms.ExpTransform().inv.codomain) == "Real()"
