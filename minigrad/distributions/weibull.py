"""`Weibull`: scale * E^(1/concentration) for a standard exponential E (PyTorch's
`torch.distributions.Weibull`), a `TransformedDistribution` through `PowerTransform` and
`AffineTransform`, as PyTorch builds it."""
from __future__ import annotations

from minigrad import lgamma, ones_like

from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all

__all__ = ["Weibull"]

_EULER_GAMMA = 0.57721566490153286060


class Weibull(TransformedDistribution):
    """Weibull(scale, concentration): cdf 1 - exp(-(x / scale)^concentration) on x > 0."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        for name in ("scale", "concentration", "concentration_reciprocal"):
            setattr(new, name, getattr(self, name).expand(tuple(batch_shape)))
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        return self.scale * ((self.concentration - 1) / self.concentration) ** \
            self.concentration_reciprocal

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (lgamma(1 + 2 * r).exp() - (2 * lgamma(1 + r)).exp())

    def entropy(self):
        r = self.concentration_reciprocal
        return _EULER_GAMMA * (1 - r) + (self.scale * r).log() + 1
