"""`InverseGamma`: 1 / X for X ~ Gamma(concentration, rate) (PyTorch's
`torch.distributions.InverseGamma`), density rate^a x^(-a-1) exp(-rate / x) / Gamma(a) on x > 0;
built, as PyTorch's, through PowerTransform(-1), so rsample is differentiable in both."""
from __future__ import annotations

import math

from minigrad import digamma, lgamma, where

from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """InverseGamma(concentration a, rate b) per element of the batch."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())),
                         validate_args=validate_args)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        """b / (a - 1), inf for a <= 1."""
        a = self.concentration
        return where(a > 1, self.rate / (a - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        """b^2 / ((a - 1)^2 (a - 2)), inf for a <= 2."""
        a = self.concentration
        return where(a > 2, self.rate.square() / ((a - 1).square() * (a - 2)), math.inf)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + lgamma(a) - (1 + a) * digamma(a)
