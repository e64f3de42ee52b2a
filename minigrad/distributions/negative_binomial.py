"""`NegativeBinomial`: the number of successes before `total_count` failures of Bernoulli(p)
trials (PyTorch's `torch.distributions.NegativeBinomial`), for a real total_count too: a
Gamma-Poisson mixture, which is how it is sampled."""
from __future__ import annotations

from minigrad import lgamma, no_grad, poisson, where
from minigrad.nn.functional import logsigmoid

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import BinaryProbsOrLogits, broadcast_all

__all__ = ["NegativeBinomial"]


class NegativeBinomial(BinaryProbsOrLogits, Distribution):
    """P(k) = C(k + r - 1, k) p^k (1 - p)^r for k = 0, 1, ...; r = `total_count` >= 0 and
    `probs` p in [0, 1) or `logits`: exactly one."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), (), validate_args)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=()):
        """Poisson(lambda) for lambda ~ Gamma(total_count, rate (1 - p) / p)."""
        with no_grad():
            gamma = Gamma(self.total_count, (-self.logits).exp(), validate_args=False)
            return poisson(gamma.sample(sample_shape))

    def log_prob(self, value):
        """r log(1 - p) + k log p + lgamma(r + k) - lgamma(k + 1) - lgamma(r), with the
        lgamma terms 0 where r + k = 0 (the point mass at 0 of total_count 0)."""
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        unnormalised = r * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        normaliser = -lgamma(r + value) + lgamma(1.0 + value) + lgamma(r)
        return unnormalised - where(r + value == 0.0, 0.0, normaliser)
