"""`Categorical`: one of K categories, given their probabilities or their logits (PyTorch's
`torch.distributions.Categorical`), over a batch of shape B: parameters (B..., K)."""
from __future__ import annotations

import numpy as np

from minigrad import Tensor, finfo, multinomial, no_grad, tensor

from . import constraints
from .distribution import Distribution, lazy_property

__all__ = ["Categorical"]


def _as_tensor(x):
    return x if isinstance(x, Tensor) else tensor(x)


class Categorical(Distribution):
    """`probs` (B..., K), non-negative (normalised to sum to 1 along K), or `logits` (B...,
    K), unnormalised log-probabilities: exactly one. Samples are category ids (B...) of
    int64; `log_prob` and `entropy` are differentiable in the parameter given."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            probs = _as_tensor(probs)
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            logits = _as_tensor(logits)
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        super().__init__(self._param.shape[:-1], (), validate_args)

    @lazy_property
    def logits(self):
        """Normalised log-probabilities (B..., K); from probs, each clamped to [eps, 1 - eps]
        first (eps the dtype's), as PyTorch's `probs_to_logits`, so a zero gives a finite
        value."""
        eps = float(finfo(self.probs.dtype).eps)
        return self.probs.clamp(min=eps, max=1 - eps).log()

    @lazy_property
    def probs(self):
        """Probabilities (B..., K): the softmax of the logits."""
        return self.logits.softmax(-1)

    @property
    def param_shape(self):
        return tuple(self._param.shape)

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return tensor(np.full(self._batch_shape, np.nan, dtype=self.probs.dtype))

    @property
    def variance(self):
        return self.mean

    @property
    def mode(self):
        return self.probs.argmax(-1)

    def sample(self, sample_shape=()):
        """Category ids of shape sample_shape + batch_shape (int64), from minigrad's stream."""
        shape = self._extended_shape(sample_shape)
        count = int(np.prod(shape[:len(shape) - len(self._batch_shape)], dtype=np.int64))
        with no_grad():
            rows = self.probs.reshape(-1, self._num_events)  # (prod(B), K)
            draws = multinomial(rows, count, True).T         # (count, prod(B))
        return draws.reshape(shape)

    def log_prob(self, value):
        """log p(value) for category ids broadcast against the batch: (S..., B...)."""
        if self._validate_args:
            self._validate_sample(value)
        ids = value.long().unsqueeze(-1)
        shape = np.broadcast_shapes(tuple(ids.shape), tuple(self.logits.shape))
        ids = ids.expand(shape[:-1] + (1,))
        return self.logits.expand(shape).gather(-1, ids).squeeze(-1)

    def entropy(self):
        """-sum_k p_k log p_k over the categories (B...); a zero probability counts 0."""
        logits = self.logits.clamp(min=float(finfo(self.logits.dtype).min))
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        """Every category id, (K, B...) (expanded over the batch) or (K, 1, ...) if not."""
        from minigrad import arange
        values = arange(self._num_events).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + self._batch_shape) if expand else values
