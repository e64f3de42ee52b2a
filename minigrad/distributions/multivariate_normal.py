"""`MultivariateNormal`: the Gaussian over vectors of D elements (PyTorch's
`torch.distributions.MultivariateNormal`), given its mean `loc` (B..., D) and one of the
covariance matrix, the precision matrix or the lower Cholesky factor L of the covariance
(B..., D, D). Everything is computed from L: samples loc + L eps, log-densities through a
triangular solve, log det from L's diagonal."""
from __future__ import annotations

import math

import numpy as np

from minigrad import cholesky_inverse, eye, flip, linalg, randn

from . import constraints
from .distribution import Distribution
from .utils import lazy_property

__all__ = ["MultivariateNormal"]


def _precision_to_scale_tril(precision):
    """L with L L^T = P^-1: the Cholesky factor of the flipped P, flipped and transposed, is
    the inverse of L; one triangular solve inverts it."""
    lf = linalg.cholesky(flip(precision, (-2, -1)))
    l_inv = flip(lf, (-2, -1)).transpose(-2, -1)
    identity = eye(precision.shape[-1], dtype=precision.dtype)
    return linalg.solve_triangular(l_inv, identity, upper=False)


def _batch_mahalanobis(scale_tril, diff):
    """|L^-1 diff|^2 for diff (S..., B..., D): a triangular solve against L broadcast."""
    shape = np.broadcast_shapes(tuple(scale_tril.shape[:-2]), tuple(diff.shape[:-1]))
    tril = scale_tril.expand(shape + tuple(scale_tril.shape[-2:]))
    solved = linalg.solve_triangular(tril, diff.expand(shape + diff.shape[-1:]).unsqueeze(-1),
                                     upper=False)
    return solved.squeeze(-1).pow(2).sum(-1)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) with exactly one of `covariance_matrix`, `precision_matrix`,
    `scale_tril`; batch shape broadcast from loc's (B...) and the matrix's."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril),
                                           ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given
        if matrix.ndim < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name  # PyTorch's words
            raise ValueError(f"{label} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch_shape = tuple(np.broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1])))
        setattr(self, name, matrix.expand(batch_shape + tuple(matrix.shape[-2:])))
        self.loc = loc.expand(batch_shape + tuple(loc.shape[-1:]))
        super().__init__(batch_shape, tuple(self.loc.shape[-1:]), validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        """loc + L eps for standard normal eps (S..., B..., D): differentiable in loc and L."""
        eps = randn(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.loc + (self._unbroadcasted_scale_tril @ eps.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        """-(D log(2 pi) + |L^-1 (value - loc)|^2) / 2 - sum log diag(L)."""
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m) - half_log_det

    def entropy(self):
        """D (1 + log(2 pi)) / 2 + sum log diag(L), per element of the batch."""
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        return h if not self._batch_shape else h.expand(self._batch_shape)
