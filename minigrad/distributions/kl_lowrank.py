"""`kl_divergence` pairs of LowRankMultivariateNormal with itself and with
MultivariateNormal (PyTorch's): log-determinants by the matrix determinant lemma, the trace
term tr(Sigma_q^-1 Sigma_p) expanded through Woodbury so that no D x D inverse is formed.
Importing registers them, as kl.py's own."""
from __future__ import annotations

import numpy as np

from minigrad import diag_embed, linalg

from .kl import register_kl
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _lowrank_logdet,
                                          _lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis

__all__ = []


def _trace_xxt(x):
    """tr(X X^T) over the last two dims: the sum of squares."""
    return x.pow(2).sum((-2, -1))


def _check_event_shapes(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with different event shapes "
                         f"cannot be computed")


def _logdet(d):
    return _lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                           d._capacitance_tril)


def _woodbury_a(q):
    """A = L_C^-1 W^T D^-1 of q, so that Sigma_q^-1 = D^-1 - A^T A."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _mahalanobis_q(p, q):
    return _lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                q.loc - p.loc, q._capacitance_tril)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    a = _woodbury_a(q)
    p_w, p_d, q_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag, \
        q._unbroadcasted_cov_diag
    trace = ((p_d / q_d).sum(-1) + _trace_xxt(p_w * q_d.rsqrt().unsqueeze(-1))
             - _trace_xxt(a * p_d.sqrt().unsqueeze(-2)) - _trace_xxt(a @ p_w))
    return 0.5 * (_logdet(q) - _logdet(p) + trace + _mahalanobis_q(p, q) - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_normal_lowrank(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    p_tril = p._unbroadcasted_scale_tril
    a = _woodbury_a(q)
    log_det_p = 2 * p_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    trace = (_trace_xxt(p_tril * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
             - _trace_xxt(a @ p_tril))
    return 0.5 * (_logdet(q) - log_det_p + trace + _mahalanobis_q(p, q) - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_normal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    q_tril = q._unbroadcasted_scale_tril
    log_det_q = 2 * q_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
    batch = np.broadcast_shapes(tuple(q_tril.shape[:-2]),
                                tuple(p._unbroadcasted_cov_factor.shape[:-2]))
    n = p.event_shape[0]
    q_tril = q_tril.expand(batch + (n, n))
    p_w = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.shape[-1]))
    p_d = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    trace = (_trace_xxt(linalg.solve_triangular(q_tril, p_w, upper=False))
             + _trace_xxt(linalg.solve_triangular(q_tril, p_d, upper=False)))
    return 0.5 * (log_det_q - _logdet(p) + trace + _batch_mahalanobis(q_tril, q.loc - p.loc)
                  - n)
