"""The CTC loss: against a brute-force sum over every alignment, a float64 gradient check
through log_softmax, and values and gradients against PyTorch's ctc_loss on odd shapes (one
frame, no labels, repeated labels, targets too long for their frames), both target layouts,
both float dtypes, unbatched input and bad arguments."""
import itertools

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck

rng = np.random.default_rng(5)


def brute_force_nll(logp, target, blank=0):
    """-log of the summed probability of every frame-by-frame path that collapses to target."""
    t_len, c = logp.shape
    total = 0.0
    for path in itertools.product(range(c), repeat=t_len):
        collapsed = [k for i, k in enumerate(path) if k != blank and (i == 0 or k != path[i - 1])]
        if collapsed == list(target):
            total += np.exp(sum(logp[t, k] for t, k in enumerate(path)))
    return -np.log(total)


@pytest.mark.parametrize("target, blank", [([1, 2], 0), ([1, 1], 0), ([], 0), ([2], 1),
                                           ([0, 2, 0], 1)])
def test_loss_is_the_sum_over_alignments(target, blank):
    logp = np.log(rng.dirichlet(np.ones(3), 5))  # (T=5, C=3)
    got = F.ctc_loss(mg.tensor(logp), mg.tensor([target], dtype=mg.long), [5], [len(target)],
                     blank=blank, reduction="none")
    np.testing.assert_allclose(got.numpy(), [brute_force_nll(logp, target, blank)], rtol=1e-10)


def test_gradcheck_through_log_softmax():
    targets = mg.tensor([[1, 1, 2], [3, 0, 0], [2, 3, 1]])
    for reduction in ("none", "mean", "sum"):
        assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, [6, 4, 5], [3, 1, 2],
                                              reduction=reduction),
                         [mg.tensor(rng.standard_normal((6, 3, 4)), requires_grad=True)])
    flat = mg.tensor([2, 2, 1, 3])
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(1), flat, 5, 4, blank=0),
                     [mg.tensor(rng.standard_normal((5, 4)), requires_grad=True)])


def _both(torch, program, x, grad_of_logits=True):
    """program(lib, log_probs) in each library, from logits x: (value, gradient) pairs."""
    out = []
    for lib in (torch, mg):
        logits = lib.tensor(x, requires_grad=True)
        lp = logits.log_softmax(-1) if grad_of_logits else \
            lib.tensor(x).log_softmax(-1).detach().requires_grad_()
        loss = program(lib, lp)
        w = lib.tensor(np.random.default_rng(0).standard_normal(tuple(loss.shape)).astype(
            str(loss.dtype).replace("torch.", "")))
        (loss * w).sum().backward()
        leaf = logits if grad_of_logits else lp
        out.append((loss.detach().numpy(), str(loss.dtype).replace("torch.", ""),
                    leaf.grad.numpy()))
    (e, edt, eg), (g, gdt, gg) = out
    assert gdt == edt and g.shape == e.shape
    tol = 2e-5 if edt == "float32" else 1e-9
    np.testing.assert_allclose(g, e, rtol=tol, atol=tol, equal_nan=True)
    np.testing.assert_allclose(gg, eg, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_matches_pytorch(torch, dtype, reduction, zero_infinity):
    t, n, c = 11, 5, 6
    x = rng.standard_normal((t, n, c)).astype(dtype)
    targets = rng.integers(1, c, (n, 7))
    targets[0, :3] = 4  # repeats: each needs a blank between
    targets[3, :6] = [1, 1, 1, 2, 2, 2]  # 6 labels and 5 blanks: more than its 8 frames (inf)
    il, tl = [11, 9, 1, 8, 11], [5, 3, 0, 6, 7]
    for grad_of_logits in (True, False):  # a log_probs leaf: PyTorch's gradient formula
        _both(torch, lambda lib, lp: lib.nn.functional.ctc_loss(
            lp, lib.tensor(targets), lib.tensor(il), lib.tensor(tl), reduction=reduction,
            zero_infinity=zero_infinity), x, grad_of_logits)
    flat = np.concatenate([row[:k] for row, k in zip(targets, tl)]).astype(np.int32)
    _both(torch, lambda lib, lp: lib.nn.CTCLoss(blank=0, reduction=reduction,
                                                zero_infinity=zero_infinity)(
        lp, lib.tensor(flat), tuple(il), tuple(tl)), x)


def test_blank_elsewhere_unbatched_and_one_frame(torch):
    x = rng.standard_normal((7, 2, 4))
    targets = np.array([[0, 1, 1], [2, 0, 2]])
    _both(torch, lambda lib, lp: lib.nn.functional.ctc_loss(
        lp, lib.tensor(targets), lib.tensor([7, 6]), lib.tensor([3, 3]), blank=3), x)
    _both(torch, lambda lib, lp: lib.nn.functional.ctc_loss(
        lp[:, 1], lib.tensor([2, 1]), lib.tensor(6), lib.tensor(2), reduction="none"), x)
    _both(torch, lambda lib, lp: lib.nn.functional.ctc_loss(
        lp[:1], lib.tensor(targets[:, :1]), lib.tensor([1, 1]), lib.tensor([1, 0]),
        reduction="none"), x)
    _both(torch, lambda lib, lp: lib.nn.functional.ctc_loss(
        lp.transpose(0, 1).transpose(0, 1), lib.tensor(targets.T.copy().T), [7, 7], [2, 1]), x)


def test_zero_frames(torch):
    x = rng.standard_normal((4, 3, 3))
    for lib in (torch, mg):
        lp = lib.tensor(x).log_softmax(2)
        got = lib.nn.functional.ctc_loss(lp, lib.tensor([[1], [1], [1]]), lib.tensor([0, 0, 4]),
                                         lib.tensor([0, 1, 1]), reduction="none")
        assert got[0].item() == 0 and got[1].item() == float("inf") and got[2].item() > 0


@pytest.mark.parametrize("args, match", [
    (dict(input_lengths=[12, 3]), "input_lengths to have value at most 11"),
    (dict(input_lengths=[-1, 3]), "input_lengths to have value at least 0"),
    (dict(target_lengths=[5, 2]), "size at least 5 at dimension 1"),
    (dict(target_lengths=[1, -2]), "target_lengths to have value at least 0"),
    (dict(input_lengths=[3, 3, 3]), "input_lengths must be of size batch_size"),
    (dict(blank=6), "blank must be in label range"),
    (dict(blank=-1), "blank must be in label range"),
])
def test_errors_match_pytorch(torch, args, match):
    x = rng.standard_normal((11, 2, 6)).astype(np.float32)
    kw = dict(input_lengths=[11, 9], target_lengths=[3, 2], blank=0)
    kw.update(args)
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match=match):
            lib.nn.functional.ctc_loss(lib.tensor(x).log_softmax(2),
                                       lib.tensor([[1, 2, 3, 4], [2, 3, 0, 0]]),
                                       lib.tensor(kw["input_lengths"]),
                                       lib.tensor(kw["target_lengths"]), blank=kw["blank"])


def test_bad_arguments_name_the_op():
    lp = mg.randn(5, 2, 4).log_softmax(2)
    with pytest.raises(RuntimeError, match="ctc_loss: input_lengths must be integral"):
        F.ctc_loss(lp, mg.tensor([[1], [2]]), mg.tensor([5.0, 5.0]), [1, 1])
    with pytest.raises(RuntimeError, match="Expected tensor to have size 2 at dimension 0"):
        F.ctc_loss(lp, mg.tensor([1, 2, 3]), [5, 5], [1, 1])
    with pytest.raises(IndexError, match=r"ctc_loss: target labels must be in \[0, 4\)"):
        F.ctc_loss(lp, mg.tensor([[1], [7]]), [5, 5], [1, 1])
    with pytest.raises(ValueError, match="ctc_loss: reduction"):
        F.ctc_loss(lp, mg.tensor([[1], [2]]), [5, 5], [1, 1], reduction="avg")


def test_second_derivative_and_forward_mode_are_refused_as_in_pytorch(torch):
    import minigrad.autograd.forward_ad as fwAD
    x = rng.standard_normal((5, 2, 4))
    for lib in (torch, mg):
        xi = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.ctc_loss(xi.log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                                          [5, 5], [2, 2])
        (g,) = lib.autograd.grad(loss, xi, create_graph=True)  # the first derivative works
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not "
                                               "implemented"):
            g.pow(2).sum().backward()
    with fwAD.dual_level():
        lp = fwAD.make_dual(mg.tensor(x).log_softmax(2), mg.ones(5, 2, 4))
        with pytest.raises(NotImplementedError, match="forward AD with _ctc_loss"):
            F.ctc_loss(lp, mg.tensor([[1, 2], [3, 3]]), [5, 5], [2, 2])
