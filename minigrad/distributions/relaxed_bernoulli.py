"""`RelaxedBernoulli` (PyTorch's): the Concrete / Gumbel-sigmoid relaxation of a Bernoulli,
values in (0, 1) with reparameterised samples, that tend to 0 or 1 as `temperature` goes to 0;
built as the sigmoid of a `LogitRelaxedBernoulli`, whose samples are
(logit(u) + logits) / temperature for u uniform."""
from __future__ import annotations

from minigrad import Tensor, rand, tensor

from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (BinaryProbsOrLogits, broadcast_all, clamp_probs, expand_probs_or_logits,
                    probs_or_logits)

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


def _temperature(temperature, like):
    """A number becomes a tensor of the parameter's dtype (log_prob takes its log)."""
    return temperature if isinstance(temperature, Tensor) else tensor(float(temperature),
                                                                      dtype=like.dtype)


class LogitRelaxedBernoulli(BinaryProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli: `temperature` and `probs` or `logits` (exactly one)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        name, param, shape = probs_or_logits(probs, logits)
        setattr(self, name, param)
        self._param = param
        self.temperature = _temperature(temperature, param)
        super().__init__(shape, (), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new.temperature = self.temperature
        expand_probs_or_logits(self, new, batch_shape)
        return self._expanded(new, tuple(batch_shape))

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    def rsample(self, sample_shape=()):
        """(logit(u) + logit(p)) / temperature, u uniform and both clamped to [eps, 1 - eps]."""
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(*shape, dtype=probs.dtype))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        """log t + d - 2 log(1 + exp(d)) for d = logits - t value."""
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value * self.temperature
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """Values in (0, 1): sigmoid of LogitRelaxedBernoulli(temperature, probs or logits)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
