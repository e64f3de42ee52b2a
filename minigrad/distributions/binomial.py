"""`Binomial`: the number of successes in `total_count` Bernoulli(p) trials (PyTorch's
`torch.distributions.Binomial`), given p or its logit."""
from __future__ import annotations

from minigrad import arange, lgamma, log1p, no_grad
from minigrad.random import generator

from . import constraints
from .distribution import Distribution
from .utils import BinaryProbsOrLogits, broadcast_all, dtype_name

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0), with the gradient 1/2 at 0 that PyTorch's form gives."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbsOrLogits, Distribution):
    """Binomial(total_count, probs or logits) per element of the batch; samples and values
    are counts in the parameter's dtype."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.to(self.probs.dtype)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.to(self.logits.dtype)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(tuple(self._param.shape), (), validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            n = self.total_count.expand(shape).numpy().astype("int64")
            p = self.probs.expand(shape).numpy()
            counts = generator().binomial(n, p)
            from minigrad import tensor
            return tensor(counts.astype(dtype_name(self.probs.dtype)))

    def log_prob(self, value):
        """log C(n, k) + k logit - n log(1 + e^logit), written to stay finite for any logit."""
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        normalize = n * _clamp_by_zero(self.logits) + n * log1p((-self.logits.abs()).exp()) \
            - lgamma(n + 1)
        return value * self.logits - lgamma(value + 1) - lgamma(n - value + 1) - normalize

    def _homogeneous_count(self, what):
        count = int(self.total_count.max().item())
        if not self.total_count.min().item() == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
