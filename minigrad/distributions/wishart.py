"""`Wishart` (PyTorch's `torch.distributions.Wishart`): the distribution of X^T X for df rows
X_i ~ N(0, Sigma), over positive definite (p, p) matrices, given `df` > p - 1 and one of
Sigma's covariance matrix, precision matrix or lower Cholesky factor L. Samples by Bartlett's
decomposition, L A A^T L^T with A lower triangular (sqrt of chi-square draws on the diagonal,
standard normals below), reparameterised; an exponential family (entropy and KL through the
log-normaliser)."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minigrad import (arange, cholesky_inverse, cholesky_solve, digamma, einsum, finfo,
                      linalg, mvlgamma, randn, tensor, where)

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property, vec_to_tril_matrix

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma: sum_i digamma(x - i / 2), i = 0..p-1, for x > (p - 1) / 2."""
    if not bool(((x > (p - 1) / 2).all()).item()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    return digamma(x.unsqueeze(-1) - arange(p, dtype=x.dtype) / 2).sum(-1)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma) with exactly one of covariance_matrix, precision_matrix, scale_tril
    (..., p, p); batch shape broadcast from df's and the matrix's."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            # PyTorch asserts this, so its exception type is AssertionError
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.ndim < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = tuple(param.shape[:-2])
            self.df = tensor(float(df), dtype=param.dtype)
        else:
            batch_shape = tuple(np.broadcast_shapes(tuple(param.shape[:-2]), tuple(df.shape)))
            self.df = df.expand(batch_shape)
        event_shape = tuple(param.shape[-2:])
        p = event_shape[-1]
        if bool((self.df <= p - 1).any().item()):
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = {p - 1}.")
        name = "scale_tril" if scale_tril is not None else "covariance_matrix" \
            if covariance_matrix is not None else "precision_matrix"
        setattr(self, name, param.expand(batch_shape + event_shape))
        if bool((self.df < p).any().item()):
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args)
        self._unbroadcasted_scale_tril = (
            scale_tril if scale_tril is not None else linalg.cholesky(covariance_matrix)
            if covariance_matrix is not None else _precision_to_scale_tril(precision_matrix))
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape):
        """The diagonal of Bartlett's A squared: chi-square of df, df - 1, ..., df - p + 1."""
        p = self._event_shape[-1]
        steps = arange(p, dtype=self._unbroadcasted_scale_tril.dtype)
        return Chi2(df=(self.df.unsqueeze(-1) - steps).expand(tuple(batch_shape) + (p,)))

    def expand(self, batch_shape, _instance=None):
        new = _instance if _instance is not None else object.__new__(type(self))
        batch_shape = tuple(batch_shape)
        cov_shape = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        self._expanded(new, batch_shape)
        new._dist_chi2 = new._chi2(batch_shape)
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    def _df_matrix(self, df):
        return df.reshape(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        """(df - p - 1) Sigma, NaN where df <= p + 1."""
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        return self._df_matrix(where(factor <= 0, math.nan, factor)) * self.covariance_matrix

    @property
    def variance(self):
        v = self.covariance_matrix
        diag = v.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (v.pow(2) + einsum("...i,...j->...ij", diag, diag))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        eps = float(finfo(self._unbroadcasted_scale_tril.dtype).eps)
        diagonal = self._dist_chi2.rsample(sample_shape).sqrt().clamp(min=eps).diag_embed()
        below = randn(*(tuple(sample_shape) + self._batch_shape + (p * (p - 1) // 2,)),
                      dtype=diagonal.dtype)
        chol = self._unbroadcasted_scale_tril @ (diagonal + vec_to_tril_matrix(below, -1))
        return chol @ chol.mT

    def rsample(self, sample_shape=(), max_try_correction=None):
        """Bartlett draws; a draw that is not numerically positive definite (df close to
        p - 1) is drawn again, up to `max_try_correction` (10) times, with a warning."""
        max_try_correction = 10 if max_try_correction is None else max_try_correction
        sample_shape = tuple(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        singular = ~np.asarray(self.support.check(sample.detach().numpy()))
        if singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                mask = tensor(singular.reshape(singular.shape + (1, 1)))
                sample = where(mask, self._bartlett_sampling(sample_shape), sample)
                singular = ~np.asarray(self.support.check(sample.detach().numpy()))
                if not singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_l) - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_l) + mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (self.df - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return (y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p) + \
            mvlgamma(y + (p + 1) / 2, p=p)
