"""`Cauchy`: the Lorentz distribution of location `loc` and half-width `scale` (PyTorch's
`torch.distributions.Cauchy`); it has no mean or variance (NaN and inf, as PyTorch's)."""
from __future__ import annotations

import math

from minigrad import atan, full, log1p

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, draw

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Cauchy(loc, scale) per element of the batch; `rsample` is loc + scale e for a standard
    Cauchy e, differentiable in both."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(tuple(self.loc.shape), (), validate_args)

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return self.loc + draw("standard_cauchy", shape, self.loc.dtype) * self.scale

    def log_prob(self, value):
        """-log(pi) - log(scale) - log(1 + ((value - loc) / scale)^2)."""
        if self._validate_args:
            self._validate_sample(value)
        return -math.log(math.pi) - self.scale.log() - log1p(((value - self.loc) / self.scale)
                                                             ** 2)

    def cdf(self, value):
        """atan((value - loc) / scale) / pi + 1/2."""
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        """loc + scale tan(pi (value - 1/2))."""
        angle = math.pi * (value - 0.5)  # tan as sin / cos: minigrad has no tan op
        return angle.sin() / angle.cos() * self.scale + self.loc

    def entropy(self):
        """log(4 pi) + log(scale)."""
        return math.log(4 * math.pi) + self.scale.log()
