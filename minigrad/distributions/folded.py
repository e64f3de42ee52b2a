"""The distributions folded at zero: |X| for X symmetric about 0 (HalfNormal from a Normal,
HalfCauchy from a Cauchy, as PyTorch's `torch.distributions.HalfNormal` and `HalfCauchy`),
each a `TransformedDistribution` of its base through `AbsTransform`: the density is twice
the base's on x >= 0."""
from __future__ import annotations

import math

from minigrad import full, where, zeros_like

from . import constraints
from .cauchy import Cauchy
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy", "HalfNormal"]


class _Folded(TransformedDistribution):
    """|base| for a base symmetric about 0 of scale `scale`; subclasses name the base."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_type = None

    def __init__(self, scale, validate_args=None):
        base = self.base_type(0, scale, validate_args=False)
        super().__init__(base, AbsTransform(), validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        """The base's log-density + log 2 at value >= 0, -inf below."""
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    """|N(0, scale^2)| per element of the batch."""
    base_type = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


class HalfCauchy(_Folded):
    """|Cauchy(0, scale)| per element of the batch: no mean, infinite variance."""
    base_type = Cauchy

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype)

    @property
    def variance(self):
        return self.base_dist.variance
