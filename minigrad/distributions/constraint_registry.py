"""`biject_to` and `transform_to` (PyTorch's `torch.distributions.constraint_registry`): the
transform from unconstrained reals onto a constraint's region, looked up by the constraint's
class, so that an optimiser can work on x while a model uses `transform_to(c)(x)` (variational
parameters, a scale, a simplex, a correlation factor). `biject_to(c)` is a bijection (for HMC
and densities); `transform_to(c)` need only reach the region (softmax for a simplex, lower
Cholesky factors, positive definite matrices). `register` adds a constraint class."""
from __future__ import annotations

import numbers

from . import constraints
from .transform_base import ComposeTransform, identity_transform
from .transforms import AffineTransform, ExpTransform, SigmoidTransform
from .transforms_matrix import (CorrCholeskyTransform, LowerCholeskyTransform,
                                PositiveDefiniteTransform)
from .transforms_simplex import SoftmaxTransform, StickBreakingTransform
from .transforms_structured import CatTransform, IndependentTransform, StackTransform

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """A table from Constraint subclasses to factories `fn(constraint) -> Transform`."""

    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        """`register(C, fn)` or `@register(C)` over fn; C a Constraint subclass or an instance
        of one (its class is registered)."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not (isinstance(constraint, type) and issubclass(constraint, constraints.Constraint)):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      f"constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _both(constraint):
    """Register one factory in both tables."""
    def register(factory):
        return transform_to.register(constraint, biject_to.register(constraint, factory))
    return register


@_both(constraints.real)
def _to_real(constraint):
    return identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return IndependentTransform(biject_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return IndependentTransform(transform_to(constraint.base_constraint),
                                constraint.reinterpreted_batch_ndims)


# positive and nonnegative are instances of these classes, so they take this factory as in
# PyTorch: exp, then a shift by the bound
@_both(constraints.greater_than)
@_both(constraints.greater_than_eq)
def _to_greater_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.lower_bound, 1)])


@_both(constraints.less_than)
def _to_less_than(constraint):
    return ComposeTransform([ExpTransform(), AffineTransform(constraint.upper_bound, -1)])


@_both(constraints.interval)
@_both(constraints.half_open_interval)
def _to_interval(constraint):
    low, high = constraint.lower_bound, constraint.upper_bound
    if (isinstance(low, numbers.Number) and low == 0 and isinstance(high, numbers.Number)
            and high == 1):
        return SigmoidTransform()
    return ComposeTransform([SigmoidTransform(), AffineTransform(low, high - low)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):
    return LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint):
    return PositiveDefiniteTransform()


@_both(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                        constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
