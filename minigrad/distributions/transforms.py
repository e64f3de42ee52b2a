"""Invertible maps y = f(x) with the log |det df/dx| of their Jacobian (PyTorch's
`torch.distributions.transforms`; the simplex, matrix and structural ones are in their own
modules and exported here too): what `TransformedDistribution` pushes a base distribution
through, as a tanh-squashed Normal (SAC's policy) or a log-normal.

A transform's `inv` is the inverse map; `cache_size=1` keeps the last (x, y) pair, so that
the inverse of a value just produced returns its x exactly (atanh(tanh(x)) loses x where
tanh rounds to 1). `domain`/`codomain` are constraints; their `event_dim` says how many
trailing dims one Jacobian covers.
"""
from __future__ import annotations

import math
import numbers

from minigrad import atanh, zeros_like
from minigrad.nn.functional import softplus

from . import constraints
from .transform_base import (ComposeTransform, Transform, _broadcast, _sum_rightmost,
                             identity_transform)
from .transforms_matrix import (CorrCholeskyTransform, LowerCholeskyTransform,
                                PositiveDefiniteTransform)
from .transforms_simplex import SoftmaxTransform, StickBreakingTransform
from .transforms_structured import (CatTransform, CumulativeDistributionTransform,
                                    IndependentTransform, ReshapeTransform, StackTransform)
from .utils import broadcast_all, clamp_probs

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform",
           "SoftplusTransform", "StackTransform", "StickBreakingTransform", "TanhTransform",
           "Transform", "identity_transform"]


class ExpTransform(Transform):
    """y = exp(x); log |dy/dx| = x."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside [eps, 1 - eps]; log |dy/dx| = -softplus(-x) - softplus(x)."""
    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, 1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return clamp_probs(x.sigmoid())

    def _inverse(self, y):
        y = clamp_probs(y)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x); log |dy/dx| = 2 (log 2 - x - softplus(-2x)), the form that stays finite
    where 1 - tanh(x)^2 rounds to 0."""
    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), True, 1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); log |dy/dx| = -softplus(-x)."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-(-y).expm1()).log() + y  # log(exp(y) - 1), finite for large y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class PowerTransform(Transform):
    """y = x^exponent on x > 0; log |dy/dx| = log |exponent y / x|."""
    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else PowerTransform(self.exponent,
                                                                          cache_size)

    @property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        return isinstance(other, PowerTransform) and bool((self.exponent == other.exponent)
                                                          .all().item())

    __hash__ = object.__hash__

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return _broadcast(shape, self.exponent)

    def inverse_shape(self, shape):
        return _broadcast(shape, self.exponent)


class AbsTransform(Transform):
    """y = |x| (not bijective: the inverse returns y itself)."""
    domain, codomain = constraints.real, constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


class AffineTransform(Transform):
    """y = loc + scale x, over `event_dim` trailing dims (log |scale| summed over them)."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc, self.scale, self._event_dim = loc, scale, event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return constraints.real if self._event_dim == 0 else \
            constraints.independent(constraints.real, self._event_dim)

    codomain = domain

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self._event_dim, cache_size=cache_size)

    def __eq__(self, other):
        if not isinstance(other, AffineTransform):
            return False
        same = []
        for a, b in ((self.loc, other.loc), (self.scale, other.scale)):
            if isinstance(a, numbers.Number) and isinstance(b, numbers.Number):
                same.append(a == b)
            else:
                same.append(bool(((a - b) == 0).all().item()))
        return all(same)

    __hash__ = object.__hash__

    @property
    def sign(self):
        if isinstance(self.scale, numbers.Real):
            return 1 if float(self.scale) > 0 else -1 if float(self.scale) < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = tuple(x.shape)
        if isinstance(self.scale, numbers.Real):
            result = zeros_like(x) + math.log(abs(self.scale))
        else:
            result = self.scale.abs().log()
        if self._event_dim:
            result = _sum_rightmost(result, self._event_dim)
            shape = shape[:len(shape) - self._event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return _broadcast(shape, self.loc, self.scale)

    def inverse_shape(self, shape):
        return _broadcast(shape, self.loc, self.scale)
