"""`StudentT`: Student's t of `df` degrees of freedom, location `loc` and scale `scale`
(PyTorch's `torch.distributions.StudentT`); `rsample` is loc + scale z / sqrt(v / df) for a
standard normal z and v ~ Chi2(df) = Gamma(df / 2, 1/2), differentiable in all three."""
from __future__ import annotations

import math

from minigrad import digamma, lgamma, log1p, randn, where

from . import constraints
from .distribution import Distribution
from .gamma_sampling import standard_gamma
from .utils import broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """t(df, loc, scale) per element of the batch."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(tuple(self.df.shape), (), validate_args)

    @property
    def mean(self):
        return where(self.df <= 1, float("nan"), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        """scale^2 df / (df - 2) above 2, inf in (1, 2], NaN at or below 1."""
        df = self.df
        finite = self.scale.pow(2) * df / where(df > 2, df - 2, 1.0)
        return where(df > 2, finite, where(df > 1, float("inf"), float("nan")))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        z = randn(shape, dtype=self.df.dtype)
        chi2 = 2 * standard_gamma((0.5 * self.df).expand(shape))
        return self.loc + self.scale * z * (chi2 / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + lgamma(0.5 * self.df) - lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * log1p(y.pow(2) / self.df) - z

    def entropy(self):
        df = self.df
        lbeta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log() + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
