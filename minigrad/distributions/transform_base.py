"""The base of the transforms (PyTorch's `torch.distributions.transforms.Transform`): a map
with its inverse, a cache of the last pair, and the log |det| of its Jacobian; the inverse as
a transform of its own, and `ComposeTransform`, the maps applied in order. The concrete maps
are in transforms.py."""
from __future__ import annotations

import numpy as np

from minigrad import Tensor, zeros_like

from . import constraints

__all__ = ["ComposeTransform", "Transform", "identity_transform"]


def _sum_rightmost(value, dim):
    """value summed over its last `dim` dims (a number as it is)."""
    return value.reshape(tuple(value.shape[:value.ndim - dim]) + (-1,)).sum(-1) if dim else value


class Transform:
    """Subclasses define `_call` (x -> y), `_inverse` (y -> x) and `log_abs_det_jacobian`."""
    bijective = False
    domain = constraints.real
    codomain = constraints.real

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError("cache_size must be 0 or 1")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (the same one each time; its `inv` is this one)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        raise NotImplementedError(f"{type(self).__name__} has no sign")

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __call__(self, x):
        return self._cached(x, forward=True)

    def _inv_call(self, y):
        return self._cached(y, forward=False)

    def _cached(self, value, forward):
        """y of x (forward) or x of y, from the cached pair when `value` is its other half."""
        if self._cache_size == 0:
            return self._call(value) if forward else self._inverse(value)
        x_old, y_old = self._cached_x_y
        if value is (x_old if forward else y_old):
            return y_old if forward else x_old
        other = self._call(value) if forward else self._inverse(value)
        self._cached_x_y = (value, other) if forward else (other, value)
        return other

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} does not implement _call")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement _inverse")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__} does not implement "
                                  f"log_abs_det_jacobian")

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{type(self).__name__}()"


class _InverseTransform(Transform):
    """`transform.inv`: calls run the inverse, and the log-determinant changes sign."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    domain = property(lambda self: self._inv.codomain)
    codomain = property(lambda self: self._inv.domain)
    bijective = property(lambda self: self._inv.bijective)
    sign = property(lambda self: self._inv.sign)

    @property
    def inv(self):
        return self._inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__


class ComposeTransform(Transform):
    """`parts` applied in order; the log-determinants add (summed over event dims first)."""

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain, event_dim = self.parts[0].domain, self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim > domain.event_dim:
            domain = constraints.independent(domain, event_dim - domain.event_dim)
        return domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain, event_dim = self.parts[-1].codomain, self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim > codomain.event_dim:
            codomain = constraints.independent(codomain, event_dim - codomain.event_dim)
        return codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        result, event_dim = 0, self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            result = result + _sum_rightmost(part.log_abs_det_jacobian(a, b),
                                             event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return result

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        inner = ",\n    ".join(repr(p) for p in self.parts)
        return f"{type(self).__name__}(\n    {inner}\n)"


identity_transform = ComposeTransform([])


def _broadcast(shape, *params):
    shapes = [tuple(p.shape) for p in params if isinstance(p, Tensor)]
    return tuple(np.broadcast_shapes(tuple(shape), *shapes))
