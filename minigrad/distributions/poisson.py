"""`Poisson`: counts with mean `rate` (PyTorch's `torch.distributions.Poisson`)."""
from __future__ import annotations

from minigrad import lgamma, no_grad, xlogy

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, draw

__all__ = ["Poisson"]


class Poisson(Distribution):
    """Poisson(rate) per element of the batch; samples are counts in rate's dtype."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(tuple(self.rate.shape), (), validate_args)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return draw("poisson", shape, self.rate.dtype, self.rate)

    def log_prob(self, value):
        """value log(rate) - rate - lgamma(value + 1) (0 log 0 counts 0)."""
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return xlogy(value, rate) - rate - lgamma(value + 1)
