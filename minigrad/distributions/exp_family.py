"""`ExponentialFamily` (PyTorch's base class): distributions of density
exp(<t(x), theta> - F(theta) + k(x)), whose entropy follows from the log-normaliser F by
autograd: H = F(theta) - <theta, grad F(theta)> - E[k(x)]. Subclasses give `_natural_params`
(theta), `_log_normalizer` (F) and `_mean_carrier_measure` (E[k(x)]); `kl_divergence` of two
of the same family is the Bregman divergence of F."""
from __future__ import annotations

from minigrad import autograd

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of exponential-family distributions (ContinuousBernoulli here)."""

    @property
    def _natural_params(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement _natural_params")

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError(f"{type(self).__name__} does not implement _log_normalizer")

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  f"_mean_carrier_measure")

    def entropy(self):
        """F(theta) - <theta, grad F> - E[k(x)], at detached natural parameters (as PyTorch's:
        the result is not differentiable in the distribution's parameters)."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        grads = autograd.grad(log_norm.sum(), params, create_graph=True)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
