"""The Poisson and Gaussian NLL losses and the margin losses (soft margin, multi-label soft
margin, hinge embedding, multi-class and multi-label hinge, triplet with any distance):
float64 gradient checks, and values, dtypes and gradients against PyTorch on odd shapes, both
float dtypes, empty batches and bad arguments."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck

rng = np.random.default_rng(3)


def both(torch, fn, arrays, grad=(0,), w_seed=0):
    """fn(lib, *tensors) in each library: (outputs, input gradients) of a random weighting."""
    results = []
    for lib in (torch, mg):
        ts = [lib.tensor(a, requires_grad=i in grad) if np.issubdtype(np.asarray(a).dtype,
              np.floating) else lib.tensor(a) for i, a in enumerate(arrays)]
        out = fn(lib, *ts)
        w = np.random.default_rng(w_seed).standard_normal(tuple(out.shape))
        if out.requires_grad:
            (out * lib.tensor(w.astype(str(out.dtype).replace("torch.", "")))).sum().backward()
        results.append((out.detach().numpy(), str(out.dtype).replace("torch.", ""),
                        [None if ts[i].grad is None else ts[i].grad.numpy() for i in grad]))
    (e, edt, eg), (g, gdt, gg) = results
    assert gdt == edt and g.shape == e.shape
    tol = 1e-5 if edt == "float32" else 1e-10
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True)
    for a, b in zip(gg, eg):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10, equal_nan=True)


def f64(*shape, low=-2.0, high=2.0):
    return mg.tensor(rng.uniform(low, high, shape), requires_grad=True)


# --- float64 gradient checks -----------------------------------------------------------------

def test_gradcheck_poisson_and_gaussian():
    counts = mg.tensor(rng.integers(0, 6, (3, 5)).astype(np.float64))
    assert gradcheck(lambda x: F.poisson_nll_loss(x, counts, full=True, reduction="none"),
                     [f64(3, 5)])
    assert gradcheck(lambda r: F.poisson_nll_loss(r, counts, log_input=False), [f64(3, 5, low=0.2)])
    # the target's gradient, Stirling term included, where the target is above 1
    assert gradcheck(lambda t: F.poisson_nll_loss(mg.ones(4), t, full=True, reduction="sum"),
                     [f64(4, low=1.5, high=4.0)])
    assert gradcheck(lambda m, y, v: F.gaussian_nll_loss(m, y, v, full=True, reduction="none"),
                     [f64(4, 3), f64(4, 3), f64(4, 1, low=0.3)])
    assert gradcheck(lambda m, v: F.gaussian_nll_loss(m, mg.zeros(4, 3), v), [f64(4, 3),
                                                                            f64(4, low=0.3)])


def test_gradcheck_margin_losses():
    y = mg.tensor([[1.0, -1.0, 1.0], [-1.0, -1.0, 1.0]])
    assert gradcheck(lambda x: F.soft_margin_loss(x, y, reduction="none"), [f64(2, 3)])
    labels = mg.tensor([[1.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    assert gradcheck(lambda x, w: F.multilabel_soft_margin_loss(x, labels, w, reduction="none"),
                     [f64(2, 4), f64(4, low=0.5)])
    # away from the hinge's corner at margin - input = 0
    d = mg.tensor([0.2, 0.5, 1.7, 3.0, 0.4], dtype=mg.float64, requires_grad=True)
    assert gradcheck(lambda d: F.hinge_embedding_loss(d, mg.tensor([1.0, -1, -1, 1, 2])), [d])
    ids = mg.tensor([0, 3, 1, 2, 2])
    w = mg.tensor([0.5, 1.5, 1.0, 2.0], dtype=mg.float64)
    for p in (1, 2):
        assert gradcheck(lambda x: F.multi_margin_loss(x, ids, p=p, margin=0.7, weight=w,
                                                       reduction="none"), [f64(5, 4)])
    lists = mg.tensor([[3, 0, -1, 1], [2, 2, 1, -1], [-1, 0, 0, 0]])
    assert gradcheck(lambda x: F.multilabel_margin_loss(x, lists, reduction="none"), [f64(3, 4)])
    assert gradcheck(lambda a, p, n: F.triplet_margin_with_distance_loss(
        a, p, n, distance_function=lambda u, v: ((u - v) ** 2).sum(-1), swap=True,
        reduction="sum"), [f64(4, 3), f64(4, 3), f64(4, 3)])


# --- against PyTorch ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_likelihood_losses_match_pytorch(torch, dtype, reduction):
    x = rng.uniform(-2, 2, (2, 3, 5)).astype(dtype)
    counts = rng.integers(0, 7, (2, 3, 5)).astype(dtype)
    both(torch, lambda lib, x, c: lib.nn.functional.poisson_nll_loss(
        x, c, full=True, eps=1e-4, reduction=reduction), [x, counts], grad=(0, 1))
    both(torch, lambda lib, x, c: lib.nn.functional.poisson_nll_loss(
        x.exp(), c, log_input=False, reduction=reduction), [x, counts])
    var = rng.uniform(0, 1, (2, 3, 5)).astype(dtype)
    var[0, 0, :2] = 0  # clamped at eps
    for v in (var, var[:, :1], var[..., :1], var[..., 0]):
        both(torch, lambda lib, m, y, v: lib.nn.functional.gaussian_nll_loss(
            m, y, v, eps=1e-3, reduction=reduction), [x, counts, v], grad=(0, 1, 2))


def test_likelihood_losses_on_empty_and_non_contiguous_inputs(torch):
    x = rng.uniform(-2, 2, (4, 6))
    both(torch, lambda lib, x: lib.nn.functional.poisson_nll_loss(x.t(), x.t() ** 2), [x])
    both(torch, lambda lib, x: lib.nn.functional.poisson_nll_loss(x[:0], x[:0], reduction="sum"),
         [x])
    both(torch, lambda lib, x: lib.nn.functional.gaussian_nll_loss(x[:0], x[:0], x[:0] ** 2,
                                                                   reduction="none"), [x])
    both(torch, lambda lib, x: lib.nn.functional.gaussian_nll_loss(x.t(), x.t() * 0.5,
                                                                   x.t()[:, :1] ** 2), [x])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_margin_losses_match_pytorch(torch, dtype, reduction):
    x = rng.uniform(-2, 2, (7, 5)).astype(dtype)
    signs = np.where(rng.random((7, 5)) < 0.5, 1.0, -1.0).astype(dtype)
    both(torch, lambda lib, x, y: lib.nn.functional.soft_margin_loss(x, y, reduction=reduction),
         [x, signs])
    both(torch, lambda lib, x, y: lib.nn.functional.hinge_embedding_loss(
        x.abs(), y, margin=1.5, reduction=reduction), [x, signs])
    labels = (rng.random((7, 5)) < 0.4).astype(dtype)
    weight = rng.uniform(0.5, 2, 5).astype(dtype)
    both(torch, lambda lib, x, y, w: lib.nn.functional.multilabel_soft_margin_loss(
        x, y, w, reduction=reduction), [x, labels, weight], grad=(0, 1, 2))
    ids = rng.integers(0, 5, 7)
    for p in (1, 2):
        both(torch, lambda lib, x, y, w: lib.nn.functional.multi_margin_loss(
            x, y, p, 0.8, w, reduction=reduction), [x, ids, weight])
    lists = np.full((7, 5), -1)
    for row in lists:
        k = rng.integers(0, 6)
        row[:k] = rng.integers(0, 5, k)  # repeats allowed: each counts
    both(torch, lambda lib, x, y: lib.nn.functional.multilabel_margin_loss(
        x, y, reduction=reduction), [x, lists])
    both(torch, lambda lib, a, p, n: lib.nn.functional.triplet_margin_with_distance_loss(
        a, p, n, swap=True, margin=2.0, reduction=reduction), [x, x[::-1].copy(), x ** 2],
        grad=(0, 1, 2))


def test_margin_losses_single_rows_and_empty_batches(torch):
    x = rng.uniform(-2, 2, (3, 4))
    both(torch, lambda lib, x: lib.nn.functional.multi_margin_loss(x[0], lib.tensor(2)), [x])
    both(torch, lambda lib, x: lib.nn.functional.multi_margin_loss(
        x[0], lib.tensor([2]), reduction="none"), [x])
    both(torch, lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x[0], lib.tensor([1, 1, -1, 0]), reduction="none"), [x])
    both(torch, lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x[:0], lib.zeros(0, 4, dtype=lib.long), reduction="none"), [x])
    both(torch, lambda lib, x: lib.nn.functional.multi_margin_loss(
        x[:0], lib.zeros(0, dtype=lib.long), reduction="none"), [x])
    both(torch, lambda lib, x: lib.nn.functional.multilabel_soft_margin_loss(
        x[:0], x[:0], reduction="sum"), [x])
    both(torch, lambda lib, x: lib.nn.functional.soft_margin_loss(x.t(), x.t().sign().detach()), [x])
    # PyTorch's summed multi-margin loss of an empty batch reads memory it never wrote
    assert F.multi_margin_loss(mg.zeros(0, 4), mg.zeros(0, dtype=mg.long),
                               reduction="sum").item() == 0


@pytest.mark.parametrize("call, error, match", [
    (lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 1, 9])), Exception,
     "out of range"),
    (lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 1, 2]),
                                                        weight=lib.ones(2, 2)), ValueError,
     "weight must be one-dimensional"),
    (lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 1, 2]),
                                                        weight=lib.ones(3)), RuntimeError,
     "inconsistent weight size"),
    (lambda lib, x: lib.nn.functional.multilabel_margin_loss(x, lib.tensor([[0, 7, -1, 1]] * 3)),
     RuntimeError, "out of range"),
    (lambda lib, x: lib.nn.functional.multi_margin_loss(x[:, :0], lib.tensor([0, 0, 0])),
     RuntimeError, "Expected non-empty vector or matrix"),
    (lambda lib, x: lib.nn.functional.poisson_nll_loss(x, x, reduction="avg"), ValueError,
     "not a valid value for reduction"),
    (lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, x.abs(), reduction="avg"),
     ValueError, "is not valid"),
    (lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, -0.5), ValueError,
     "negative entry"),
    (lambda lib, x: lib.nn.functional.gaussian_nll_loss(x, x, x.abs()[:, :2]), ValueError,
     "incorrect size"),
    (lambda lib, x: lib.nn.functional.triplet_margin_with_distance_loss(x, x, x[0]),
     RuntimeError, "same number of dimensions"),
    (lambda lib, x: lib.nn.functional.triplet_margin_with_distance_loss(x, x, x, margin=-1.0),
     ValueError, "margin must be greater than 0"),
    (lambda lib, x: lib.nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2"),
    (lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 1, 2]),
                                                        weight=lib.ones(4).requires_grad_()),
     RuntimeError, "not differentiable with respect to argument 'weight'"),
    (lambda lib, x: lib.nn.functional.soft_margin_loss(x, x.sign().requires_grad_()),
     RuntimeError, "not differentiable with respect to argument 'target'"),
])
def test_errors_match_pytorch(torch, call, error, match):
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    for lib in (torch, mg):
        with pytest.raises(error, match=match):
            call(lib, lib.tensor(x))


def test_modules_keep_their_options_and_reprs(torch):
    for lib in (torch, mg):
        nn = lib.nn
        loss = nn.MultiMarginLoss(p=2, margin=0.5)
        assert (loss.p, loss.margin, loss.reduction) == (2, 0.5, "mean")
        assert nn.PoissonNLLLoss(full=True).full and nn.GaussianNLLLoss(eps=0.1).eps == 0.1
        assert nn.CTCLoss(blank=3).blank == 3 and nn.HingeEmbeddingLoss(margin=2).margin == 2
        default = nn.TripletMarginWithDistanceLoss()
        assert type(default.distance_function).__name__ == "PairwiseDistance"
