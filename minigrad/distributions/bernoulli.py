"""`Bernoulli`: 1 with probability p, 0 otherwise (PyTorch's `torch.distributions.Bernoulli`),
given p or its logit log(p / (1 - p)), per element of the batch."""
from __future__ import annotations

import numpy as np

from minigrad import bernoulli, finfo, log1p, no_grad, tensor, where
from minigrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution, lazy_property
from .utils import broadcast_all

__all__ = ["Bernoulli"]


class Bernoulli(Distribution):
    """`probs` in [0, 1] or `logits` (tensors or numbers, of the batch's shape): exactly one.
    Samples are 0. and 1. in the parameter's dtype; `log_prob` and `entropy` are
    differentiable in the parameter given."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), (), validate_args)

    @lazy_property
    def logits(self):
        """log(p) - log(1 - p), with p clamped to [eps, 1 - eps] (eps the dtype's) first, as
        PyTorch's `probs_to_logits`, so that p = 0 or 1 gives a finite logit."""
        eps = float(finfo(self.probs.dtype).eps)
        p = self.probs.clamp(min=eps, max=1 - eps)
        return p.log() - log1p(-p)

    @lazy_property
    def probs(self):
        """sigmoid(logits)."""
        return self.logits.sigmoid()

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        """1 where p > 1/2, 0 where p < 1/2, NaN at exactly 1/2."""
        mode = (self.probs >= 0.5).to(self.probs.dtype)
        return where(self.probs == 0.5, float("nan"), mode).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        """0. and 1. of shape sample_shape + batch_shape, from minigrad's stream."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        """log p where value is 1, log(1 - p) where it is 0: minus the binary cross entropy
        of the logits, which stays finite for any logit."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        """-(p log p + (1 - p) log(1 - p)), per element of the batch."""
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        """(2, B...) of 0. and 1. (expanded over the batch), or (2, 1, ...) if not."""
        values = tensor(np.array([0.0, 1.0]), dtype=self._param.dtype)
        values = values.reshape((2,) + (1,) * len(self._batch_shape))
        return values.expand((2,) + self._batch_shape) if expand else values
