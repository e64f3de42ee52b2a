"""`Exponential`: the waiting time of rate `rate` (PyTorch's `torch.distributions.Exponential`),
density rate exp(-rate x) on x >= 0."""
from __future__ import annotations

from minigrad import empty, log1p, no_grad, zeros_like

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(Distribution):
    """Exp(rate) per element of the batch; `rsample` is e / rate for a standard exponential e,
    differentiable in rate."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=()):
        """e / rate, e filled by `exponential_` (PyTorch's numbers after the same seed): shape
        sample_shape + batch_shape."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            e = empty(shape, dtype=self.rate.dtype).exponential_()
        return e / self.rate

    def log_prob(self, value):
        """log(rate) - rate value."""
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        """1 - exp(-rate value)."""
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        """-log(1 - value) / rate."""
        return -log1p(-value) / self.rate

    def entropy(self):
        """1 - log(rate)."""
        return 1.0 - self.rate.log()
