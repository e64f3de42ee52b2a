"""`Normal`: the Gaussian of mean `loc` and standard deviation `scale` (PyTorch's
`torch.distributions.Normal`), broadcast to one batch shape."""
from __future__ import annotations

import math

from minigrad import erf, erfinv, no_grad, normal, randn

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Normal"]


class Normal(Distribution):
    """N(loc, scale^2) per element of the batch: loc and scale are tensors or numbers,
    broadcast together; `rsample` is differentiable in both (loc + eps * scale)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def sample(self, sample_shape=()):
        """Draws of shape sample_shape + batch_shape, outside autograd."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return normal(self.loc.expand(shape), self.scale.expand(shape))

    def rsample(self, sample_shape=()):
        """loc + eps * scale for standard normal eps: its gradient reaches loc and scale."""
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + eps * self.scale

    def log_prob(self, value):
        """-(value - loc)^2 / (2 scale^2) - log(scale) - log(sqrt(2 pi)), broadcast."""
        if self._validate_args:
            self._validate_sample(value)
        var = self.scale ** 2
        return (-((value - self.loc) ** 2) / (2 * var) - self.scale.log()
                - math.log(math.sqrt(2 * math.pi)))

    def entropy(self):
        """0.5 + 0.5 log(2 pi) + log(scale), per element of the batch."""
        return self.scale.log() + (0.5 + 0.5 * math.log(2 * math.pi))

    def cdf(self, value):
        """P(X <= value) = (1 + erf((value - loc) / (scale sqrt 2))) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + erf((value - self.loc) * self.scale.reciprocal() / math.sqrt(2)))

    def icdf(self, value):
        """The quantile of probability `value`: loc + scale sqrt(2) erfinv(2 value - 1)."""
        return self.loc + self.scale * erfinv(2 * value - 1) * math.sqrt(2)
