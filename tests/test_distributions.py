"""minigrad.distributions against torch.distributions: log_prob, entropy, kl_divergence and
rsample's gradients (values, dtypes, gradients), argument and support errors, shapes; sampling
repeatable under manual_seed and drawn in the right proportions; float64 gradient checks."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.distributions import Bernoulli, Categorical, Normal, Uniform, kl_divergence

rng = np.random.default_rng(11)
PROBS = np.array([[0.2, 0.3, 0.5, 0.0], [0.1, 0.6, 0.2, 0.1], [0.25, 0.25, 0.25, 0.25]])
LOGITS = rng.standard_normal((3, 4)) * 2


def _run(lib, program, arrays, dtype):
    ts = [lib.tensor(a.astype(dtype), requires_grad=True) for a in arrays]
    outs = program(lib, *ts)
    total = sum((o * (i + 1.5)).sum() for i, o in enumerate(outs) if o.requires_grad)
    total.backward()
    return ([(o.detach().numpy(), str(o.dtype).replace("torch.", "")) for o in outs],
            [None if t.grad is None else t.grad.numpy() for t in ts])


def _compare(torch, program, arrays, dtype, grad_tol=None):
    """Values to 1e-5 (float32) or 1e-12 (float64); gradients likewise or to `grad_tol`."""
    (vt, gt), (vm, gm) = (_run(lib, program, arrays, dtype) for lib in (torch, mg))
    tol = 1e-5 if dtype == "float32" else 1e-12
    for (t, dt), (m, dm) in zip(vt, vm):
        assert dm == dt and m.shape == t.shape
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)
    for t, m in zip(gt, gm):
        assert (t is None) == (m is None)
        if t is not None:
            np.testing.assert_allclose(m, t, rtol=grad_tol or tol, atol=grad_tol or tol)


def _categorical(lib, p, logits):
    D = lib.distributions
    by_p, by_l = D.Categorical(probs=p), D.Categorical(logits=logits)
    ids = lib.tensor([[2, 0, 3], [1, 1, 0]])
    return [by_p.log_prob(ids), by_p.entropy(), by_p.logits, by_p.probs, by_l.log_prob(ids),
            by_l.entropy(), by_l.probs, by_l.logits, by_l.log_prob(lib.tensor(3)),
            D.Categorical(probs=p[0] * 3).log_prob(lib.tensor([0, 1, 2])),
            D.kl_divergence(by_l, D.Categorical(probs=p[1:2])),
            D.kl_divergence(D.Categorical(probs=p), by_l), by_p.perplexity()]


def _normal(lib, loc, scale, x):
    D = lib.distributions
    n = D.Normal(loc, scale.abs() + 0.1)
    m = D.Normal(loc[0], 2.0)
    return [n.log_prob(x), n.entropy(), n.mean, n.stddev, n.variance, m.log_prob(x),
            m.entropy(), D.Normal(0.5, scale.abs()[0, 0] + 0.2).log_prob(x),
            D.kl_divergence(n, m), D.kl_divergence(m, n), n.log_prob(x[0, 0])]


def _bernoulli(lib, p, logits):
    D = lib.distributions
    by_p, by_l = D.Bernoulli(probs=p), D.Bernoulli(logits=logits)
    value = lib.tensor(np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]]))
    return [by_p.log_prob(value), by_p.entropy(), by_p.logits, by_p.variance, by_p.mean,
            by_l.log_prob(value), by_l.entropy(), by_l.probs, by_l.logits,
            by_l.log_prob(lib.tensor(1.0, dtype=logits.dtype)), D.kl_divergence(by_p, by_l),
            D.kl_divergence(by_l, D.Bernoulli(probs=p * 0.5 + 0.25)),
            D.Bernoulli(0.25).log_prob(value)]


def _uniform(lib, low, width, x):
    D = lib.distributions
    u = D.Uniform(low, low + width.abs() + 0.5)
    inside = low + 0.3 * (width.abs() + 0.5)
    return [u.log_prob(inside), u.entropy(), u.mean, u.stddev, u.variance, u.cdf(inside),
            u.icdf(x.sigmoid()), D.Uniform(low, 4.0).log_prob(low.detach() + 1.0),
            D.Uniform(low, low + 2.0, validate_args=False).log_prob(x)]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_matches_torch(torch, dtype):
    _compare(torch, _uniform, [rng.uniform(-2, 2, (2, 3)), rng.standard_normal((2, 3)),
                               rng.uniform(-3, 3, (5, 2, 3))], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_matches_torch(torch, dtype):
    probs = np.array([[0.0, 0.3, 0.5, 1.0], [0.9, 0.1, 0.6, 0.45]])
    _compare(torch, _bernoulli, [probs, LOGITS[:2]], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_categorical_matches_torch(torch, dtype):
    _compare(torch, _categorical, [PROBS, LOGITS], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_matches_torch(torch, dtype):
    _compare(torch, _normal, [rng.standard_normal((2, 3)), rng.standard_normal((2, 3)),
                              rng.standard_normal((4, 2, 3))], dtype)


def test_rsample_gradient_matches_torch_given_the_same_noise(torch):
    # the noise streams differ, so take torch's eps and check minigrad's gradient formula
    loc0, scale0 = rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    grads = []
    for lib in (torch, mg):
        loc = lib.tensor(loc0, requires_grad=True)
        scale = lib.tensor(scale0, requires_grad=True)
        lib.manual_seed(3)
        y = lib.distributions.Normal(loc, scale).rsample((5,))
        eps = (y.detach() - loc.detach()) / scale.detach()
        (y * y).sum().backward()
        grads.append((loc.grad.numpy(), scale.grad.numpy(), eps.numpy()))
        assert tuple(y.shape) == (5, 3) and y.requires_grad
    for (gl, gs, eps) in grads:  # d/dloc sum y^2 = 2 sum y; d/dscale = 2 sum y eps
        y = loc0 + eps * scale0
        np.testing.assert_allclose(gl, 2 * y.sum(0), rtol=1e-10)
        np.testing.assert_allclose(gs, 2 * (y * eps).sum(0), rtol=1e-10)


def test_gradchecks():
    p = mg.tensor(PROBS + 0.05, requires_grad=True)
    logits = mg.tensor(LOGITS, requires_grad=True)
    ids = mg.tensor([[2, 0, 3], [1, 1, 0]])
    assert gradcheck(lambda a: Categorical(probs=a).log_prob(ids), [p])
    assert gradcheck(lambda a: Categorical(logits=a).log_prob(ids), [logits])
    assert gradcheck(lambda a: Categorical(probs=a).entropy(), [p])
    assert gradcheck(lambda a: Categorical(logits=a).entropy(), [logits])
    assert gradcheck(lambda a, b: kl_divergence(Categorical(logits=a), Categorical(probs=b)),
                     [logits, p])
    loc = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    scale = mg.tensor(rng.uniform(0.5, 2, (2, 3)), requires_grad=True)
    x = mg.tensor(rng.standard_normal((4, 2, 3)), requires_grad=True)
    assert gradcheck(lambda a, b, v: Normal(a, b).log_prob(v), [loc, scale, x])
    assert gradcheck(lambda b: Normal(0.0, b).entropy(), [scale])
    assert gradcheck(lambda a, b: kl_divergence(Normal(a, b), Normal(b, a * a + 1)), [loc, scale])

    q = mg.tensor(rng.uniform(0.05, 0.95, (2, 3)), requires_grad=True)
    value = mg.tensor(np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]]))
    assert gradcheck(lambda a: Bernoulli(probs=a).log_prob(value), [q])
    assert gradcheck(lambda a: Bernoulli(logits=a).entropy(), [loc])
    assert gradcheck(lambda a, b: kl_divergence(Bernoulli(probs=a), Bernoulli(logits=b)),
                     [q, loc])

    def rsample(a, b):
        mg.manual_seed(5)  # the same noise at every evaluation
        return Normal(a, b).rsample((3,)) + Uniform(a, a + b).rsample((3,)) ** 2
    assert gradcheck(rsample, [loc, scale])
    assert gradcheck(lambda a, b: Uniform(a, a + b).log_prob(a + b * 0.3), [loc, scale])


def test_sampling_is_repeatable_and_in_proportion():
    c = Categorical(probs=mg.tensor(PROBS))
    mg.manual_seed(0)
    first = c.sample((4000,))
    mg.manual_seed(0)
    assert (c.sample((4000,)).numpy() == first.numpy()).all()
    assert first.shape == (4000, 3) and first.dtype == mg.int64
    freq = np.stack([(first.numpy() == k).mean(0) for k in range(4)], -1)
    np.testing.assert_allclose(freq, PROBS, atol=0.03)
    assert c.sample().shape == (3,) and Categorical(logits=mg.zeros(5)).sample().shape == ()
    n = Normal(mg.tensor([0.0, 10.0]), mg.tensor([1.0, 0.1]))
    mg.manual_seed(1)
    draws = n.sample((4000,))
    mg.manual_seed(1)
    assert (n.sample((4000,)).numpy() == draws.numpy()).all() and not draws.requires_grad
    np.testing.assert_allclose(draws.numpy().mean(0), [0.0, 10.0], atol=0.06)
    np.testing.assert_allclose(draws.numpy().std(0), [1.0, 0.1], rtol=0.05)
    assert Normal(0.0, 1.0).sample((2, 3)).shape == (2, 3)
    u = Uniform(mg.tensor([0.0, -2.0]), mg.tensor([1.0, 4.0]))
    mg.manual_seed(3)
    flat = u.sample((4000,))
    mg.manual_seed(3)
    assert (u.sample((4000,)).numpy() == flat.numpy()).all()
    assert (flat.numpy() >= [0, -2]).all() and (flat.numpy() < [1, 4]).all()
    np.testing.assert_allclose(flat.numpy().mean(0), [0.5, 1.0], atol=0.08)
    b = Bernoulli(probs=mg.tensor([0.1, 0.5, 0.9]))
    mg.manual_seed(2)
    coins = b.sample((4000,))
    mg.manual_seed(2)
    assert (b.sample((4000,)).numpy() == coins.numpy()).all() and coins.dtype == mg.float32
    assert set(np.unique(coins.numpy())) == {0.0, 1.0}
    np.testing.assert_allclose(coins.numpy().mean(0), [0.1, 0.5, 0.9], atol=0.03)


def test_shapes_properties_and_reprs(torch):
    for lib in (torch, mg):
        D = lib.distributions
        c = D.Categorical(logits=lib.zeros(2, 5))
        assert tuple(c.batch_shape) == (2,) and tuple(c.event_shape) == ()
        assert tuple(c.param_shape) == (2, 5) and c.mode.tolist() == [0, 0]
        assert np.isnan(c.mean.numpy()).all() and tuple(c.enumerate_support().shape) == (5, 2)
        assert tuple(c.enumerate_support(expand=False).shape) == (5, 1)
        assert repr(c.support) == "IntegerInterval(lower_bound=0, upper_bound=4)"
        assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"
        assert tuple(D.Normal(lib.zeros(3), 1.0).batch_shape) == (3,)
        assert D.Normal(0.0, 1.0).has_rsample and not D.Categorical(lib.ones(2)).has_rsample
        b = D.Bernoulli(probs=lib.tensor([0.2, 0.5, 0.8]))
        assert np.isnan(b.mode.numpy()[1]) and b.mode.numpy()[[0, 2]].tolist() == [0, 1]
        assert tuple(b.enumerate_support().shape) == (2, 3) and repr(b.support) == "Boolean()"
        assert repr(D.Bernoulli(0.5)) == "Bernoulli(probs: 0.5)"
        assert repr(D.Categorical(logits=lib.zeros(2, 5))).replace("minigrad.", "torch.") == \
            "Categorical(logits: torch.Size([2, 5]))"
        assert repr(D.Normal(lib.zeros(2), 1.0)).replace("minigrad.", "torch.") == \
            "Normal(loc: torch.Size([2]), scale: torch.Size([2]))"
        assert [repr(s).replace("minigrad.", "torch.") for s in (
            c.batch_shape, c.event_shape, D.Normal(0.0, 1.0).expand((2, 3)).batch_shape)] == \
            ["torch.Size([2])", "torch.Size([])", "torch.Size([2, 3])"]


def test_errors(torch):
    # validate_args=True throughout: torch.compile turns PyTorch's default off for the process
    for lib in (torch, mg):
        D = lib.distributions
        with pytest.raises(ValueError, match="Either `probs` or `logits` must be specified"):
            D.Categorical()
        with pytest.raises(ValueError, match="must be at least one-dimensional"):
            D.Categorical(probs=lib.tensor(0.5))
        with pytest.raises(ValueError, match="to satisfy the constraint Simplex"):
            D.Categorical(probs=lib.tensor([-0.2, 0.8]), validate_args=True)
        with pytest.raises(ValueError, match=r"constraint GreaterThan\(lower_bound=0.0\)"):
            D.Normal(lib.zeros(2), -lib.ones(2), validate_args=True)
        with pytest.raises(ValueError, match="to be within the support"):
            D.Categorical(probs=lib.ones(3), validate_args=True).log_prob(lib.tensor(3))
        with pytest.raises(ValueError, match="not broadcastable"):
            D.Categorical(lib.ones(2, 3), validate_args=True).log_prob(
                lib.zeros(3, dtype=lib.int64))
        with pytest.raises(ValueError, match=r"constraint Interval\(lower_bound=0.0, upper_b"):
            D.Bernoulli(probs=lib.tensor([1.5]), validate_args=True)
        with pytest.raises(ValueError, match=r"within the support \(Boolean\(\)\)"):
            D.Bernoulli(0.5, validate_args=True).log_prob(lib.tensor(0.5))
        with pytest.raises(ValueError, match=r"constraint LessThan\(upper_bound="):
            D.Uniform(1.0, 0.0, validate_args=True)
        with pytest.raises(ValueError, match="to be within the support"):
            D.Uniform(0.0, 1.0, validate_args=True).log_prob(lib.tensor(1.5))
        with pytest.raises(NotImplementedError):
            D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(lib.ones(2)))
        with pytest.raises(NotImplementedError):
            D.Categorical(lib.ones(2)).rsample()
        assert D.Normal(lib.zeros(2), -lib.ones(2), validate_args=False).scale.tolist() == [-1, -1]
    assert math.isinf(kl_divergence(Categorical(probs=mg.tensor([0.5, 0.5])),
                                    Categorical(probs=mg.tensor([1.0, 0.0]))).item())


def test_batch_and_event_shapes_are_sizes_as_pytorchs(torch):
    def shapes(L):
        D = L.distributions
        n = D.Normal(L.zeros(3), 1.0)
        made = [n, n.expand((2, 3)), D.Independent(n, 1), D.Categorical(L.ones(4)),
                D.MultivariateNormal(L.zeros(2), L.eye(2)), D.Dirichlet(L.ones(2, 5))]
        return [repr(s).replace("minigrad.", "torch.") for d in made
                for s in (d.batch_shape, d.event_shape)] + [
            repr(n.sample((2,)).shape).replace("minigrad.", "torch."),
            type(D.Independent(n, 1).event_shape + (1,)).__name__]
    assert shapes(mg) == shapes(torch)
