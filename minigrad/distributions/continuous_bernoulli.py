"""`ContinuousBernoulli` (PyTorch's `torch.distributions.ContinuousBernoulli`): the density on
[0, 1] proportional to p^x (1 - p)^(1 - x), the exact likelihood for pixel intensities in
(0, 1) that a VAE's Bernoulli loss only approximates. Its normaliser
C(p) = 2 atanh(1 - 2p) / (1 - 2p) is 0/0 at p = 1/2, so within `lims` around 1/2 the
normaliser, mean and variance use their Taylor series instead, as PyTorch's."""
from __future__ import annotations

import math

from minigrad import expm1, log1p, rand, where
from minigrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .exp_family import ExponentialFamily
from .utils import (broadcast_all, clamp_probs, expand_probs_or_logits, lazy_property,
                    logits_to_probs, probs_or_logits, probs_to_logits)

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """`probs` in [0, 1] (clamped to [eps, 1 - eps]) or `logits`: exactly one; `lims` the
    interval around 1/2 where the Taylor series are used."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        name, param, shape = probs_or_logits(probs, logits)
        if name == "probs":
            if validate_args is not None and not self.arg_constraints["probs"].check(
                    param.detach().numpy()).all():
                raise ValueError("The parameter probs has invalid values")
            param = clamp_probs(param)
        setattr(self, name, param)
        self._param, self._lims = param, lims
        super().__init__(shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new._lims = self._lims
        expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, tuple(batch_shape))

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """probs, with lims[0] in the unstable region (so the exact forms stay finite)."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """log C(p): log |log(1 - p) - log p| - log |1 - 2p|, Taylor near p = 1/2."""
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, 0.0)
        above = where(cut >= 0.5, cut, 1.0)
        log_norm = (log1p(-cut) - cut.log()).abs().log() - where(
            cut <= 0.5, log1p(-2.0 * below), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (log1p(-cut) - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def variance(self):
        cut = self._cut_probs()
        exact = cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2) + 1.0 / (
            log1p(-cut) - cut.log()).pow(2)
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), exact, taylor)

    def rsample(self, sample_shape=()):
        """icdf of a uniform draw: differentiable in the parameter."""
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(*shape, dtype=self.probs.dtype))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, 0.0, where(value >= 1.0, 1.0, inside))

    def icdf(self, value):
        cut = self._cut_probs()
        exact = (log1p(-cut + value * (2.0 * cut - 1.0)) - log1p(-cut)) / (
            cut.log() - log1p(-cut))
        return where(self._outside_unstable_region(), exact, value)

    def entropy(self):
        log_p0, log_p1 = log1p(-self.probs), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """log((exp(x) - 1) / x) for the natural parameter x, Taylor near x = 0."""
        outside = (x <= self._lims[0] - 0.5) | (x > self._lims[1] - 0.5)
        cut = where(outside, x, self._lims[0] - 0.5)
        log_norm = expm1(cut).abs().log() - cut.abs().log()
        taylor = 0.5 * x + x.pow(2) / 24.0 - x.pow(4) / 2880.0
        return where(outside, log_norm, taylor)
