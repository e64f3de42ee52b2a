"""`Laplace`: the double exponential of location `loc` and scale `scale` (PyTorch's
`torch.distributions.Laplace`), density exp(-|x - loc| / scale) / (2 scale)."""
from __future__ import annotations

import math

from minigrad import expm1, finfo, log1p, rand

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """Laplace(loc, scale) per element of the batch; `rsample` inverts the cdf at a uniform
    draw, differentiable in both parameters."""
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
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    def rsample(self, sample_shape=()):
        """loc - scale sign(u) log(1 - |u|) for u uniform on (eps - 1, 1)."""
        shape = self._extended_shape(sample_shape)
        eps = float(finfo(self.loc.dtype).eps)
        u = rand(*shape, dtype=self.loc.dtype) * (2 - eps) + (eps - 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        """-log(2 scale) - |value - loc| / scale."""
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        """1/2 - sign(value - loc) expm1(-|value - loc| / scale) / 2."""
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * expm1(-d.abs() / self.scale)

    def icdf(self, value):
        """loc - scale sign(value - 1/2) log(1 - 2 |value - 1/2|)."""
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        """1 + log(2 scale)."""
        return 1 + (2 * self.scale).log()
