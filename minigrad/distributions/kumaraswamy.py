"""`Kumaraswamy` (PyTorch's `torch.distributions.Kumaraswamy`): a Beta-like distribution on
(0, 1) with density a b x^(a-1) (1 - x^a)^(b-1) and a closed-form inverse cdf, so it is built
as (1 - u^(1/b))^(1/a) for u uniform, reparameterised."""
from __future__ import annotations

import math

from minigrad import digamma, full_like, lgamma, where

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Kumaraswamy"]

_EULER = 0.57721566490153286060


def _moments(a, b, n):
    """E[X^n] = b B(1 + n / a, b)."""
    arg = 1 + n / a
    return b * (lgamma(arg) + lgamma(b) - lgamma(arg + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy(concentration1 a, concentration0 b) per element of the batch."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        b = self.concentration0
        base = Uniform(full_like(b, 0), full_like(b, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=b.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new.concentration1 = self.concentration1.expand(tuple(batch_shape))
        new.concentration0 = self.concentration0.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        """((a - 1) / (a b - 1))^(1/a), NaN where a < 1 or b < 1."""
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return where((b < 1) | (a < 1), math.nan, log_mode).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + _EULER
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()
