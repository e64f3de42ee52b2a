"""`LowRankMultivariateNormal` (PyTorch's): the Gaussian over D-vectors whose covariance is
W W^T + diag(d) for a D x m `cov_factor` W (m small) and a positive `cov_diag` d. Densities
cost O(D m^2) instead of O(D^3): the Woodbury identity and the matrix determinant lemma go
through the m x m "capacitance" matrix C = I + W^T D^-1 W and its Cholesky factor."""
from __future__ import annotations

import math

import numpy as np

from minigrad import diag_embed, eye, linalg, randn

from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis
from .utils import lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _batch_mv(matrix, vector):
    """(..., n, m) times (..., m) -> (..., n), broadcasting the batch dims."""
    return (matrix @ vector.unsqueeze(-1)).squeeze(-1)


def _capacitance_tril(w, d):
    """The Cholesky factor of C = I + W^T D^-1 W: (..., m, m)."""
    k = (w.mT / d.unsqueeze(-2)) @ w
    return linalg.cholesky(k + eye(w.shape[-1], dtype=w.dtype))


def _lowrank_logdet(w, d, capacitance_tril):
    """log det(W W^T + D) = log det C + log det D (the matrix determinant lemma)."""
    return 2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + d.log().sum(-1)


def _lowrank_mahalanobis(w, d, x, capacitance_tril):
    """x^T (W W^T + D)^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2 (Woodbury)."""
    wt_dinv_x = _batch_mv(w.mT / d.unsqueeze(-2), x)
    return (x.pow(2) / d).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """N(loc, W W^T + diag(d)): loc (B..., D), cov_factor (B..., D, m), cov_diag (B..., D),
    their batch dims broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.ndim < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = tuple(loc.shape[-1:])
        if cov_factor.ndim < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if tuple(cov_factor.shape[-2:-1]) != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if tuple(cov_diag.shape[-1:]) != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            shape = np.broadcast_shapes(tuple(loc.shape) + (1,), tuple(cov_factor.shape),
                                        tuple(cov_diag.shape) + (1,))
        except ValueError:
            raise ValueError(f"Incompatible batch shapes: loc {tuple(loc.shape)}, cov_factor "
                             f"{tuple(cov_factor.shape)}, cov_diag "
                             f"{tuple(cov_diag.shape)}") from None
        self.cov_factor = cov_factor.expand(shape)
        self.loc = loc.expand(shape[:-1])
        self.cov_diag = cov_diag.expand(shape[:-1])
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)
        super().__init__(shape[:-2], event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        batch_shape = tuple(batch_shape)
        loc_shape = batch_shape + self._event_shape
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                     "_capacitance_tril"):
            setattr(new, name, getattr(self, name))
        return self._expanded(new, batch_shape)

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return (self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag
                ).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def scale_tril(self):
        """sqrt(D) chol(I + D^-1/2 W W^T D^-1/2): the Cholesky factor of the covariance."""
        n = self._event_shape[0]
        root_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / root_d
        k = scaled @ scaled.mT + eye(n, dtype=scaled.dtype)
        return (root_d * linalg.cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        return (w @ w.mT + diag_embed(self._unbroadcasted_cov_diag)).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        """D^-1 - A^T A for A = L_C^-1 W^T D^-1 (Woodbury)."""
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return (diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a).expand(
            self._matrix_shape())

    def rsample(self, sample_shape=()):
        """loc + W eps_W + sqrt(d) eps_D, eps_W (..., m) and eps_D (..., D) standard normal."""
        shape = self._extended_shape(sample_shape)
        eps_w = randn(*(shape[:-1] + tuple(self.cov_factor.shape[-1:])), dtype=self.loc.dtype)
        eps_d = randn(*shape, dtype=self.loc.dtype)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _logdet(self):
        return _lowrank_logdet(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                               self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _lowrank_mahalanobis(self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag,
                                 value - self.loc, self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._logdet() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._logdet())
        return h if not self._batch_shape else h.expand(self._batch_shape)
