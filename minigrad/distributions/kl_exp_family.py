"""`kl_divergence` pairs of the exponential families (PyTorch's): the Bregman divergence of
the log-normaliser between two of the same ExponentialFamily, and ContinuousBernoulli's
closed forms against itself, Exponential, Normal, Uniform and Beta (inf where the support of
p reaches where q has no density). Importing registers them, as kl.py's own."""
from __future__ import annotations

import math

from minigrad import autograd, log1p, where

from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _register_infinite_kl, register_kl
from .laplace import Laplace
from .normal import Normal
from .transform_base import _sum_rightmost
from .uniform import Uniform

__all__ = []


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """F(theta_q) - F(theta_p) - <theta_q - theta_p, grad F(theta_p)>, theta_p detached."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot be computed using Bregman divergences")
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    log_norm = p._log_normalizer(*p_params)
    grads = autograd.grad(log_norm.sum(), p_params, create_graph=True)
    result = q._log_normalizer(*q_params) - log_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = (p.variance + p.mean.square() - 2.0 * q.loc * p.mean) / (2.0 * q.scale.square())
    return -p.entropy() + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    """Finite only where Uniform(low, high) covers [0, 1] strictly (PyTorch's condition)."""
    result = -p.entropy() + (q.high - q.low).log()
    return where((q.low >= 0.0) | (q.high <= 1.0), math.inf, result)


def _against_continuous_bernoulli(p, q):
    """-H(p) - E_p[log q]: E_p[x] is all of p that log q = x logits + log(1 - p) + log C
    needs."""
    return -p.entropy() - p.mean * q.logits - log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _against_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _against_continuous_bernoulli(p, q)
    return where((p.high >= 1.0) | (p.low <= 0.0), math.inf, result)


_register_infinite_kl([(Exponential, ContinuousBernoulli, "rate"),
                      (Gamma, ContinuousBernoulli, "concentration"),
                      (Gumbel, ContinuousBernoulli, "loc"), (Laplace, ContinuousBernoulli, "loc"),
                      (Normal, ContinuousBernoulli, "loc")])
