"""Transforms that rearrange or combine others (PyTorch's): `ReshapeTransform` (an event
reshaped, unit Jacobian), `IndependentTransform` (a transform whose log |det J| is summed over
more trailing dims), and `CatTransform` / `StackTransform` (a transform per block or slice
along a dim, as torch.cat and torch.stack join them) -- what `biject_to` builds for
`constraints.independent`, `cat` and `stack` -- and `CumulativeDistributionTransform`, a
distribution's cdf as a transform."""
from __future__ import annotations

import math

from minigrad import cat, stack, zeros

from . import constraints
from .transform_base import Transform, _sum_rightmost

__all__ = ["CatTransform", "CumulativeDistributionTransform", "IndependentTransform",
           "ReshapeTransform", "StackTransform"]


class ReshapeTransform(Transform):
    """The trailing `in_shape` of x reshaped to `out_shape` (the same number of elements)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        if math.prod(self.in_shape) != math.prod(self.out_shape):
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(tuple(x.shape[:x.ndim - len(self.in_shape)]) + self.out_shape)

    def _inverse(self, y):
        return y.reshape(tuple(y.shape[:y.ndim - len(self.out_shape)]) + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return zeros(*x.shape[:x.ndim - len(self.in_shape)], dtype=x.dtype)

    @staticmethod
    def _swap(shape, old, new):
        shape = tuple(shape)
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._swap(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap(shape, self.out_shape, self.in_shape)


class IndependentTransform(Transform):
    """`base_transform` with `reinterpreted_batch_ndims` more trailing dims in each event:
    the same map, its log |det J| summed over them."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    bijective = property(lambda self: self.base_transform.bijective)
    sign = property(lambda self: self.base_transform.sign)

    def _call(self, x):
        if x.ndim < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.ndim < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"


def _check_dim(name, value, dim, size, what):
    """PyTorch asserts these, so its exception type is AssertionError."""
    if not -value.ndim <= dim < value.ndim:
        raise AssertionError(f"{name}: dim {dim} out of range for a tensor with {value.ndim} "
                         f"dimensions")
    if value.shape[dim] != size:
        raise AssertionError(f"{name}: size {value.shape[dim]} along dim {dim} must equal {what} "
                         f"{size}")


class _Joined(Transform):
    """The part CatTransform and StackTransform share: a transform per piece of x along
    `dim`, the pieces joined again."""

    def __init__(self, tseq, dim, cache_size):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError(f"{type(self).__name__}: every element of tseq must be a "
                                 f"Transform")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms, self.dim = list(tseq), dim

    bijective = property(lambda self: all(t.bijective for t in self.transforms))

    def _each(self, value, apply):
        self._check(value)
        return self._join([apply(t, piece) for t, piece in zip(self.transforms,
                                                                 self._pieces(value))])

    def _call(self, x):
        return self._each(x, lambda t, piece: t(piece))

    def _inverse(self, y):
        return self._each(y, lambda t, piece: t.inv(piece))


class CatTransform(_Joined):
    """`tseq[i]` on the i-th block of `lengths[i]` entries along `dim` (1 each by default)."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        super().__init__(tseq, dim, cache_size)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"CatTransform: {len(self.lengths)} lengths for "
                             f"{len(self.transforms)} transforms")

    @property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, value):
        _check_dim("CatTransform", value, self.dim, self.length, "the total length")

    def _pieces(self, value):
        starts = [sum(self.lengths[:i]) for i in range(len(self.lengths))]
        return [value.narrow(self.dim, s, n) for s, n in zip(starts, self.lengths)]

    def _join(self, pieces):
        return cat(pieces, self.dim)

    def log_abs_det_jacobian(self, x, y):
        """Each block's, summed over the dims it has fewer than the widest; joined along
        `dim` when that dim is a batch dim, else added."""
        self._check(x)
        self._check(y)
        parts = []
        for t, a, b in zip(self.transforms, self._pieces(x), self._pieces(y)):
            parts.append(_sum_rightmost(t.log_abs_det_jacobian(a, b),
                                        self.event_dim - t.event_dim))
        dim = (self.dim - x.ndim if self.dim >= 0 else self.dim) + self.event_dim
        return cat(parts, dim) if dim < 0 else sum(parts)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(_Joined):
    """`tseq[i]` on the i-th slice along `dim` (x has len(tseq) of them)."""

    def __init__(self, tseq, dim=0, cache_size=0):
        super().__init__(tseq, dim, cache_size)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _check(self, value):
        _check_dim("StackTransform", value, self.dim, len(self.transforms),
                   "the number of transforms")

    def _pieces(self, value):
        return [value.select(self.dim, i) for i in range(value.shape[self.dim])]

    def _join(self, pieces):
        return stack(pieces, self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x)
        self._check(y)
        return stack([t.log_abs_det_jacobian(a, b) for t, a, b in
                      zip(self.transforms, self._pieces(x), self._pieces(y))], self.dim)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto the unit interval (a copula's marginals); the inverse is
    its icdf and log |dy/dx| its log_prob."""
    bijective, codomain, sign = True, constraints.unit_interval, +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)
