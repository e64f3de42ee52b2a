"""LowRankMultivariateNormal (and its KL pairs), VonMises, FisherSnedecor, GeneralizedPareto,
OneHotCategoricalStraightThrough, CumulativeDistributionTransform and LKJCholesky against
torch.distributions: values, dtypes and gradients in float32 and float64, rsample given
PyTorch's noise, shapes, expand, errors; float64 gradient checks; LKJCholesky's samples have
the LKJ marginals (PyTorch's do not, see compat_notes.py)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import distributions as D
from minigrad.autograd import gradcheck

from test_distributions import _compare

rng = np.random.default_rng(37)
LOC = rng.standard_normal((2, 4))
W = rng.standard_normal((2, 4, 2))
DIAG = rng.uniform(0.5, 2.0, (4,))
X = rng.standard_normal((3, 2, 4))
A, B = rng.uniform(0.5, 6.0, (2, 3)), rng.standard_normal((2, 3))
Q = rng.uniform(0.05, 0.95, (4, 2, 3))


def _lowrank(lib, loc, w, d, x):
    D = lib.distributions
    p = D.LowRankMultivariateNormal(loc, w, d)
    q = D.LowRankMultivariateNormal(loc[0] * 0.5, w[1] * 0.7, d.flip(0) + 0.1)
    cov = w[0] @ w[0].mT + lib.eye(4, dtype=w.dtype)
    mvn = D.MultivariateNormal(loc[1], cov)
    out = [p.log_prob(x), p.entropy(), p.mean, p.mode, p.variance, p.stddev, p.scale_tril,
           p.covariance_matrix, p.precision_matrix, q.log_prob(x), q.entropy()]
    out += [D.kl_divergence(p, q), D.kl_divergence(q, p), D.kl_divergence(p, mvn),
            D.kl_divergence(mvn, p), D.kl_divergence(q, mvn)]
    return out


def _angular_and_f(lib, a, b, q):
    D = lib.distributions
    vm = D.VonMises(b, a)
    vm_small = D.VonMises(b, a * 0.1)  # concentrations below 3.75: the other polynomial
    angles = (q - 0.5) * 6
    fs = D.FisherSnedecor(a, a.flip(0) + 0.3)
    y = q * 4 + 0.05
    out = [vm.log_prob(angles), vm.variance, vm.mean, vm.mode, vm_small.log_prob(angles),
           vm_small.variance, fs.log_prob(y), fs.mean, fs.mode, fs.variance,
           D.FisherSnedecor(a + 4.5, a + 4.5).variance]
    cdt = D.transforms.CumulativeDistributionTransform(D.Normal(b, a))
    out += [cdt(b + q), cdt.inv(cdt(b + q)), cdt.log_abs_det_jacobian(b + q, cdt(b + q))]
    return out


def _generalized_pareto(lib, a, b, q):
    D = lib.distributions
    conc = lib.tensor([[0.3, -0.2, 0.0], [0.6, -0.6, 0.05]], dtype=a.dtype) + b * 0
    gp = D.GeneralizedPareto(b, a, conc)
    x = gp.icdf(q)
    return [x, gp.log_prob(x.detach()), gp.cdf(x.detach()), gp.log_cdf(x.detach()),
            gp.log_survival_function(x.detach()), gp.entropy(), gp.mean, gp.variance, gp.mode,
            D.GeneralizedPareto(b, a, b * 0.1 - 0.2).mean]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lowrank_matches_torch(torch, dtype):
    _compare(torch, _lowrank, [LOC, W, DIAG, X], dtype,
             grad_tol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_von_mises_fisher_snedecor_cdf_transform_match_torch(torch, dtype):
    _compare(torch, _angular_and_f, [A, B, Q], dtype, grad_tol=1e-9 if dtype == "float64"
             else 1e-4)


def test_generalized_pareto_matches_torch(torch):
    # float32 only: PyTorch's GeneralizedPareto compares a float64 concentration with a
    # float32 zero (torch.isclose raises); minigrad's works in float64 too (gradcheck below)
    _compare(torch, _generalized_pareto, [A, B, Q], "float32")


def test_rsample_given_torch_noise(torch, monkeypatch):
    noise = {"normal": [rng.standard_normal((5, 2, 2)), rng.standard_normal((5, 2, 4))],
             "uniform": rng.uniform(0.02, 0.98, (5, 2, 3))}

    def program(lib, loc, w, d, a, b):
        normals = iter(noise["normal"])
        if lib is mg:
            import minigrad.distributions.generalized_pareto as gp
            import minigrad.distributions.lowrank_multivariate_normal as lr
            monkeypatch.setattr(lr, "randn", lambda *s, dtype=None: mg.tensor(next(normals),
                                                                              dtype=dtype))
            monkeypatch.setattr(gp, "rand", lambda *s, dtype=None: mg.tensor(noise["uniform"],
                                                                             dtype=dtype))
        else:
            import torch.distributions.lowrank_multivariate_normal as lr
            monkeypatch.setattr(lr, "_standard_normal", lambda shape, dtype, device: lib.tensor(
                next(normals), dtype=dtype))
            monkeypatch.setattr(lib, "rand", lambda shape, dtype=None, device=None: lib.tensor(
                noise["uniform"], dtype=dtype))
        D = lib.distributions
        return [D.LowRankMultivariateNormal(loc, w, d).rsample((5,)),
                D.GeneralizedPareto(b, a, b * 0.2 + 0.05).rsample((5,))]
    _compare(torch, program, [LOC, W, DIAG, A, B], "float32", grad_tol=1e-4)


def test_straight_through_gradient_is_the_probabilities(torch):
    grads = []
    for lib in (torch, mg):
        logits = lib.tensor(B, requires_grad=True)
        d = lib.distributions.OneHotCategoricalStraightThrough(logits=logits)
        s = d.rsample((4,))
        assert tuple(s.shape) == (4, 2, 3) and d.has_rsample
        assert set(np.unique(s.detach().numpy())) <= {0.0, 1.0}
        (s * lib.tensor(Q)).sum().backward()  # d/dlogits of sum Q * probs, whatever the draw
        grads.append(logits.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)


def test_shapes_expand_and_errors(torch):
    def make(lib):
        D = lib.distributions

        def t(v):  # float32: PyTorch's GeneralizedPareto.log_prob fails in float64
            return lib.tensor(np.asarray(v, np.float32))
        return [D.LowRankMultivariateNormal(t(LOC), t(W), t(DIAG)),
                D.LowRankMultivariateNormal(t(LOC[0]), t(W), t(DIAG)),
                D.VonMises(t(B), t(A)), D.VonMises(0.0, 2.0), D.FisherSnedecor(t(A), 3.0),
                D.FisherSnedecor(2.0, 3.0), D.GeneralizedPareto(t(B), t(A), 0.1),
                D.GeneralizedPareto(0.0, 1.0, -0.2),
                D.OneHotCategoricalStraightThrough(logits=t(B))]

    for dm, dt in zip(make(mg), make(torch)):
        name = type(dt).__name__
        assert tuple(dm.batch_shape) == tuple(dt.batch_shape), name
        assert tuple(dm.event_shape) == tuple(dt.event_shape), name
        assert dm.has_rsample == dt.has_rsample, name
        for shape in ((), (3,), (2, 1)):
            assert tuple(dm.sample(shape).shape) == tuple(dt.sample(shape).shape), name
        big = (4,) + tuple(dt.batch_shape)
        em, et = dm.expand(big), dt.expand(big)
        assert type(em) is type(dm) and tuple(em.batch_shape) == tuple(et.batch_shape), name
        if name != "GeneralizedPareto" or dt.concentration.min() >= 0:
            x = et.sample()
            np.testing.assert_allclose(em.log_prob(mg.tensor(x.numpy())).numpy(),
                                       et.log_prob(x).numpy(), rtol=1e-4, atol=1e-5, err_msg=name)
    for lib in (torch, mg):
        D, t = lib.distributions, lib.tensor
        with pytest.raises(ValueError, match="loc must be at least one-dimensional"):
            D.LowRankMultivariateNormal(t(0.0), t(W[0]), t(DIAG))
        with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
            D.LowRankMultivariateNormal(t(LOC), t(W[..., :3, :]), t(DIAG))
        with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
            D.LowRankMultivariateNormal(t(LOC), t(W), t(DIAG[:3]))
        with pytest.raises(ValueError, match="Incompatible batch shapes"):
            D.LowRankMultivariateNormal(t(X[:, 0]), t(W), t(DIAG))
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            # one large negative entry keeps the capacitance factorisable (PyTorch factors it
            # before it checks the arguments)
            D.LowRankMultivariateNormal(t(LOC), t(W), t(np.array([1.0, 1, 1, -100])),
                                        validate_args=True)
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            D.VonMises(0.0, -1.0, validate_args=True)
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            D.FisherSnedecor(0.0, 1.0, validate_args=True)
        with pytest.raises(ValueError, match="within the support"):
            D.GeneralizedPareto(0.0, 1.0, -0.5, validate_args=True).log_prob(t([2.5]))


def test_von_mises_samples_have_its_circular_moments():
    mg.manual_seed(0)
    d = D.VonMises(mg.tensor([0.5, -2.0, 3.0]), mg.tensor([2.0, 0.3, 20.0]))
    z = np.exp(1j * d.sample((20000,)).numpy()).mean(0)
    np.testing.assert_allclose(np.angle(z)[[0, 2]], [0.5, 3.0], atol=0.03)
    np.testing.assert_allclose(1 - np.abs(z), d.variance.numpy(), atol=0.02)
    assert d.sample().dtype == mg.float32 and (np.abs(d.sample((100,)).numpy()) <= np.pi).all()


def test_gradchecks():
    loc, w = mg.tensor(LOC, requires_grad=True), mg.tensor(W, requires_grad=True)
    d = mg.tensor(DIAG, requires_grad=True)
    a, b = mg.tensor(A, requires_grad=True), mg.tensor(B, requires_grad=True)
    x, q = mg.tensor(X), mg.tensor(Q)

    def lowrank(loc, w, d):
        p = D.LowRankMultivariateNormal(loc, w, d)
        r = D.LowRankMultivariateNormal(loc[0] * 0.5, w[1] * 0.7, d + 0.1)
        mvn = D.MultivariateNormal(loc[1], scale_tril=mg.diag(d + 1.0))
        mg.manual_seed(1)
        outs = [p.log_prob(x), p.entropy(), p.precision_matrix, p.scale_tril,
                D.kl_divergence(p, r), D.kl_divergence(p, mvn), D.kl_divergence(mvn, p),
                p.rsample((2,))]
        return sum((o * (i + 1)).sum() for i, o in enumerate(outs))

    # points in the support, fixed while gradcheck moves the parameters
    inside = D.GeneralizedPareto(b, a, b * 0.1 + 0.1).icdf(q).detach()

    def scalar(a, b):
        gp = D.GeneralizedPareto(b, a, b * 0.1 + 0.1)
        mg.manual_seed(2)
        outs = [D.VonMises(b, a).log_prob(q * 6 - 3), D.VonMises(b, a).variance,
                D.FisherSnedecor(a, a + 1).log_prob(q + 0.1),
                gp.log_prob(inside), gp.cdf(inside), gp.icdf(q),
                gp.rsample((2,))]
        return sum((o * (i + 1)).sum() for i, o in enumerate(outs))

    assert gradcheck(lowrank, [loc, w, d])
    assert gradcheck(scalar, [a, b])


def _lkj(lib, conc, x):
    D = lib.distributions
    value = D.CorrCholeskyTransform()(x)                      # (5, 4, 4)
    d = D.LKJCholesky(4, conc)                                # batch (3,)
    return [d.log_prob(value[:, None]), D.LKJCholesky(4, 0.5).log_prob(value),
            D.LKJCholesky(2, conc[:, None]).log_prob(value[:2, :2, :2] * 0 + D.
                                                    CorrCholeskyTransform()(x[:2, :1]))]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lkj_log_prob_matches_torch(torch, dtype):
    _compare(torch, _lkj, [np.array([0.5, 1.0, 3.0]), rng.standard_normal((5, 6))], dtype,
             grad_tol=1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 2.0), (5, 0.8)])
def test_lkj_samples_have_the_lkj_marginals(dim, eta):
    # every correlation of LKJ(eta) in dim dims is 2 Beta(b, b) - 1, b = eta - 1 + dim / 2
    mg.manual_seed(1)
    d = D.LKJCholesky(dim, eta)
    x = d.sample((20000,)).numpy()
    assert d.support.check(x).all() and x.shape == (20000, dim, dim)
    rows, cols = np.tril_indices(dim, -1)
    corr = (x @ np.swapaxes(x, -1, -2))[:, rows, cols]
    np.testing.assert_allclose(corr.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(corr.var(0), 1 / (2 * (eta - 1 + dim / 2) + 1), rtol=0.05)


def test_lkj_errors_shapes_and_gradcheck(torch):
    for lib in (torch, mg):
        with pytest.raises(ValueError, match="greater than or equal to 2"):
            lib.distributions.LKJCholesky(1)
        with pytest.raises(ValueError, match="to satisfy the constraint"):
            lib.distributions.LKJCholesky(3, -1.0, validate_args=True)
        with pytest.raises(ValueError, match="within the support"):
            lib.distributions.LKJCholesky(2, validate_args=True).log_prob(lib.eye(2) * 2)
    d = D.LKJCholesky(3, mg.tensor([1.0, 2.0]))
    assert d.batch_shape == (2,) and d.event_shape == (3, 3)
    assert d.expand((4, 2)).sample().shape == (4, 2, 3, 3)
    conc = mg.tensor([0.7, 2.5], dtype=mg.float64, requires_grad=True)
    x = mg.tensor(rng.standard_normal((4, 1, 3)), requires_grad=True)
    assert gradcheck(lambda c, x: D.LKJCholesky(3, c).log_prob(
        D.CorrCholeskyTransform()(x)).sum(), [conc, x])
