"""Connectionist temporal classification (Graves et al., 2006): `ctc_loss` and `CTCLoss`'s
computation, the negative log-likelihood of a label sequence under per-frame class
log-probabilities, summed over every alignment that collapses to it (repeats merged, blanks
dropped).

The forward pass is the alpha recursion over the extended label sequence (a blank before,
between and after the labels) in log space; the backward pass is the beta recursion, and
alpha + beta gives each frame's posterior over the classes. Both run over the whole batch at
once, one time step per NumPy step, in float64 (the result takes the input's dtype).
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.op import Op
from minigrad.graph_rules import rule, saved_input
from minigrad.jvp_rules import jvp_rule
from minigrad.tensor import Tensor
from minigrad.tensor import array_of as _array_of

_OP = "ctc_loss"


def _extended(targets, offsets, target_lengths, blank):
    """The extended labels l' (N, 2 S + 1): blank, l1, blank, l2, ..., blank, padded with
    blanks; `skip` (N, 2 S + 1) marks the positions s whose alpha may come from s - 2: a
    label that differs from the label before it (a target label equal to the blank counts as
    a label there, as in PyTorch)."""
    n, s_max = len(target_lengths), int(max(target_lengths, default=0))
    labels = np.full((n, 2 * s_max + 1), blank, dtype=np.int64)
    for b, (start, length) in enumerate(zip(offsets, target_lengths)):
        labels[b, 1:2 * length:2] = targets[start:start + length] if targets.ndim == 1 else \
            targets[b, :length]
    skip = np.zeros(labels.shape, dtype=bool)
    skip[:, 3::2] = labels[:, 3::2] != labels[:, 1:-2:2]  # labels sit at the odd places
    return labels, skip


def _shift(a, k):
    """a (N, S') moved k places right along S', -inf coming in."""
    out = np.full_like(a, -np.inf)
    out[:, k:] = a[:, :a.shape[1] - k]
    return out


def _shift_left(a, k):
    """a (N, S') moved k places left along S', -inf coming in."""
    out = np.full_like(a, -np.inf)
    out[:, :a.shape[1] - k] = a[:, k:]
    return out


class CTCNegLogLikelihood(Op):
    """-log p(target | log_probs) per sequence: log_probs (T, N, C) -> (N,).

    The gradient is PyTorch's: exp(log_probs) - posterior, which is the gradient of the loss
    with respect to the logits when `log_probs` is their log_softmax (as CTC requires); taken
    through log_softmax it equals the true gradient, and a log_probs leaf gets the same
    .grad as in PyTorch. Frames past a sequence's input length get 0, and with zero_infinity
    so does a sequence whose loss is infinite (no alignment fits in its frames).
    """

    @staticmethod
    def forward(ctx, log_probs, labels, skip, input_lengths, target_lengths, zero_infinity):
        lp = log_probs.astype(np.float64)
        t_max, n = lp.shape[:2]
        rows = np.arange(n)[:, None]
        emit = lp[:, rows, labels]  # (T, N, S'): each frame's log-probability of each l'_s
        width = 2 * target_lengths + 1  # (N,) the extended length of each sequence
        inside = np.arange(labels.shape[1])[None, :] < width[:, None]
        alpha = np.full((max(t_max, 1),) + labels.shape, -np.inf)
        if t_max:
            alpha[0, :, :2] = emit[0, :, :2]
            alpha[0] = np.where(inside, alpha[0], -np.inf)
        for t in range(1, t_max):
            prev = alpha[t - 1]
            paths = np.logaddexp(prev, _shift(prev, 1))
            paths = np.logaddexp(paths, np.where(skip, _shift(prev, 2), -np.inf))
            alpha[t] = np.where(inside, paths + emit[t], -np.inf)
        last = alpha[np.maximum(input_lengths - 1, 0), np.arange(n)]  # (N, S')
        ends = np.logaddexp(last[np.arange(n), width - 1],
                            np.where(width > 1, last[np.arange(n), np.maximum(width - 2, 0)],
                                     -np.inf))
        # no frames: the empty target has probability 1, any other 0
        ends = np.where(input_lengths == 0, np.where(target_lengths == 0, 0.0, -np.inf), ends)
        nll = -ends
        infinite = np.isinf(nll)
        ctx.save_for_backward(lp, emit, alpha, nll)
        ctx.labels, ctx.skip, ctx.inside, ctx.width = labels, skip, inside, width
        ctx.log_probs, ctx.dtype, ctx.lengths = log_probs, log_probs.dtype, input_lengths
        ctx.dead = infinite if zero_infinity else np.zeros(n, bool)
        out = np.where(infinite, 0.0, nll) if zero_infinity else nll
        return out.astype(log_probs.dtype)

    @staticmethod
    def backward(ctx, g):
        lp, emit, alpha, nll = ctx.saved
        labels, skip, inside, width = ctx.labels, ctx.skip, ctx.inside, ctx.width
        t_max, n, c = lp.shape
        beta = np.full_like(alpha, -np.inf)
        skip_ahead = np.zeros_like(skip)  # s may go on to s + 2
        skip_ahead[:, :-2] = skip[:, 2:]
        for b in range(n):
            t_last = ctx.lengths[b] - 1
            if t_last >= 0:
                w = width[b]
                beta[t_last, b, w - 1] = emit[t_last, b, w - 1]
                if w > 1:
                    beta[t_last, b, w - 2] = emit[t_last, b, w - 2]
        for t in range(t_max - 2, -1, -1):
            nxt = beta[t + 1]
            paths = np.logaddexp(nxt, _shift_left(nxt, 1))
            paths = np.logaddexp(paths, np.where(skip_ahead, _shift_left(nxt, 2), -np.inf))
            fresh = np.where(inside, paths + emit[t], -np.inf)
            # frames at or past a sequence's end keep the values set above
            ongoing = (t < ctx.lengths - 1)[:, None]
            beta[t] = np.where(ongoing, fresh, beta[t])
        both = alpha[:t_max] + beta  # (T, N, S'): log of the paths through s at t, times p
        occupancy = np.full((t_max, n, c), -np.inf)
        for s in range(labels.shape[1]):  # gather each position's share into its class
            cls = labels[:, s]
            here = occupancy[:, np.arange(n), cls]
            occupancy[:, np.arange(n), cls] = np.logaddexp(here, both[:, :, s])
        with np.errstate(invalid="ignore", over="ignore"):
            grad = np.exp(lp) - np.exp(occupancy + nll[None, :, None] - lp)
        grad = grad * np.asarray(g, np.float64)[None, :, None]
        frames = np.arange(t_max)[:, None] < ctx.lengths[None, :]
        grad = np.where(frames[:, :, None] & ~ctx.dead[None, :, None], grad, 0.0)
        return grad.astype(ctx.dtype)


class _CTCLossBackward(Op):
    """The gradient of CTCNegLogLikelihood as an op of the graph (what a backward pass with
    create_graph=True records): (T, N, C), (N,) -> (T, N, C). As in PyTorch, it has no
    derivative of its own, so differentiating it again is an error."""

    @staticmethod
    def forward(ctx, log_probs, g, node):
        return CTCNegLogLikelihood.backward(node, g)

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


@rule(CTCNegLogLikelihood)
def _ctc_rule(ctx, g):
    return _CTCLossBackward.apply(saved_input(ctx, 0, ctx.log_probs), g, node=ctx)


@jvp_rule(CTCNegLogLikelihood)
def _ctc_jvp(ctx, out, tangents):
    raise NotImplementedError("Trying to use forward AD with _ctc_loss that does not support it "
                              "because it has not been implemented yet (as in PyTorch).")


def _lengths(lengths, n, name):
    """Input or target lengths as int64 (N,), from a tensor or a sequence of ints."""
    arr = np.asarray(_array_of(lengths))
    if arr.dtype.kind not in "iu":
        raise RuntimeError(f"{_OP}: {name} must be integral, got {arr.dtype}")
    arr = arr.reshape(-1).astype(np.int64)
    if arr.size != n:
        raise RuntimeError(f"{_OP}: {name} must be of size batch_size ({n}), got {arr.size} "
                           f"values")
    return arr


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of per-frame log-probabilities log_probs (T, N, C) (log_softmax over C;
    or (T, C) for one sequence) against targets, either padded (N, S) or concatenated
    (sum(target_lengths),), with each sequence's input and target lengths (N,).

    reduction='mean' divides each sequence's loss by its target length (at least 1) and
    averages over the batch; 'sum' adds; 'none' gives (N,). zero_infinity=True turns the
    infinite loss of a target too long for its frames, and its gradient, into 0.
    """
    from .functional_loss import _check_reduction
    _check_reduction(reduction, _OP)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.ndim != 3:
        raise RuntimeError(f"{_OP}: expected log_probs of 3 dims (T, N, C) or 2 (T, C), got "
                           f"shape {tuple(log_probs.shape)}")
    if lp.dtype.kind != "f":
        raise RuntimeError(f"{_OP}: log_probs must be floating point, got {lp.dtype}")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError(f"{_OP}: blank must be in label range: blank {blank} for {c} "
                           f"classes")
    tgt = np.asarray(_array_of(targets))
    if tgt.ndim not in (1, 2) or (tgt.size and tgt.dtype.kind not in "iub"):
        raise RuntimeError(f"{_OP}: targets must be class ids, padded (N, S) or concatenated "
                           f"(sum(target_lengths),), got {tgt.dtype} of shape {tgt.shape}")
    tgt = tgt.astype(np.int64)
    in_len = _lengths(input_lengths, n, "input_lengths")
    tg_len = _lengths(target_lengths, n, "target_lengths")
    for name, lengths, most in (("target_lengths", tg_len, None),
                                ("input_lengths", in_len, t_max)):
        if lengths.size and lengths.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{lengths.min()} (while checking arguments for ctc_loss_cpu)")
        if most is not None and lengths.size and lengths.max() > most:
            raise RuntimeError(f"Expected {name} to have value at most {most}, but got value "
                               f"{lengths.max()} (while checking arguments for ctc_loss_cpu)")
    if tgt.ndim == 1:
        offsets = np.concatenate([[0], np.cumsum(tg_len)[:-1]]).astype(np.int64)
        if tgt.shape[0] != tg_len.sum():
            raise RuntimeError(f"Expected tensor to have size {tg_len.sum()} at dimension 0, "
                               f"but got size {tgt.shape[0]} for argument #2 'targets' (while "
                               f"checking arguments for ctc_loss_cpu): concatenated targets "
                               f"hold sum(target_lengths) labels")
    else:
        offsets = np.zeros(n, np.int64)
        if tgt.shape[0] != n:
            raise RuntimeError(f"{_OP}: padded targets of shape {tgt.shape} must have one row "
                               f"per sequence ({n})")
        if tg_len.size and tgt.shape[1] < tg_len.max():
            raise RuntimeError(f"Expected tensor to have size at least {tg_len.max()} at "
                               f"dimension 1, but got size {tgt.shape[1]} for argument #2 "
                               f"'targets' (while checking arguments for ctc_loss_cpu)")
    labels, skip = _extended(tgt, offsets, tg_len, blank)
    used = labels[np.arange(labels.shape[1])[None, :] < (2 * tg_len + 1)[:, None]]
    if used.size and (used.min() < 0 or used.max() >= c):
        raise IndexError(f"{_OP}: target labels must be in [0, {c}), got {used.min()} to "
                         f"{used.max()}")
    nll = CTCNegLogLikelihood.apply(lp, labels=labels, skip=skip, input_lengths=in_len,
                                    target_lengths=tg_len, zero_infinity=zero_infinity)
    if reduction == "mean":
        per_label = Tensor._wrap(np.maximum(tg_len, 1).astype(nll.dtype))
        return (nll / per_label).mean()
    if reduction == "sum":
        return nll.sum()
    return nll if batched else nll.reshape(())
