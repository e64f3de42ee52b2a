"""Transforms onto the probability simplex (PyTorch's): `SoftmaxTransform` (exp, then
normalised: not bijective, what `transform_to(simplex)` gives) and `StickBreakingTransform`
(K - 1 reals to K probabilities through iterated sigmoids: bijective, what
`biject_to(simplex)` gives, with its log |det J|)."""
from __future__ import annotations

from minigrad import arange, finfo
from minigrad.nn.functional import logsigmoid, pad

from . import constraints
from .transform_base import Transform

__all__ = ["SoftmaxTransform", "StickBreakingTransform"]


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")
    return tuple(shape)


class SoftmaxTransform(Transform):
    """(..., K) -> (..., K): exp(x - max) normalised over the last dim; the inverse is log."""
    domain, codomain = constraints.real_vector, constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        probs = (x - x.max(-1, keepdim=True)[0]).exp()
        return probs / probs.sum(-1, keepdim=True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        return _at_least_one_dim(shape)

    def inverse_shape(self, shape):
        return _at_least_one_dim(shape)


class StickBreakingTransform(Transform):
    """(..., K - 1) -> (..., K): z_i = sigmoid(x_i - log(K - i)) (so x = 0 gives the uniform
    point) breaks off that fraction of the stick left; the last entry is what remains."""
    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__

    @staticmethod
    def _log_offset(n, like):
        """log(K - i) for i = 1..K-1 (K = n + 1): the shift that centres x = 0."""
        return (n - arange(n, dtype=like.dtype)).log()

    def _call(self, x):
        info = finfo(x.dtype)
        z = (x - self._log_offset(x.shape[-1], x)).sigmoid().clamp(min=float(info.tiny),
                                                                  max=1.0 - float(info.eps))
        remaining = (1 - z).cumprod(-1)
        return pad(z, (0, 1), value=1) * pad(remaining, (1, 0), value=1)

    def _inverse(self, y):
        head = y[..., :-1]
        left = (1 - head.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return head.log() - left.log() + self._log_offset(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        x = x - self._log_offset(x.shape[-1], x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        shape = _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] - 1,)
