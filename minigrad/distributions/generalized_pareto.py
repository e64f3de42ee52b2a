"""`GeneralizedPareto` (PyTorch's `torch.distributions.GeneralizedPareto`): the tail model of
extreme-value statistics, P(X > x) = (1 + xi z)^(-1/xi) for z = (x - loc) / scale, with the
exponential tail exp(-z) at concentration xi = 0; bounded above at loc - scale / xi for
xi < 0. Sampled through its inverse cdf, reparameterised."""
from __future__ import annotations

import math
import numbers

from minigrad import broadcast_to, expm1, log1p, ones_like, rand, where

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc, scale, concentration xi) per element of the batch."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers_only = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(() if numbers_only else tuple(self.loc.shape), (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        batch_shape = tuple(batch_shape)
        for name in ("loc", "scale", "concentration"):
            setattr(new, name, getattr(self, name).expand(batch_shape))
        return self._expanded(new, batch_shape)

    def _safe_concentration(self):
        """xi, with 1 where xi is 0 to PyTorch's isclose (so the unused branch stays finite),
        and that mask."""
        xi = self.concentration
        zero = xi.isclose(xi * 0)
        return where(zero, ones_like(xi), xi), zero

    def _z(self, x):
        return (x - self.loc) / self.scale

    def rsample(self, sample_shape=()):
        return self.icdf(rand(*self._extended_shape(sample_shape), dtype=self.loc.dtype))

    def log_prob(self, value):
        """-log scale - (1 / xi + 1) log1p(xi z); -log scale - z at xi = 0."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        xi, zero = self._safe_concentration()
        y = 1 / xi + ones_like(z)
        nonzero = where(y == 0, y, y * log1p(xi * z))
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        xi, zero = self._safe_concentration()
        return where(zero, -z, -log1p(xi * z) / xi)

    def log_cdf(self, value):
        return log1p(-self.log_survival_function(value).exp())

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        xi, zero = self._safe_concentration()
        log_u = log1p(-value)
        nonzero = self.loc + self.scale / xi * expm1(-xi * log_u)
        return where(zero, self.loc - self.scale * log_u, nonzero)

    @property
    def mean(self):
        """loc + scale / (1 - xi), NaN for xi >= 1."""
        valid = self.concentration < 1
        xi = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - xi), math.nan)

    @property
    def variance(self):
        """scale^2 / ((1 - xi)^2 (1 - 2 xi)), NaN for xi >= 1/2."""
        valid = self.concentration < 0.5
        xi = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - xi) ** 2 * (1 - 2 * xi)), math.nan)

    def entropy(self):
        return broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        """[loc, loc - scale / xi] for xi < 0, [loc, inf] otherwise."""
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(self.loc, upper)
