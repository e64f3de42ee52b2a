"""`Gumbel`: the extreme-value distribution of location `loc` and scale `scale` (PyTorch's
`torch.distributions.Gumbel`), built as PyTorch builds it: a Uniform pushed through
-log(-log(u)) and the affine map, so `cdf`, `icdf` and sampling come from the transforms."""
from __future__ import annotations

import math

from minigrad import finfo, full_like, ones_like

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all

__all__ = ["Gumbel"]

_EULER_GAMMA = 0.57721566490153286060


class Gumbel(TransformedDistribution):
    """Gumbel(loc, scale): density exp(-(z + exp(-z))) / scale, z = (x - loc) / scale."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        base = Uniform(full_like(self.loc, float(info.tiny)), full_like(self.loc, 1 - float(
            info.eps)), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=self.loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new.loc = self.loc.expand(tuple(batch_shape))
        new.scale = self.scale.expand(tuple(batch_shape))
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        """z - exp(z) - log(scale) for z = (loc - value) / scale."""
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * _EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        """log(scale) + 1 + Euler's gamma."""
        return self.scale.log() + (1 + _EULER_GAMMA)
