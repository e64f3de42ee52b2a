"""The constraints a distribution's parameters and values must satisfy (PyTorch's
`torch.distributions.constraints`, the ones its distributions use): each `check(value)`
returns a bool array of the batch's shape, and prints as PyTorch's does, since the errors
name it."""
from __future__ import annotations

import numpy as np

__all__ = ["Constraint", "boolean", "greater_than", "independent", "integer_interval",
           "interval", "less_than", "positive", "real", "real_vector", "simplex", "unit_interval"]


class Constraint:
    """A region of values; `event_dim` is the number of trailing dims one check covers."""
    event_dim = 0
    is_discrete = False

    def check(self, value):
        """A bool array: True where `value` (a NumPy array) is valid, one per event."""
        raise NotImplementedError(f"{type(self).__name__} does not implement check")

    def __repr__(self):
        return f"{type(self).__name__[1:]}()"


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only at NaN


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > _array(self.lower_bound)

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < _array(self.upper_bound)

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


def _array(bound):
    """A bound as a NumPy value: a number, or a tensor's array (Uniform's bounds)."""
    return bound.detach().numpy() if hasattr(bound, "detach") else bound


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (_array(self.lower_bound) <= value) & (value <= _array(self.upper_bound))

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return np.all(value >= 0, axis=-1) & (np.abs(value.sum(-1) - 1) < 1e-6)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (self.lower_bound <= value) & (value <= self.upper_bound)

    def __repr__(self):
        return f"IntegerInterval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IndependentConstraint(Constraint):
    """`base` checked on every element, valid where all of the last `n` dims are."""

    def __init__(self, base, n):
        self.base, self.event_dim = base, base.event_dim + n
        self.n = n

    def check(self, value):
        ok = self.base.check(value)
        return ok.all(axis=tuple(range(-self.n, 0))) if self.n else ok

    def __repr__(self):
        return f"IndependentConstraint({self.base!r}, {self.n})"


real = _Real()
boolean = _Boolean()
interval = _Interval
greater_than = _GreaterThan
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
positive = _GreaterThan(0.0)
simplex = _Simplex()
integer_interval = _IntegerInterval
independent = _IndependentConstraint
real_vector = independent(real, 1)
