"""`FisherSnedecor`: the F distribution of `df1` and `df2` degrees of freedom (PyTorch's
`torch.distributions.FisherSnedecor`), the ratio of two scaled chi-squares; reparameterised
through its two Gamma draws."""
from __future__ import annotations

import math
import numbers

from minigrad import finfo, where

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """F(df1, df2) per element of the batch."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers_only = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(() if numbers_only else tuple(self.df1.shape), (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        batch_shape = tuple(batch_shape)
        new.df1, new.df2 = self.df1.expand(batch_shape), self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        return self._expanded(new, batch_shape)

    @property
    def mean(self):
        """df2 / (df2 - 2), NaN for df2 <= 2."""
        df2 = where(self.df2 <= 2, math.nan, self.df2)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return where(self.df1 <= 2, math.nan, mode)

    @property
    def variance(self):
        """NaN for df2 <= 4: df2 is NaN there before the formula, as in PyTorch, so that the
        gradient in df1 is NaN there too."""
        d1, d2 = self.df1, where(self.df2 <= 4, math.nan, self.df2)
        return 2 * d2.pow(2) * (d1 + d2 - 2) / (d1 * (d2 - 2).pow(2) * (d2 - 4))

    def rsample(self, sample_shape=()):
        """X1 / X2 for X_i ~ Gamma(df_i / 2, df_i), both kept above the dtype's tiny."""
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).reshape(shape)
        x2 = self._gamma2.rsample(sample_shape).reshape(shape)
        tiny = float(finfo(x2.dtype).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * value.log()
        t3 = (ct1 + ct2) * (ct3 * value).log1p()
        return t1 + t2 - t3
