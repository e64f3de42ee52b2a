"""`kl_divergence(p, q)`: KL(p || q) per element of the batch, from a table of closed forms
keyed by the two distributions' types (PyTorch's `register_kl` decorator adds to it)."""
from __future__ import annotations

import math

import numpy as np

from minigrad import digamma, full_like, lgamma, linalg, log1p, where

from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .dirichlet import Dirichlet
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .folded import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transform_base import _sum_rightmost
from .uniform import Uniform

__all__ = ["kl_divergence", "register_kl"]

_KL = {}


def register_kl(type_p, type_q):
    """Decorator: `@register_kl(P, Q)` over `fn(p, q)` makes it KL(p || q) for those types."""
    def register(fn):
        _KL[type_p, type_q] = fn
        return fn
    return register


def _lookup(type_p, type_q):
    """The registered pair nearest to (type_p, type_q): the one whose classes are fewest
    steps up the two MROs (PyTorch picks the most specific match too)."""
    best = None
    for i, cls_p in enumerate(type_p.__mro__):
        for j, cls_q in enumerate(type_q.__mro__):
            if (cls_p, cls_q) in _KL and (best is None or i + j < best[0]):
                best = i + j, _KL[cls_p, cls_q]
    return best[1] if best else None


def _register_infinite_kl(pairs):
    """For each (type_p, type_q, parameter): KL(p || q) = inf where p's support reaches where
    q has no density, of the shape of p's `parameter` (PyTorch's `_infinite_like`)."""
    def infinite(parameter):
        return lambda p, q: full_like(getattr(p, parameter), math.inf)
    for type_p, type_q, parameter in pairs:
        register_kl(type_p, type_q)(infinite(parameter))


def kl_divergence(p, q):
    """KL(p || q) = E_p[log p - log q], of the batch's shape."""
    fn = _lookup(type(p), type(q))
    if fn is not None:
        return fn(p, q)
    raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                              f"{type(p).__name__} and q type {type(q).__name__}")


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    """sum_k p_k (log p_k - log q_k): inf where q_k = 0 < p_k, and a zero p_k counts 0."""
    t = p.probs * (p.logits - q.logits)
    t = where((q.probs == 0).expand(t.shape), math.inf, t)
    t = where((p.probs == 0).expand(t.shape), 0.0, t)
    return t.sum(-1)


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    """p log(p / q) + (1 - p) log((1 - p) / (1 - q)), through softplus of the logits; inf
    where q puts no mass on an outcome p can take, and a term of zero mass counts 0."""
    from minigrad.nn.functional import softplus
    t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
    t1 = where(q.probs == 0, math.inf, t1)
    t1 = where(p.probs == 0, 0.0, t1)
    t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
    t2 = where(q.probs == 1, math.inf, t2)
    t2 = where(p.probs == 1, 0.0, t2)
    return t1 + t2


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    """n (p log(p / q) + (1 - p) log((1 - p) / (1 - q))); inf where p's n exceeds q's."""
    if (p.total_count < q.total_count).any().item():
        raise NotImplementedError("KL between Binomials where q.total_count > p.total_count "
                                  "is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + log1p(-p.probs) - log1p(-q.probs))
    return where(p.total_count > q.total_count, math.inf, kl)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - log1p(-q.probs) / p.probs - q.logits


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    """log of the width ratio; inf where p's interval leaves q's."""
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), math.inf, result)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    rate_ratio = q.rate / p.rate
    return -rate_ratio.log() + rate_ratio - 1


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    sum_p = p.concentration1 + p.concentration0
    sum_q = q.concentration1 + q.concentration0
    t1 = lgamma(q.concentration1) + lgamma(q.concentration0) + lgamma(sum_p)
    t2 = lgamma(p.concentration1) + lgamma(p.concentration0) + lgamma(sum_q)
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (sum_q - sum_p) * digamma(sum_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    sum_p, sum_q = p.concentration.sum(-1), q.concentration.sum(-1)
    t1 = lgamma(sum_p) - lgamma(sum_q)
    t2 = (lgamma(p.concentration) - lgamma(q.concentration)).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = digamma(p.concentration) - digamma(sum_p).unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    return (-scale_ratio.log() + loc_abs_diff / q.scale
            + scale_ratio * (-loc_abs_diff / p.scale).exp() - 1)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    return t1 - (4 * p.scale * q.scale).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    euler_gamma = 0.57721566490153286060
    ct1, ct2, ct3 = p.scale / q.scale, q.loc / q.scale, p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t3 = (ct2 + lgamma(1 + ct1) - ct3).exp()
    return t1 + ct1 * euler_gamma + t3 - (1 + euler_gamma)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    """sum log diag(L_q) - sum log diag(L_p) + (|L_q^-1 L_p|_F^2 + |L_q^-1 (mu_q - mu_p)|^2
    - D) / 2."""
    if p.event_shape != q.event_shape:
        raise ValueError("KL-divergence between two Multivariate Normals with different "
                         "event shapes cannot be computed")
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    half_term1 = (lq.diagonal(dim1=-2, dim2=-1).log().sum(-1)
                  - lp.diagonal(dim1=-2, dim2=-1).log().sum(-1))
    n = p.event_shape[0]
    shape = tuple(np.broadcast_shapes(tuple(lq.shape[:-2]), tuple(lp.shape[:-2]))) + (n, n)
    term2 = linalg.solve_triangular(lq.expand(shape), lp.expand(shape), upper=False)
    term2 = term2.pow(2).sum((-2, -1))
    term3 = _batch_mahalanobis(lq, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(
            f"kl_divergence: Independent distributions that reinterpret "
            f"{p.reinterpreted_batch_ndims} and {q.reinterpreted_batch_ndims} batch dims")
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    """The bases' KL, where both push them through the same transforms."""
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError(
            "kl_divergence: TransformedDistributions with different transforms or event shapes "
            f"({tuple(p.event_shape)} and {tuple(q.event_shape)})")
    return kl_divergence(p.base_dist, q.base_dist)
