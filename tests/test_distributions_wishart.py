"""Wishart against torch.distributions: log_prob, entropy, moments, the three
parameterisations, the Bregman KL (values, dtypes and gradients in float32 and float64);
rsample's value and gradient given PyTorch's noise; shapes, expand, errors and warnings; the
sample mean; float64 gradient checks."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import distributions as D
from minigrad.autograd import gradcheck

from test_distributions import _compare

rng = np.random.default_rng(41)
A = rng.standard_normal((2, 3, 3))
DF = np.array([4.5, 7.0])
V = rng.standard_normal((4, 3, 3))


def _spd(lib, a):
    return a @ a.mT + lib.eye(3, dtype=a.dtype)


def _wishart(lib, a, df, v):
    D = lib.distributions
    cov = _spd(lib, a)
    value = _spd(lib, v)[:, None] * 0.5                              # (4, 1, 3, 3)
    out = []
    for w in (D.Wishart(df, covariance_matrix=cov), D.Wishart(df, precision_matrix=cov),
              D.Wishart(df, scale_tril=lib.linalg.cholesky(cov))):
        out += [w.log_prob(value), w.entropy(), w.mean, w.variance, w.covariance_matrix,
                w.precision_matrix, w.scale_tril]
    out += [D.Wishart(df + 2.0, covariance_matrix=cov).mode,
            D.Wishart(5.0, covariance_matrix=cov[0]).log_prob(value)]
    p, q = D.Wishart(df, covariance_matrix=cov), D.Wishart(df.flip(0) + 1, scale_tril=lib.linalg.
                                                             cholesky(cov.flip(0)))
    out += [D.kl_divergence(p, q), D.ExponentialFamily.entropy(p)]
    return out


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch(torch, dtype):
    _compare(torch, _wishart, [A, DF, V], dtype,
             grad_tol=2e-4 if dtype == "float32" else 1e-9)


def test_rsample_given_torch_noise(torch, monkeypatch):
    # one draw (sample_shape ()): PyTorch's rsample takes every valid draw for a singular one
    # (its check lacks a negation), warns, draws again (the same noise here) and writes it in
    # place, which breaks its backward for a non-empty sample_shape (compat_notes.py)
    normals = rng.standard_normal((2, 3))
    gammas = rng.gamma(3.0, size=(2, 3))

    def program(lib, a, df):
        if lib is mg:
            import minigrad.distributions.wishart as wi
            monkeypatch.setattr(wi, "randn", lambda *s, dtype=None: mg.tensor(normals,
                                                                              dtype=dtype))
        else:
            import torch.distributions.wishart as wi
            monkeypatch.setattr(lib, "randn", lambda *s, dtype=None, device=None: lib.tensor(
                normals, dtype=dtype))
        w = lib.distributions.Wishart(df, covariance_matrix=_spd(lib, a))
        # the chi-square draws are Gamma draws, whose streams differ: give both the same ones
        monkeypatch.setattr(w._dist_chi2, "rsample", lambda shape=(): lib.tensor(
            gammas, dtype=a.dtype) * w._dist_chi2.df / 3.0)
        return [w.rsample()]
    with pytest.warns(UserWarning):  # PyTorch's "Singular sample detected."
        _compare(torch, program, [A, DF], "float64")


def test_shapes_expand_errors_and_sample_mean(torch):
    cov = _spd(mg, mg.tensor(A))
    w = D.Wishart(mg.tensor(DF), covariance_matrix=cov)
    assert w.batch_shape == (2,) and w.event_shape == (3, 3) and w.has_rsample
    assert w.sample((4, 1)).shape == (4, 1, 2, 3, 3) and w.rsample().shape == (2, 3, 3)
    big = w.expand((5, 2))
    assert big.batch_shape == (5, 2) and big.sample().shape == (5, 2, 3, 3)
    np.testing.assert_allclose(big.log_prob(w.mean).numpy()[0], w.log_prob(w.mean).numpy(),
                               rtol=1e-5)
    assert D.Wishart(4.0, scale_tril=mg.eye(3)).batch_shape == ()
    mg.manual_seed(0)
    draws = D.Wishart(mg.tensor(6.0), covariance_matrix=cov[0]).sample((20000,)).numpy()
    np.testing.assert_allclose(draws.mean(0), 6.0 * cov[0].numpy(), rtol=0.05, atol=0.1)
    assert D.constraints.positive_definite.check(draws).all()
    for lib in (torch, mg):
        eye = lib.eye(3)
        with pytest.raises(AssertionError, match="Exactly one of"):
            lib.distributions.Wishart(4.0, covariance_matrix=eye, scale_tril=eye)
        with pytest.raises(ValueError, match="expected to be greater than ndim - 1 = 2"):
            lib.distributions.Wishart(1.5, covariance_matrix=eye)
        with pytest.raises(ValueError, match="at least two-dimensional"):
            lib.distributions.Wishart(4.0, scale_tril=lib.ones(3))
        with pytest.warns(UserWarning, match="Low df values"):
            lib.distributions.Wishart(2.5, covariance_matrix=eye)
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            lib.distributions.Wishart(4.0, covariance_matrix=-eye, validate_args=True)
        with pytest.raises(ValueError, match="within the support"):
            lib.distributions.Wishart(4.0, covariance_matrix=eye, validate_args=True).log_prob(
                -eye)


def test_gradchecks():
    a = mg.tensor(A, requires_grad=True)
    df = mg.tensor(DF, requires_grad=True)
    v = mg.tensor(V)

    fixed = D.Wishart(mg.tensor(DF + 0.5), covariance_matrix=_spd(mg, mg.tensor(A[::-1])))

    def total(a, df):
        cov = _spd(mg, a)
        p = D.Wishart(df, covariance_matrix=cov)
        q = D.Wishart(df + 1.0, precision_matrix=cov.flip(0))
        mg.manual_seed(3)
        # the Bregman KL detaches p's parameters (as PyTorch's): differentiate it in q's
        outs = [p.log_prob(_spd(mg, v)[:, None]), p.entropy(), p.variance,
                D.kl_divergence(fixed, q), D.Wishart(6.0, scale_tril=mg.linalg.cholesky(cov))
                .rsample((2,))]
        return sum((o * (i + 1)).sum() for i, o in enumerate(outs))

    assert gradcheck(total, [a, df])
