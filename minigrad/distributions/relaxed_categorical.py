"""`RelaxedOneHotCategorical` (PyTorch's): the Concrete / Gumbel-softmax relaxation of a
one-hot categorical, points of the simplex with reparameterised samples
softmax((logits + Gumbel noise) / temperature), as a Gumbel-softmax VAE draws them; built as
exp of an `ExpRelaxedCategorical` (the log of such a point)."""
from __future__ import annotations

from minigrad import Tensor, full_like, rand, tensor

from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """log of a RelaxedOneHotCategorical: `temperature` and `probs` or `logits` (..., K)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # the values lie on a (K - 1)-dim surface in it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        param = self._categorical._param
        self.temperature = temperature if isinstance(temperature, Tensor) else \
            tensor(float(temperature), dtype=param.dtype)
        super().__init__(self._categorical.batch_shape, tuple(param.shape[-1:]), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        return self._expanded(new, tuple(batch_shape))

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=()):
        """log_softmax((logits + g) / temperature), g = -log(-log u) Gumbel noise."""
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(*shape, dtype=self.logits.dtype))
        scores = (self.logits - (-u.log()).log()) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        """lgamma(K) + (K - 1) log t + sum_k (s_k - logsumexp(s)), s = logits - t value."""
        if self._validate_args:
            self._validate_sample(value)
        k = self._categorical._num_events
        logits, value = broadcast_all(self.logits, value)
        log_scale = full_like(self.temperature, float(k)).lgamma() + \
            self.temperature.log() * (k - 1)
        score = logits - value * self.temperature
        return (score - score.logsumexp(-1, keepdim=True)).sum(-1) + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """Points of the simplex: exp of ExpRelaxedCategorical(temperature, probs or logits)."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
