"""`Multinomial`: the counts of `total_count` draws among K categories (PyTorch's
`torch.distributions.Multinomial`), parameters (B..., K), counts (..., K)."""
from __future__ import annotations

import math

import numpy as np

from minigrad import int64, lgamma, no_grad, ones_like, where, zeros

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """`total_count` (an int) and `probs` or `logits` (B..., K), as Categorical's."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        new._binomial = Binomial(self.total_count, probs=new._categorical.probs)
        return self._expanded(new, tuple(batch_shape))

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """Counts (S..., B..., K) in the parameter's dtype: total_count category draws
        (PyTorch's numbers after the same seed), counted per category."""
        sample_shape = tuple(sample_shape)
        with no_grad():
            draws = self._categorical.sample((self.total_count,) + sample_shape)
            draws = draws.permute(*range(1, draws.dim()), 0)  # (S..., B..., total_count)
            counts = zeros(self._extended_shape(sample_shape), dtype=int64)
            counts.scatter_add_(-1, draws, ones_like(draws))
            return counts.to(self.probs.dtype)

    def log_prob(self, value):
        """log n! - sum log x_k! + sum x_k log p_k (a zero count of a zero p counts 0)."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = where((value == 0) & (logits == -np.inf), 0.0, logits)
        return lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1) + (logits * value).sum(-1)

    def entropy(self):
        n = self.total_count
        # log n! rounded to float32, as PyTorch's (its lgamma of an int64 tensor is float32)
        term1 = n * self._categorical.entropy() - float(np.float32(math.lgamma(n + 1)))
        support = self._binomial.enumerate_support(expand=False)[1:]
        weights = lgamma(support + 1)
        return term1 + (self._binomial.log_prob(support).exp() * weights).sum([0, -1])
