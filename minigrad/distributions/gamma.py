"""`Gamma`: the Gamma distribution of shape `concentration` and inverse scale `rate` (PyTorch's
`torch.distributions.Gamma`), density rate^a x^(a-1) exp(-rate x) / Gamma(a) on x >= 0.
`rsample` is differentiable in both parameters: in the rate through x = g / rate, in the
concentration through g's implicit reparameterisation gradient (gamma_sampling.py)."""
from __future__ import annotations

from minigrad import digamma, finfo, lgamma, xlogy
from minigrad.special import gammainc

from . import constraints
from .distribution import Distribution
from .gamma_sampling import standard_gamma
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(Distribution):
    """Gamma(concentration, rate) per element of the batch."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(tuple(self.concentration.shape), (), validate_args)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()):
        """g / rate for g ~ Gamma(concentration, 1), at least the dtype's smallest normal
        number (a draw that underflows to 0 would have log_prob -inf or NaN)."""
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return value.clamp(min=float(finfo(value.dtype).tiny))

    def log_prob(self, value):
        """a log(rate) + (a - 1) log(value) - rate value - lgamma(a)."""
        if self._validate_args:
            self._validate_sample(value)
        a, rate = self.concentration, self.rate
        return xlogy(a, rate) + xlogy(a - 1, value) - rate * value - lgamma(a)

    def entropy(self):
        """a - log(rate) + lgamma(a) + (1 - a) digamma(a)."""
        a = self.concentration
        return a - self.rate.log() + lgamma(a) + (1.0 - a) * digamma(a)

    def cdf(self, value):
        """The regularised lower incomplete gamma function P(a, rate value)."""
        if self._validate_args:
            self._validate_sample(value)
        return gammainc(self.concentration, self.rate * value)
