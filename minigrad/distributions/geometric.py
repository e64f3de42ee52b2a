"""`Geometric`: the number of failures before the first success of Bernoulli(p) trials
(PyTorch's `torch.distributions.Geometric`), given p or its logit."""
from __future__ import annotations

from minigrad import finfo, log1p, no_grad, rand, where
from minigrad.nn.functional import binary_cross_entropy_with_logits

from . import constraints
from .distribution import Distribution
from .utils import BinaryProbsOrLogits, broadcast_all

__all__ = ["Geometric"]


class Geometric(BinaryProbsOrLogits, Distribution):
    """P(k) = (1 - p)^k p for k = 0, 1, ...; `probs` in (0, 1] or `logits`: exactly one."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            shape = tuple(self.probs.shape)
        else:
            (self.logits,) = broadcast_all(logits)
            shape = tuple(self.logits.shape)
        super().__init__(shape, (), validate_args)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return self.probs * 0

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=()):
        """floor(log(u) / log(1 - p)) for u uniform, at least the dtype's tiny."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            u = rand(*shape, dtype=self.probs.dtype).clamp(min=float(finfo(self.probs.dtype).tiny))
            return (u.log() / log1p(-self.probs)).floor()

    def log_prob(self, value):
        """value log(1 - p) + log(p), with 0 log 0 = 0 where p = 1 and value = 0."""
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        probs = where((probs == 1) & (value == 0), 0.0, probs)
        return value * log1p(-probs) + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs
