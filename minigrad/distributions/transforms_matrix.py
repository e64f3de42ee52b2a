"""Transforms onto matrices (PyTorch's): `LowerCholeskyTransform` (a square matrix's strict
lower triangle kept and its diagonal exponentiated), `PositiveDefiniteTransform` (that factor
times its transpose), and `CorrCholeskyTransform` (D (D - 1) / 2 reals to the Cholesky factor
of a D x D correlation matrix, bijective, with its log |det J|)."""
from __future__ import annotations

import math

from minigrad import eye, finfo, linalg
from minigrad.nn.functional import pad, softplus

from . import constraints
from .transform_base import Transform
from .utils import tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CorrCholeskyTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform"]


def _tril_with_diagonal(x, fn):
    """x's strict lower triangle plus fn of its diagonal on the diagonal: (..., D, D)."""
    return x.tril(-1) + fn(x.diagonal(dim1=-2, dim2=-1)).diag_embed()


class LowerCholeskyTransform(Transform):
    """(..., D, D) -> (..., D, D): tril(x, -1) + diag(exp(diag x)); not bijective (the upper
    triangle is dropped)."""
    domain, codomain = constraints.independent(constraints.real, 2), constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        return _tril_with_diagonal(x, lambda d: d.exp())

    def _inverse(self, y):
        return _tril_with_diagonal(y, lambda d: d.log())


class PositiveDefiniteTransform(Transform):
    """(..., D, D) -> (..., D, D): L L^T for L the LowerCholeskyTransform of x."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        factor = LowerCholeskyTransform()(x)
        return factor @ factor.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """(..., D (D - 1) / 2) -> (..., D, D): tanh(x), in row order below the diagonal, are the
    partial correlations; each row is scaled by a signed stick-breaking so that it has unit
    length, and the diagonal takes what is left (positive)."""
    domain, codomain, bijective = constraints.real_vector, constraints.corr_cholesky, True

    def __eq__(self, other):
        return isinstance(other, CorrCholeskyTransform)

    __hash__ = object.__hash__

    def _call(self, x):
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.tanh().clamp(min=-1 + eps, max=1 - eps), diag=-1)
        left = (1 - r ** 2).sqrt().cumprod(-1)  # the stick left after each entry
        r = r + eye(r.shape[-1], dtype=r.dtype)
        return r * pad(left[..., :-1], (1, 0), value=1)

    def _inverse(self, y):
        left = pad((1 - (y * y).cumsum(-1))[..., :-1], (1, 0), value=1)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(left, diag=-1).sqrt()
        return (t.log1p() - (-t).log1p()) / 2

    def log_abs_det_jacobian(self, x, y):
        """The stick-breaking's 0.5 sum log(1 - cumsum(y^2)) below the subdiagonal, plus
        tanh's log(1 - tanh(x)^2) in the form that stays finite for large |x|."""
        left = tril_matrix_to_vec(1 - (y * y).cumsum(-1), diag=-2)
        tanh_part = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return 0.5 * left.log().sum(-1) + tanh_part

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return tuple(shape[:-1]) + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return tuple(shape[:-2]) + (d * (d - 1) // 2,)
