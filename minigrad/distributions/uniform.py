"""`Uniform`: the continuous uniform distribution on [low, high) (PyTorch's
`torch.distributions.Uniform`), its bounds broadcast to one batch shape."""
from __future__ import annotations

import math

import numpy as np

from minigrad import no_grad, rand

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Uniform"]


class Uniform(Distribution):
    """U[low, high) per element of the batch: low and high are tensors or numbers with
    low < high; `rsample` is differentiable in both (low + u * (high - low))."""
    has_rsample = True

    def __init__(self, low, high, validate_args=None):
        self.low, self.high = broadcast_all(low, high)
        super().__init__(tuple(self.low.shape), (), validate_args)

    @property
    def arg_constraints(self):
        return {"low": constraints.less_than(self.high),
                "high": constraints.greater_than(self.low)}

    @property
    def support(self):
        return constraints.interval(self.low, self.high)

    @property
    def mean(self):
        return (self.high + self.low) / 2

    @property
    def mode(self):
        return math.nan * self.high

    @property
    def stddev(self):
        return (self.high - self.low) / 12 ** 0.5

    @property
    def variance(self):
        return (self.high - self.low) ** 2 / 12

    def sample(self, sample_shape=()):
        """Draws of shape sample_shape + batch_shape, outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        """low + u (high - low) for u uniform on [0, 1): its gradient reaches both bounds."""
        u = rand(*self._extended_shape(sample_shape), dtype=self.low.dtype)
        return self.low + u * (self.high - self.low)

    def log_prob(self, value):
        """-log(high - low) inside [low, high), -inf outside (with validation off)."""
        if self._validate_args:
            self._validate_sample(value)
        inside = ((self.low <= value) & (self.high > value)).to(self.low.dtype)
        with np.errstate(divide="ignore"):  # log 0 = -inf outside is the answer, as PyTorch's
            return inside.log() - (self.high - self.low).log()

    def cdf(self, value):
        """(value - low) / (high - low), clamped to [0, 1]."""
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.low) / (self.high - self.low)).clamp(min=0, max=1)

    def icdf(self, value):
        """low + value (high - low): the quantile of probability `value`."""
        return value * (self.high - self.low) + self.low

    def entropy(self):
        """log(high - low), per element of the batch."""
        return (self.high - self.low).log()
