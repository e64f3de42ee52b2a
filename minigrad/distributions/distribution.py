"""`Distribution`, the base of the distributions (PyTorch's): shapes, argument checks, and
sampling defined through `rsample` where a distribution has it.

A distribution of batch shape B and event shape E draws samples of shape S + B + E for a
`sample_shape` S; `log_prob` of such a value has shape S + B. Sampling uses minigrad's
random stream, so `manual_seed` makes it repeatable (the numbers are not PyTorch's).
"""
from __future__ import annotations

import numpy as np

from minigrad import Size, Tensor, no_grad

from . import constraints
from .utils import lazy_property

__all__ = ["Distribution", "lazy_property"]


def _shape(size):
    """A shape as PyTorch's distributions keep it: a `Size` (so that `batch_shape` prints as
    `Size([3])`, as `torch.Size([3])` does)."""
    return Size(int(n) for n in ((size,) if isinstance(size, (int, np.integer)) else size))


class Distribution:
    """Subclasses set `arg_constraints` ({parameter name: constraint}) and `support`, and
    define `log_prob`, `entropy` and `rsample` (reparameterised, differentiable) or `sample`."""
    has_rsample = False
    has_enumerate_support = False
    arg_constraints = {}
    support = None
    _validate_args = True  # PyTorch's default (outside python -O)

    @staticmethod
    def set_default_validate_args(value):
        """Whether new distributions check their arguments and `log_prob`'s values."""
        if value not in (True, False):
            raise ValueError(f"set_default_validate_args: expected True or False, got {value!r}")
        Distribution._validate_args = value

    def __init__(self, batch_shape=(), event_shape=(), validate_args=None):
        self._batch_shape, self._event_shape = _shape(batch_shape), _shape(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            for name, constraint in self.arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # a constraint on other parameters (a support, a bound)
                if name not in self.__dict__ and isinstance(getattr(type(self), name, None),
                                                            lazy_property):
                    continue  # a parameter given in its other form (logits for probs)
                value = getattr(self, name)
                ok = constraint.check(np.asarray(value.detach().numpy()))
                if not np.all(ok):
                    raise ValueError(
                        f"Expected parameter {name} ({type(value).__name__} of shape "
                        f"{tuple(value.shape)}) of distribution {self!r} to satisfy the "
                        f"constraint {constraint!r}, but found invalid values:\n{value}")

    @property
    def batch_shape(self):
        return Size(self._batch_shape)

    @property
    def event_shape(self):
        return Size(self._event_shape)

    @property
    def mean(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mean")

    @property
    def mode(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement mode")

    @property
    def variance(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement variance")

    @property
    def stddev(self):
        return self.variance.sqrt()

    def expand(self, batch_shape, _instance=None):
        """The same distribution over a larger batch: each parameter tensor (of shape batch_shape
        + its own event dims) expanded, without copying or checking the arguments again, as
        PyTorch's `expand`. Distributions built from others override it."""
        batch_shape = _shape(batch_shape)
        new = _instance if _instance is not None else object.__new__(type(self))
        old = len(self._batch_shape)
        for name, value in self.__dict__.items():
            if isinstance(value, Tensor) and tuple(value.shape[:old]) == self._batch_shape:
                value = value.expand(batch_shape + tuple(value.shape[old:]))
            new.__dict__[name] = value
        new._batch_shape = batch_shape
        return new

    def _expanded(self, new, batch_shape, event_shape=None):
        """Finish an `expand` that set `new`'s parts: its shapes, and this one's validation."""
        event_shape = self._event_shape if event_shape is None else event_shape
        Distribution.__init__(new, batch_shape, event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def cdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement cdf")

    def icdf(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement icdf")

    def enumerate_support(self, expand=True):
        raise NotImplementedError(f"{type(self).__name__} does not implement enumerate_support")

    def sample_n(self, n):
        return self.sample((n,))

    def sample(self, sample_shape=()):
        """A sample of shape sample_shape + batch_shape + event_shape, outside autograd."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=()):
        raise NotImplementedError(f"{type(self).__name__} has no reparameterised sampling "
                                  f"(rsample)")

    def log_prob(self, value):
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self):
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=()):
        return _shape(sample_shape) + self._batch_shape + self._event_shape

    def _validate_sample(self, value):
        """`value` must be a tensor whose shape broadcasts with the batch and event shapes, and
        lie in the support; the error names the distribution, as PyTorch's does."""
        if not isinstance(value, Tensor):
            raise ValueError(f"The value argument to log_prob must be a Tensor, got "
                             f"{type(value).__name__}")
        shape = self._batch_shape + self._event_shape
        n = len(self._event_shape)
        if n and tuple(value.shape[-n:]) != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: "
                             f"{tuple(value.shape)} vs {self._event_shape}.")
        try:
            np.broadcast_shapes(tuple(value.shape), shape)
        except ValueError:
            raise ValueError(f"Value of shape {tuple(value.shape)} is not broadcastable with "
                             f"batch_shape+event_shape: {shape}") from None
        ok = self.support.check(np.asarray(value.detach().numpy()))
        if not np.all(ok):
            raise ValueError(f"Expected value argument ({type(value).__name__} of shape "
                             f"{tuple(value.shape)}) to be within the support "
                             f"({self.support!r}) of the distribution {self!r}, but found "
                             f"invalid values:\n{value}")

    def __repr__(self):
        def shown(t):  # a 0-d parameter by value, a larger one by its Size (PyTorch's text)
            return t.item() if t.ndim == 0 else t if t.numel() == 1 else t.size()
        args = ", ".join(f"{k}: {shown(self.__dict__[k])}" for k in self.arg_constraints
                         if k in self.__dict__)
        return f"{type(self).__name__}({args})"
