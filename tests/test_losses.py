"""Losses: CrossEntropyLoss, NLLLoss, MSELoss, BCEWithLogitsLoss.

Each is checked against a NumPy transcription of PyTorch's definition (float64), with float64
gradchecks for every option, at logits of +-1e4 (finite loss and gradients), and against
PyTorch itself when it is installed.
"""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.autograd import gradcheck
from helpers import t32, t64


def log_softmax(x, axis=-1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


# --- NumPy references (PyTorch's formulas) --------------------------------------------------

def reduce(loss, reduction, count=None):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    n = loss.size if count is None else count
    return loss.sum() / n if n else np.float64(np.nan)


def ce_reference(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """PyTorch's cross_entropy with class-index targets, logits (N, C) or (N, C, d...).

    loss_i = (1 - e) * (-log p_i[y_i]) + e / C * sum_c (-log p_i[c]) for rows not ignored, 0 for
    ignored rows; "mean" divides the sum by the number of rows that are not ignored.
    """
    logits = np.asarray(logits, np.float64)
    c = logits.shape[1]
    logp = log_softmax(np.moveaxis(logits, 1, -1))  # (N, d..., C)
    target = np.asarray(target)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    nll = -np.take_along_axis(logp, safe[..., None], -1)[..., 0]
    smooth = -logp.sum(-1)
    loss = np.where(keep, (1 - label_smoothing) * nll + label_smoothing / c * smooth, 0.0)
    return reduce(loss, reduction, int(keep.sum()))


def nll_reference(logp, target, ignore_index=-100, reduction="mean"):
    logp = np.asarray(logp, np.float64)
    target = np.asarray(target)
    keep = target != ignore_index
    safe = np.where(keep, target, 0)
    picked = np.take_along_axis(np.moveaxis(logp, 1, -1), safe[..., None], -1)[..., 0]
    return reduce(np.where(keep, -picked, 0.0), reduction, int(keep.sum()))


def bce_reference(x, y, pos_weight=None, reduction="mean"):
    """l = -[pw * y * log(sigmoid(x)) + (1 - y) * log(1 - sigmoid(x))], written stably."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    log_sig = -np.logaddexp(0, -x)        # log(sigmoid(x))
    log_one_minus = -np.logaddexp(0, x)  # log(1 - sigmoid(x))
    pw = 1.0 if pos_weight is None else np.asarray(pos_weight, np.float64)
    return reduce(-(pw * y * log_sig + (1 - y) * log_one_minus), reduction)


def mse_reference(x, y, reduction="mean"):
    return reduce((np.asarray(x, np.float64) - np.asarray(y, np.float64)) ** 2, reduction)


def test_references_are_right():
    """The references themselves, on a hand-computed case."""
    # logits [0, ln 3] -> p = [1/4, 3/4]
    x = np.array([[0.0, np.log(3.0)]])
    assert ce_reference(x, [1]) == pytest.approx(-np.log(0.75))
    assert ce_reference(x, [1], label_smoothing=0.2) == pytest.approx(
        0.8 * -np.log(0.75) + 0.1 * (-np.log(0.25) - np.log(0.75)))
    assert bce_reference([0.0], [1.0]) == pytest.approx(np.log(2))


REDUCTIONS = ["mean", "sum", "none"]


# --- cross entropy --------------------------------------------------------------------------

def ce_case(seed=0, n=7, c=5):
    rng = np.random.default_rng(seed)
    logits = rng.standard_normal((n, c)) * 2
    target = rng.integers(0, c, n)
    target[[1, 4]] = -100
    return logits, target


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.7])
@pytest.mark.parametrize("ignore", [-100, 2])
def test_cross_entropy_matches_reference(reduction, smoothing, ignore):
    logits, target = ce_case()
    if ignore == 2:
        target = np.where(target == -100, 2, target)
    loss = nn.CrossEntropyLoss(ignore_index=ignore, label_smoothing=smoothing,
                               reduction=reduction)(t64(logits, False), mg.tensor(target))
    ref = ce_reference(logits, target, ignore, smoothing, reduction)
    assert loss.shape == np.shape(ref)
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-12, atol=1e-12)
    if reduction == "none":
        assert not loss.numpy()[target == ignore].any()
    # float32 too
    loss32 = F.cross_entropy(t32(logits), target, ignore_index=ignore, reduction=reduction,
                             label_smoothing=smoothing)
    assert loss32.dtype == np.float32
    np.testing.assert_allclose(loss32.numpy(), ref, rtol=1e-5, atol=1e-6)


def test_cross_entropy_mean_divides_by_rows_not_ignored():
    logits, target = ce_case()
    losses = F.cross_entropy(t64(logits, False), target, reduction="none",
                             label_smoothing=0.3).numpy()
    mean = F.cross_entropy(t64(logits, False), target, label_smoothing=0.3).item()
    assert mean == pytest.approx(losses.sum() / 5)  # 7 rows, 2 ignored
    assert mean != pytest.approx(losses.sum() / 7)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_nd_inputs(reduction):
    rng = np.random.default_rng(1)
    logits = rng.standard_normal((3, 4, 5, 2))  # (N, C, d1, d2)
    target = rng.integers(0, 4, (3, 5, 2))
    target[0, 1, 1] = -100
    loss = F.cross_entropy(t64(logits, False), target, reduction=reduction, label_smoothing=0.1)
    ref = ce_reference(logits, target, label_smoothing=0.1, reduction=reduction)
    assert loss.shape == np.shape(ref)
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-12, atol=1e-12)
    x = t64(rng.standard_normal((2, 3, 4)))
    tgt = rng.integers(0, 3, (2, 4))
    tgt[1, 0] = -100
    assert gradcheck(lambda a: F.cross_entropy(a, tgt, reduction=reduction, label_smoothing=0.2),
                     [x])


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.25])
@pytest.mark.parametrize("ignore", [False, True])
def test_cross_entropy_gradcheck(reduction, smoothing, ignore):
    logits, target = ce_case(seed=2, n=5, c=4)
    if not ignore:
        target = np.abs(target) % 4
    assert gradcheck(lambda x: F.cross_entropy(x, target, reduction=reduction,
                                               label_smoothing=smoothing), [t64(logits)])


def test_cross_entropy_gradient_formula():
    logits, target = ce_case(seed=3)
    x = t64(logits)
    F.cross_entropy(x, target, label_smoothing=0.1).backward()
    p = np.exp(log_softmax(logits))
    q = np.full_like(p, 0.1 / 5)
    keep = target != -100
    q[np.arange(7)[keep], target[keep]] += 0.9
    expected = np.where(keep[:, None], p - q, 0) / keep.sum()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_backward_twice_with_retain_graph(reduction, smoothing):
    # the first backward turns the saved log-probabilities into the gradient in place; a
    # second backward through the retained graph, with another upstream gradient, must
    # still be right, and so must a third
    logits, target = ce_case(seed=4)
    x = t64(logits)
    loss = F.cross_entropy(x, target, reduction=reduction, label_smoothing=smoothing)
    ref = t64(logits)
    ref_loss = F.cross_entropy(ref, target, reduction=reduction, label_smoothing=smoothing)
    up = [np.ones(loss.shape), np.linspace(-2, 3, loss.numpy().size).reshape(loss.shape),
          np.full(loss.shape, 0.5)]
    total = 0
    for u in up:
        loss.backward(mg.tensor(u), retain_graph=True)
        fresh = t64(logits)
        F.cross_entropy(fresh, target, reduction=reduction,
                        label_smoothing=smoothing).backward(mg.tensor(u))
        total = total + fresh.grad.numpy()
        np.testing.assert_allclose(x.grad.numpy(), total, rtol=1e-12, atol=1e-14)
    ref_loss.backward(mg.tensor(up[0]))
    assert np.abs(ref.grad.numpy()).max() > 1e-3  # the gradient is not trivially zero


def test_cross_entropy_makes_one_full_size_array_the_gradient():
    # forward keeps the logits and two numbers per row: no (N, C) array; backward writes the
    # gradient, the one (N, C) array of the two passes
    import tracemalloc
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((256, 1000)).astype(np.float32), requires_grad=True)
    h = x * 1.0  # not a leaf: a leaf would copy the gradient into .grad
    target = rng.integers(0, 1000, 256)
    full = 256 * 1000 * 4
    # the first call loads (or compiles) the kernels, whose allocations would count as the op's
    warm = F.cross_entropy(h, target, label_smoothing=0.1)
    warm.grad_fn.backward(warm.grad_fn, np.ones((), np.float32))
    del warm
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        loss = F.cross_entropy(h, target, label_smoothing=0.1)
        forward_peak = tracemalloc.get_traced_memory()[1] - base
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        g = loss.grad_fn.backward(loss.grad_fn, np.ones((), np.float32))
        backward_peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert forward_peak < full / 2
    assert g.shape == (256, 1000) and backward_peak < full * 1.5
    np.testing.assert_allclose(g.sum(axis=1), 0, atol=1e-6)  # p - q sums to 0 per row


def test_cross_entropy_stable_at_large_logits():
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, 1e4], [1e4, 1e4, -1e4], [0, 0, 0]])
    target = np.array([1, 2, 2, 0])
    for dtype in (np.float32, np.float64):
        for smoothing in (0.0, 0.1):
            for reduction in REDUCTIONS:
                x = mg.tensor(logits.astype(dtype), dtype=dtype, requires_grad=True)
                loss = F.cross_entropy(x, target, reduction=reduction, label_smoothing=smoothing)
                assert np.isfinite(loss.numpy()).all(), (dtype, smoothing, reduction)
                ref = ce_reference(logits, target, label_smoothing=smoothing, reduction=reduction)
                np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-5)
                (loss.sum() if reduction == "none" else loss).backward()
                assert np.isfinite(x.grad.numpy()).all(), (dtype, smoothing, reduction)
    # a confident, correct prediction has zero loss and zero gradient
    x = t64([[1e4, -1e4]])
    loss = F.cross_entropy(x, np.array([0]))
    loss.backward()
    assert loss.item() == 0.0 and not x.grad.numpy().any()


def test_cross_entropy_all_rows_ignored():
    logits, _ = ce_case()
    target = np.full(7, -100)
    x = t64(logits)
    mean = F.cross_entropy(x, target)
    assert np.isnan(mean.item())  # as PyTorch: 0 / 0
    assert F.cross_entropy(x, target, reduction="sum").item() == 0.0
    assert not F.cross_entropy(x, target, reduction="none").numpy().any()
    s = F.cross_entropy(x, target, reduction="sum", label_smoothing=0.2)
    s.backward()
    assert s.item() == 0.0 and not x.grad.numpy().any()


def test_cross_entropy_single_example_1d():
    x = np.array([0.5, -1.0, 2.0])
    loss = F.cross_entropy(t64(x, False), np.array(2))
    assert loss.item() == pytest.approx(ce_reference(x[None], [2]))


def test_cross_entropy_errors():
    logits, target = ce_case()
    x = t64(logits, False)
    with pytest.raises(ValueError, match="reduction"):
        F.cross_entropy(x, target, reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.CrossEntropyLoss(reduction="batchmean")(x, target)
    with pytest.raises(TypeError, match="integer"):
        F.cross_entropy(x, target.astype(np.float64))
    with pytest.raises(TypeError, match="integer"):
        F.cross_entropy(x, t64(np.abs(target), False))
    with pytest.raises(ValueError, match="do not match"):
        F.cross_entropy(x, target[:5])
    with pytest.raises(ValueError, match="do not match"):
        F.cross_entropy(t64(np.zeros((2, 3, 4)), False), np.zeros((2, 5), np.int64))
    with pytest.raises(IndexError, match="out of range"):
        F.cross_entropy(x, np.array([0, 1, 2, 5, 0, 1, 2]))
    with pytest.raises(IndexError, match="out of range"):
        F.cross_entropy(x, np.array([0, 1, 2, -3, 0, 1, 2]))
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, target, label_smoothing=1.5)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
@pytest.mark.parametrize("nd", [False, True])
def test_cross_entropy_matches_torch(torch, reduction, smoothing, nd):
    rng = np.random.default_rng(4)
    if nd:
        logits = rng.standard_normal((3, 5, 4)) * 3
        target = rng.integers(0, 5, (3, 4))
        target[1, 2] = target[2, 0] = -100
    else:
        logits, target = ce_case(seed=4)
    x = t64(logits)
    loss = F.cross_entropy(x, target, reduction=reduction, label_smoothing=smoothing)
    tx = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(target), reduction=reduction,
                                              label_smoothing=smoothing)
    np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = rng.standard_normal(loss.shape)
    loss.backward(t64(g, False))
    tloss.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_cross_entropy_smoothing_ignore_index_mean_matches_torch(torch):
    rng = np.random.default_rng(5)
    logits = (rng.standard_normal((9, 6)) * 2).astype(np.float32)
    target = rng.integers(0, 6, 9)
    target[[0, 3, 4, 8]] = 3  # ignore_index=3 and class 3 is a real class elsewhere
    x = t32(logits, True)
    loss = nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.15)(x, mg.tensor(target))
    tx = torch.tensor(logits, requires_grad=True)
    tloss = torch.nn.CrossEntropyLoss(ignore_index=3, label_smoothing=0.15)(tx,
                                                                           torch.tensor(target))
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-5)
    assert loss.item() == pytest.approx(ce_reference(logits, target, 3, 0.15), rel=1e-5)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-7)
    # all ignored: nan, as torch
    allign = np.full(9, 3)
    assert np.isnan(F.cross_entropy(t32(logits), allign, ignore_index=3).item())
    assert np.isnan(torch.nn.functional.cross_entropy(torch.tensor(logits), torch.tensor(allign),
                                                      ignore_index=3).item())


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("shape", [(5,), (4, 5), (3, 5, 2)])
def test_cross_entropy_class_probabilities(reduction, smoothing, shape):
    """A float target of the input's shape is a distribution over the classes (dim 1)."""
    rng = np.random.default_rng(8)
    logits = rng.standard_normal(shape)
    dim = 1 if len(shape) > 1 else 0
    probs = np.moveaxis(rng.dirichlet(np.ones(5), shape[:dim] + shape[dim + 1:]), -1, dim)
    c = shape[dim]
    q = probs * (1 - smoothing) + smoothing / c
    logp = log_softmax(np.moveaxis(logits, dim, -1))
    ref = reduce(-(np.moveaxis(q, dim, -1) * logp).sum(-1), reduction)
    loss = F.cross_entropy(t64(logits, False), probs, reduction=reduction,
                           label_smoothing=smoothing)
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.cross_entropy(x, probs, reduction=reduction,
                                               label_smoothing=smoothing), [t64(logits)])


def test_cross_entropy_class_probabilities_match_torch(torch):
    rng = np.random.default_rng(9)
    logits = rng.standard_normal((3, 4, 2))
    probs = np.moveaxis(rng.dirichlet(np.ones(4), (3, 2)), -1, 1)
    for reduction in REDUCTIONS:
        x, tx = t64(logits), torch.tensor(logits, requires_grad=True)
        loss = F.cross_entropy(x, probs, reduction=reduction, label_smoothing=0.1)
        tloss = torch.nn.functional.cross_entropy(tx, torch.tensor(probs), reduction=reduction,
                                                  label_smoothing=0.1)
        np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-12)
        g = rng.standard_normal(loss.shape)
        loss.backward(t64(g, False))
        tloss.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("input_shape, target_shape", [
    ((4, 3), (4, 1)), ((4, 3), (1, 4)), ((4, 3), (4, 3)), ((4, 3), (3,)), ((2, 3, 5), (2, 5, 1)),
    ((2, 3, 5), (2, 3)), ((3,), (2,)), ((3,), (1, 1))])
def test_class_id_targets_of_the_wrong_shape_raise(input_shape, target_shape):
    """PyTorch refuses these; broadcasting them would score rows against other rows' targets."""
    x = t64(np.zeros(input_shape), False)
    target = np.zeros(target_shape, np.int64)
    for loss in (F.cross_entropy, F.nll_loss):
        with pytest.raises(ValueError, match=f"{loss.__name__}: .* do not match"):
            loss(x, target)


# --- NLL ------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_matches_reference_and_gradcheck(reduction):
    rng = np.random.default_rng(6)
    logp = log_softmax(rng.standard_normal((6, 4)))
    target = rng.integers(0, 4, 6)
    target[2] = -100
    loss = nn.NLLLoss(reduction=reduction)(t64(logp, False), mg.tensor(target))
    np.testing.assert_allclose(loss.numpy(), nll_reference(logp, target, reduction=reduction),
                               rtol=1e-12, atol=1e-12)
    assert gradcheck(lambda x: F.nll_loss(x, target, reduction=reduction), [t64(logp)])
    target2 = np.where(target == -100, 1, target)
    loss = F.nll_loss(t64(logp, False), target2, ignore_index=1, reduction=reduction)
    np.testing.assert_allclose(loss.numpy(), nll_reference(logp, target2, 1, reduction),
                               rtol=1e-12, atol=1e-12)
    # log_softmax + nll_loss == cross_entropy
    x = rng.standard_normal((6, 4))
    via_nll = F.nll_loss(t64(x, False).log_softmax(-1), target, reduction=reduction)
    np.testing.assert_allclose(via_nll.numpy(),
                               F.cross_entropy(t64(x, False), target, reduction=reduction).numpy(),
                               rtol=1e-12, atol=1e-12)


def test_nll_loss_all_ignored_and_stable():
    logp = t64(log_softmax(np.array([[1e4, -1e4, 0.0], [0.0, 0.0, 0.0]])))
    loss = F.nll_loss(logp, np.array([1, 2]))
    assert np.isfinite(loss.item())
    loss.backward()
    assert np.isfinite(logp.grad.numpy()).all()
    assert np.isnan(F.nll_loss(logp, np.array([-100, -100])).item())


def test_nll_loss_errors():
    x = t64(np.zeros((4, 3)), False)
    with pytest.raises(ValueError, match="reduction"):
        F.nll_loss(x, np.zeros(4, np.int64), reduction="average")
    with pytest.raises(ValueError, match="reduction"):
        nn.NLLLoss(reduction="mean ")(x, np.zeros(4, np.int64))
    with pytest.raises(IndexError):
        F.nll_loss(x, np.array([0, 1, 3, 0]))  # class 3 of 3


def test_nll_loss_batch_size_mismatch_raises():
    # a batch-size mismatch must not silently use the first rows (PyTorch: "Expected input
    # batch_size (4) to match target batch_size (2)"), nor fail deep inside gather
    x = t64(np.zeros((4, 3)), False)
    with pytest.raises(ValueError, match="nll_loss"):
        F.nll_loss(x, np.array([0, 1]))
    with pytest.raises(ValueError, match="nll_loss"):
        F.nll_loss(x, np.array([0, 1, 1, 1, 1, 1]))


def test_nll_loss_non_integer_target_raises_clear_error():
    # as cross_entropy: a TypeError naming the op, not NumPy's indexing error from gather
    x = t64(np.zeros((4, 3)), False)
    with pytest.raises(TypeError, match="nll_loss.*integer"):
        F.nll_loss(x, np.array([0.0, 1.0, 2.0, 1.0]))


def _nll_loss_matches_torch(torch, logp, target):
    """F.nll_loss and torch's give the same loss and gradient under every reduction."""
    for reduction in REDUCTIONS:
        x = t64(logp)
        loss = F.nll_loss(x, target, reduction=reduction)
        tx = torch.tensor(logp, requires_grad=True)
        tloss = torch.nn.functional.nll_loss(tx, torch.tensor(target), reduction=reduction)
        np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-12)
        g = np.ones(loss.shape)
        loss.backward(t64(g, False))
        tloss.backward(torch.tensor(g))
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_nll_loss_matches_torch(torch):
    rng = np.random.default_rng(7)
    _nll_loss_matches_torch(torch, log_softmax(rng.standard_normal((5, 4))),
                            np.array([0, 3, -100, 1, 1]))


def test_nll_loss_unbatched_and_nd_layouts_match_torch(torch):
    rng = np.random.default_rng(10)
    cases = [(log_softmax(rng.standard_normal(4)), np.array(2)),
             (log_softmax(rng.standard_normal((2, 4, 3)), 1), np.array([[0, 3, -100], [1, 1, 2]]))]
    for logp, target in cases:
        _nll_loss_matches_torch(torch, logp, target)
        assert gradcheck(lambda a: F.nll_loss(a, target, reduction="sum"), [t64(logp)])


# --- MSE ------------------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_mse_loss(reduction):
    rng = np.random.default_rng(8)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    loss = nn.MSELoss(reduction=reduction)(t64(x, False), t64(y, False))
    np.testing.assert_allclose(loss.numpy(), mse_reference(x, y, reduction), rtol=1e-12)
    assert gradcheck(lambda a, b: F.mse_loss(a, b, reduction=reduction), [t64(x), t64(y)])
    big = np.array([1e4, -1e4])
    loss = F.mse_loss(t64(big), t64(-big, False), reduction=reduction)
    assert np.isfinite(loss.numpy()).all()


def test_mse_loss_errors_and_torch(torch):
    with pytest.raises(ValueError, match="reduction"):
        F.mse_loss(t64(np.zeros(3)), t64(np.zeros(3)), reduction="avg")
    with pytest.raises(ValueError, match="shape"):
        F.mse_loss(t64(np.zeros((3, 1))), t64(np.zeros(3)))
    rng = np.random.default_rng(9)
    x, y = rng.standard_normal((2, 5)), rng.standard_normal((2, 5))
    a = t64(x)
    F.mse_loss(a, t64(y, False)).backward()
    ta = torch.tensor(x, requires_grad=True)
    torch.nn.functional.mse_loss(ta, torch.tensor(y)).backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-12)


def test_mse_loss_errors_without_torch():
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss(reduction="max")(t64(np.zeros(3)), t64(np.zeros(3)))
    with pytest.raises(ValueError, match="shape"):
        F.mse_loss(t64(np.zeros((2, 3))), np.zeros((3, 2)))


# --- BCE with logits ------------------------------------------------------------------------

def bce_case(seed=10, shape=(4, 3)):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.2, 3, shape) * rng.choice([-1, 1], shape)  # away from the kink at 0
    y = rng.random(shape)
    y[0] = (y[0] > 0.5)  # hard labels and soft labels
    return x, y


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("with_pw", [False, True])
def test_bce_with_logits_matches_reference_and_gradcheck(reduction, with_pw):
    x, y = bce_case()
    pw = np.array([0.5, 2.0, 3.0]) if with_pw else None
    loss = nn.BCEWithLogitsLoss(reduction=reduction, pos_weight=pw)(t64(x, False), t64(y, False))
    np.testing.assert_allclose(loss.numpy(), bce_reference(x, y, pw, reduction), rtol=1e-12,
                               atol=1e-12)
    assert gradcheck(lambda a, b: F.binary_cross_entropy_with_logits(
        a, b, reduction=reduction, pos_weight=pw), [t64(x), t64(y)])
    if with_pw:  # pos_weight as a tensor works the same
        loss_t = F.binary_cross_entropy_with_logits(t64(x, False), t64(y, False),
                                                    reduction=reduction, pos_weight=t64(pw, False))
        np.testing.assert_allclose(loss_t.numpy(), loss.numpy(), rtol=1e-12)


def test_bce_with_logits_stable_at_large_logits():
    x = np.array([1e4, -1e4, 1e4, -1e4, 2.5])
    y = np.array([1.0, 0.0, 0.0, 1.0, 0.5])
    for pw in (None, np.full(5, 3.0)):
        for dtype in (np.float32, np.float64):
            xt = mg.tensor(x.astype(dtype), dtype=dtype, requires_grad=True)
            loss = F.binary_cross_entropy_with_logits(xt, mg.tensor(y.astype(dtype), dtype=dtype),
                                                      reduction="none", pos_weight=pw)
            assert np.isfinite(loss.numpy()).all()
            np.testing.assert_allclose(loss.numpy(), bce_reference(x, y, pw, "none"), rtol=1e-6)
            loss.sum().backward()
            assert np.isfinite(xt.grad.numpy()).all()
            # the gradient is pw * y * (sigmoid - 1) + (1 - y) * sigmoid
            sig = 1 / (1 + np.exp(-np.clip(x, -500, 500)))
            pwv = 1.0 if pw is None else pw
            np.testing.assert_allclose(xt.grad.numpy(), pwv * y * (sig - 1) + (1 - y) * sig,
                                       atol=1e-6)


@pytest.mark.parametrize("pw", [None, 3.0])
def test_bce_with_logits_gradient_at_zero_logit(pw):
    # logits of exactly 0 are common (a zero-initialised output layer); the loss is smooth there
    # and its derivative is lw * sigmoid(x) - pw * y with lw = 1 + (pw - 1) * y (torch gives
    # [0.5, 0, -0.5] for y = [0, 0.5, 1] without pos_weight, [0.5, -0.5, -1.5] with pos_weight 3)
    y = np.array([0.0, 0.5, 1.0])
    pwv = 1.0 if pw is None else pw
    pos_weight = None if pw is None else np.full(3, pw)
    x = t64(np.zeros(3))
    F.binary_cross_entropy_with_logits(x, t64(y, False), reduction="sum",
                                       pos_weight=pos_weight).backward()
    lw = 1 + (pwv - 1) * y
    np.testing.assert_allclose(x.grad.numpy(), lw * 0.5 - pwv * y, atol=1e-12)


def test_bce_with_logits_errors():
    x, y = bce_case()
    with pytest.raises(ValueError, match="reduction"):
        F.binary_cross_entropy_with_logits(t64(x), t64(y), reduction="elementwise")
    with pytest.raises(ValueError, match="shape"):
        F.binary_cross_entropy_with_logits(t64(x), t64(y[:2]))


def test_bce_with_logits_matches_torch(torch):
    x, y = bce_case(seed=11)
    pw = np.array([0.3, 1.0, 4.0])
    for reduction in REDUCTIONS:
        for p in (None, pw):
            a = t64(x)
            loss = F.binary_cross_entropy_with_logits(a, t64(y, False), reduction=reduction,
                                                      pos_weight=p)
            ta = torch.tensor(x, requires_grad=True)
            tloss = torch.nn.functional.binary_cross_entropy_with_logits(
                ta, torch.tensor(y), reduction=reduction,
                pos_weight=None if p is None else torch.tensor(p))
            np.testing.assert_allclose(loss.numpy(), tloss.detach().numpy(), rtol=1e-12, atol=1e-14)
            g = np.ones(loss.shape)
            loss.backward(t64(g, False))
            tloss.backward(torch.tensor(g))
            np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-10, atol=1e-14)


def test_loss_modules_keep_options():
    ce = nn.CrossEntropyLoss(ignore_index=0, reduction="sum", label_smoothing=0.1)
    assert (ce.ignore_index, ce.reduction, ce.label_smoothing) == (0, "sum", 0.1)
    assert list(ce.parameters()) == []
    logits, target = ce_case(seed=12)
    target = np.abs(target) % 5
    np.testing.assert_allclose(ce(t64(logits, False), target).numpy(),
                               ce_reference(logits, target, 0, 0.1, "sum"), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("eps", [0.0, 0.25])
def test_cross_entropy_with_class_weights_gradcheck(reduction, eps):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4))
    w = rng.uniform(0.2, 2.0, 4)
    y = np.array([0, 3, 3, 1, 2])
    assert gradcheck(lambda a, b: F.cross_entropy(a, y, weight=b, ignore_index=1,
                                                  reduction=reduction, label_smoothing=eps),
                     [t64(x), t64(w)])


def test_cross_entropy_weight_must_have_one_entry_per_class():
    with pytest.raises(ValueError, match=r"cross_entropy: weight must have one entry per class \(4,\)"):
        F.cross_entropy(t32(np.zeros((2, 4))), np.array([0, 1]), weight=t32(np.ones(3)))
