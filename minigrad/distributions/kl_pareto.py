"""`kl_divergence` pairs with a Pareto (PyTorch's): closed forms against Pareto, Exponential,
Gamma, Normal and Uniform, and inf where the support of p reaches where q has no density
(every family on the whole line or from 0, against a Pareto; a Pareto against the bounded
ones). Importing registers them, as kl.py's own."""
from __future__ import annotations

import math

from minigrad import where, xlogy

from .beta import Beta
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .gumbel import Gumbel
from .kl import _register_infinite_kl, register_kl
from .laplace import Laplace
from .normal import Normal
from .pareto import Pareto
from .uniform import Uniform

__all__ = []


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio, alpha_ratio = p.scale / q.scale, q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return where(p.scale < q.scale, math.inf, result)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    result = ((p.alpha / scale_rate).log() - p.alpha.reciprocal()
              + p.alpha * scale_rate / (p.alpha - 1) - 1)
    return where(p.alpha <= 1, math.inf, result)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return where(p.alpha <= 1, math.inf, t1 + t2 + t3 + t4 - 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    result = t1 - p.alpha.reciprocal() + (t3 + t4) / var_normal - 1
    return where(p.alpha <= 2, math.inf, result)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (xlogy(p.high, p.high) - xlogy(p.low, p.low) - width) / width
    return where(p.low < q.scale, math.inf, t2 * (q.alpha + 1) - t1)


_register_infinite_kl([(Pareto, Beta, "scale"), (Pareto, ContinuousBernoulli, "scale"),
                      (Pareto, Uniform, "scale"), (Beta, Pareto, "concentration1"),
                      (ContinuousBernoulli, Pareto, "probs"), (Exponential, Pareto, "rate"),
                      (Gamma, Pareto, "concentration"), (Gumbel, Pareto, "loc"),
                      (Laplace, Pareto, "loc"), (Normal, Pareto, "loc")])
