"""The constraints a distribution's parameters and values must satisfy (PyTorch's
`torch.distributions.constraints`, the ones its distributions and `biject_to` use): each
`check(value)` returns a bool array of the batch's shape (a bool tensor when given a tensor,
as PyTorch's), and prints as PyTorch's does, since the errors name it."""
from __future__ import annotations

import functools

import numpy as np

from minigrad import Tensor, tensor

__all__ = ["Constraint", "boolean", "cat", "corr_cholesky", "dependent", "dependent_property",
           "greater_than", "greater_than_eq", "half_open_interval", "independent",
           "integer_interval", "interval", "is_dependent", "less_than", "lower_cholesky",
           "lower_triangular", "multinomial", "nonnegative", "nonnegative_integer", "one_hot",
           "positive", "positive_definite", "positive_integer", "positive_semidefinite", "real",
           "real_vector", "simplex", "square", "stack", "symmetric", "unit_interval"]


def _takes_tensors(check):
    """`check` written on NumPy arrays, also called as PyTorch's is, with a tensor: then its
    result is a bool tensor (user code calls `constraints.simplex.check(x).all()`)."""
    @functools.wraps(check)
    def wrapped(self, value):
        if isinstance(value, Tensor):
            return tensor(np.asarray(check(self, np.asarray(value.detach().numpy()))))
        return check(self, value)
    return wrapped


class Constraint:
    """A region of values; `event_dim` is the number of trailing dims one check covers."""
    event_dim = 0
    is_discrete = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "check" in cls.__dict__:
            cls.check = _takes_tensors(cls.__dict__["check"])

    def check(self, value):
        """A bool array: True where `value` (a NumPy array, or a tensor: then a bool tensor)
        is valid, one per event."""
        raise NotImplementedError(f"{type(self).__name__} does not implement check")

    def __repr__(self):
        return f"{type(self).__name__[1:]}()"


def _array(bound):
    """A bound as a NumPy value: a number, or a tensor's array (Uniform's bounds)."""
    return bound.detach().numpy() if hasattr(bound, "detach") else bound


class _Dependent(Constraint):
    """A constraint that depends on other parameters (Binomial's support on total_count):
    the argument checks skip it."""

    def __init__(self, is_discrete=False, event_dim=0):
        self.is_discrete, self.event_dim = is_discrete, event_dim

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


class _DependentProperty(property, _Dependent):
    """`@constraints.dependent_property`: a property whose class-level value is dependent."""

    def __init__(self, fn=None, *, is_discrete=False, event_dim=0):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete, event_dim)

    def __call__(self, fn):
        """The decorator form with arguments: `@dependent_property(is_discrete=True)`."""
        return _DependentProperty(fn, is_discrete=self.is_discrete, event_dim=self.event_dim)


def is_dependent(constraint):
    return isinstance(constraint, _Dependent)


class _Real(Constraint):
    def check(self, value):
        return value == value  # False only at NaN


class _Bound(Constraint):
    """A one-sided bound; `name` says which, for the repr."""
    name = "lower_bound"

    def __init__(self, bound):
        setattr(self, self.name, bound)

    def __repr__(self):
        return f"{type(self).__name__[1:]}({self.name}={getattr(self, self.name)})"


class _GreaterThan(_Bound):
    def check(self, value):
        return value > _array(self.lower_bound)


class _GreaterThanEq(_Bound):
    def check(self, value):
        return value >= _array(self.lower_bound)


class _LessThan(_Bound):
    name = "upper_bound"

    def check(self, value):
        return value < _array(self.upper_bound)


class _IntegerGreaterThan(_Bound):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (_array(self.lower_bound) <= value) & (value <= _array(self.upper_bound))

    def __repr__(self):
        return (f"{type(self).__name__[1:]}(lower_bound={self.lower_bound}, "
                f"upper_bound={self.upper_bound})")


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (_array(self.lower_bound) <= value) & (value < _array(self.upper_bound))


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return (value % 1 == 0) & super().check(value)


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete, event_dim = True, 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _Multinomial(Constraint):
    """Counts (..., K) that are non-negative and add up to at most `upper_bound`."""
    is_discrete, event_dim = True, 1

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value.sum(-1) <= self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return np.all(value >= 0, axis=-1) & (np.abs(value.sum(-1) - 1) < 1e-6)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (np.tril(value) == value).all((-2, -1))


class _LowerCholesky(_LowerTriangular):
    def check(self, value):
        return super().check(value) & (np.diagonal(value, axis1=-2, axis2=-1) > 0).all(-1)


class _CorrCholesky(_LowerCholesky):
    """A lower Cholesky factor whose rows have unit length (to 10 eps per column, as
    PyTorch's): the Cholesky factor of a correlation matrix."""

    def check(self, value):
        tol = float(np.finfo(value.dtype).eps) * value.shape[-1] * 10
        unit_rows = (np.abs(np.linalg.norm(value, axis=-1) - 1.0) <= tol).all(-1)
        return super().check(value) & unit_rows


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        return np.full(value.shape[:-2], value.shape[-2] == value.shape[-1], bool)


class _Symmetric(_Square):
    def check(self, value):
        square = super().check(value)
        if not square.all():
            return square
        return np.isclose(value, np.swapaxes(value, -1, -2), atol=1e-6).all((-2, -1))


class _PositiveSemidefinite(_Symmetric):
    def check(self, value):
        symmetric = super().check(value)
        if not symmetric.all():
            return symmetric
        return (np.linalg.eigvalsh(value) >= 0).all(-1)


class _PositiveDefinite(Constraint):
    """Square, symmetric to 1e-6 and with a Cholesky factor, as PyTorch's checks."""
    event_dim = 2

    def check(self, value):
        if value.shape[-1] != value.shape[-2]:
            return np.zeros(value.shape[:-2], bool)
        symmetric = np.isclose(value, np.swapaxes(value, -1, -2), atol=1e-6).all((-2, -1))
        if not symmetric.all():
            return symmetric
        ok = np.empty(value.shape[:-2], bool)
        for index in np.ndindex(ok.shape):
            try:
                np.linalg.cholesky(value[index])
                ok[index] = True
            except np.linalg.LinAlgError:
                ok[index] = False
        return ok


class _IndependentConstraint(Constraint):
    """`base_constraint` checked on every element, valid where all of the last
    `reinterpreted_batch_ndims` dims are."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        self.base_constraint = base_constraint
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        self.event_dim = base_constraint.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base_constraint.is_discrete

    def check(self, value):
        ok, n = np.asarray(self.base_constraint.check(value)), self.reinterpreted_batch_ndims
        if ok.ndim < n:
            raise ValueError(f"Expected value.dim() >= {self.event_dim} but got {value.ndim}")
        return ok.all(axis=tuple(range(-n, 0))) if n else ok

    def __repr__(self):
        return (f"{type(self).__name__[1:]}({self.base_constraint!r}, "
                f"{self.reinterpreted_batch_ndims})")


class _Cat(Constraint):
    """`cseq[i]` on the i-th block of `lengths[i]` entries along `dim`, as torch.cat."""

    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise AssertionError(f"constraints.cat: {len(self.lengths)} lengths for "
                             f"{len(self.cseq)} constraints")
        self.dim = dim

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    event_dim = property(lambda self: max(c.event_dim for c in self.cseq))

    def check(self, value):
        bounds = np.cumsum([0] + self.lengths)
        return np.concatenate([np.asarray(c.check(np.take(value, range(a, b), self.dim)))
                               for c, a, b in zip(self.cseq, bounds[:-1], bounds[1:])],
                              self.dim)


class _Stack(Constraint):
    """`cseq[i]` on the i-th slice along `dim`, as torch.stack."""

    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    is_discrete = property(lambda self: any(c.is_discrete for c in self.cseq))
    @property
    def event_dim(self):
        dim = max(c.event_dim for c in self.cseq)
        return dim + 1 if self.dim + dim < 0 else dim

    def check(self, value):
        """Like PyTorch's, checks as many slices as both value and cseq have."""
        n = min(value.shape[self.dim], len(self.cseq))
        return np.stack([np.asarray(c.check(np.take(value, i, self.dim)))
                         for i, c in zip(range(n), self.cseq)], self.dim)


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
multinomial = _Multinomial
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
positive_semidefinite = _PositiveSemidefinite()
corr_cholesky = _CorrCholesky()
square = _Square()
symmetric = _Symmetric()
cat = _Cat
stack = _Stack
