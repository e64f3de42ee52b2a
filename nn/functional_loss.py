"""The losses of `torch.nn.functional` (cross entropy, NLL, MSE, L1, smooth L1 and Huber, BCE,
KL divergence, the margin ranking, cosine embedding and triplet losses, with the pairwise
distance the triplet loss measures).

Each takes PyTorch's layouts and `reduction` ('mean', 'sum', 'none'), checks its arguments
against each other and names itself in the error; `minigrad.nn.functional` re-exports them.
"""
from __future__ import annotations

import numpy as np

from minigrad import ops
from minigrad.errors import DTypeError, InvalidValueError, ShapeError, size_mismatch
from minigrad.tensor import Tensor
from minigrad.tensor import array_of as _array_of


def _no_legacy(size_average, reduce, op):
    """PyTorch's deprecated size_average= and reduce= keep their positions in the signatures
    (so positional calls mean the same), but only reduction= is supported."""
    if size_average is not None or reduce is not None:
        raise TypeError(f"{op}: size_average and reduce are deprecated in PyTorch and not "
                        f"supported; use reduction='mean' | 'sum' | 'none'")


def _check_reduction(reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _class_layout(input, target, op):
    """PyTorch's class-id layouts as (M, C) scores and (M,) ids, plus the per-element shape.

    input (C,) takes a target () or (1,); (N, C) takes (N,); (N, C, d1, ...) takes
    (N, d1, ...). Any other target shape is an error: broadcasting (N, 1) against (N,) would
    silently score every row against every target.
    """
    tgt = np.asarray(_array_of(target))
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have a class dim, got a 0-d tensor")
    expected = (input.shape[:1] + input.shape[2:]) if input.ndim > 1 else ()
    if not np.issubdtype(tgt.dtype, np.integer) and tgt.dtype != np.bool_:
        raise DTypeError(f"{op}: target must hold class ids (integers) of shape {expected}, got "
                         f"{tgt.dtype} of shape {tgt.shape}")
    if tgt.shape != expected and not (input.ndim == 1 and tgt.shape == (1,)):
        raise ValueError(f"{op}: input of shape {input.shape} and target of shape {tgt.shape} "
                         f"do not match: class ids for this input have shape {expected}")
    # PyTorch's kernels index with int64, and for (C,) and (N, C) inputs with uint8 too
    if tgt.dtype != np.int64 and (tgt.dtype != np.uint8 or input.ndim > 2):
        wanted = "Long or Byte (int64 or uint8)" if input.ndim <= 2 else "Long (int64)"
        raise RuntimeError(f"{op}: expected target dtype to be {wanted}, but got {tgt.dtype} "
                           f"(for input of shape {input.shape}); convert the class ids with "
                           f".long()")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if input.ndim == 1:
        scores = input.reshape(1, -1)
    elif input.ndim == 2:
        scores = input
    else:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        scores = input.permute(0, *range(2, input.ndim), 1).reshape(-1, c)
    return scores, tgt.reshape(-1), expected


def _check_classes(tgt, c, ignore_index, op):
    """Every class id in [0, C) unless it is `ignore_index`."""
    ids = tgt[tgt != ignore_index]
    if ids.size and (ids.min() < 0 or ids.max() >= c):
        bad = ids.max() if ids.max() >= c else ids.min()
        raise IndexError(f"{op}: target {bad} is out of range for {c} classes (Target {bad} "
                         f"is out of bounds.)")


def _broadcasts_to(shape, target_shape):
    try:
        return np.broadcast_shapes(shape, target_shape) == tuple(target_shape)
    except ValueError:
        return False


def _reduce(loss, reduction, op):
    """The loss per element, or its sum, or its mean; an unknown reduction names the op."""
    _check_reduction(reduction, op)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def _torch_words(a, b):
    """PyTorch's message for shapes that do not broadcast (it broadcasts those that do, with a
    warning; minigrad refuses any difference), for scripts that search for it."""
    words = size_mismatch(a, b)
    return f". {words}" if words else ""


def _same_shape(input, target, op):
    if input.shape != np.shape(_array_of(target)):
        raise ShapeError(f"{op}: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ"
                         f"{_torch_words(input.shape, np.shape(_array_of(target)))}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits (N, C) (or (C,), or (N, C, d...)) against class ids (N,) (or (),
    or (N, d...)), or against class probabilities of the input's shape (a float target).

    Label smoothing and ignore_index combine as in PyTorch: ignored rows count for nothing and
    "mean" divides by the number of rows that are not ignored. A class `weight` (C,) scales
    each row's loss by its target's weight, and "mean" then divides by the summed weights of
    the rows that count (PyTorch's weighted mean); the smoothing term weighs every class.
    """
    _no_legacy(size_average, reduce, "cross_entropy")
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    tgt = np.asarray(_array_of(target))
    if np.issubdtype(tgt.dtype, np.floating) and tgt.shape == input.shape and input.ndim:
        return _cross_entropy_probabilities(input, target, reduction, label_smoothing)
    logits, ids, shape = _class_layout(input, target, "cross_entropy")
    if weight is not None:
        loss = _weighted_cross_entropy(logits, ids, weight, ignore_index, reduction,
                                       label_smoothing)
        return loss.reshape(shape) if reduction == "none" and input.ndim != 2 else loss
    loss = ops.CrossEntropy.apply(logits, target=ids, ignore_index=ignore_index,
                                  label_smoothing=label_smoothing, reduction=reduction)
    if reduction == "none" and input.ndim != 2:
        loss = loss.reshape(shape)
    return loss


def _weighted_cross_entropy(logits, ids, weight, ignore_index, reduction, eps):
    """Cross entropy of (M, C) logits at ids (M,) with class weights (C,), built from ops."""
    c = logits.shape[1]
    w = weight if isinstance(weight, Tensor) else Tensor._wrap(np.asarray(weight, logits.dtype))
    if w.shape != (c,):
        raise ShapeError(f"cross_entropy: weight must have one entry per class ({c},), got "
                         f"shape {w.shape}")
    keep = ids != ignore_index
    safe = np.where(keep, ids, 0)
    if np.any((safe < 0) | (safe >= c)):
        raise IndexError(f"cross_entropy: class ids must be in [0, {c}) or ignore_index "
                         f"{ignore_index}, got {ids[(safe < 0) | (safe >= c)][:5].tolist()}")
    logp = logits.log_softmax(-1)
    w_row = w[safe] * Tensor._wrap(keep.astype(logits.dtype))         # (M,) 0 where ignored
    nll = -logp.gather(1, Tensor._wrap(safe[:, None])).reshape(-1) * w_row
    loss = nll
    if eps:
        smooth = -(logp * w).sum(-1) * Tensor._wrap(keep.astype(logits.dtype))
        loss = nll * (1.0 - eps) + smooth * (eps / c)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w_row.sum()


def _cross_entropy_probabilities(input, target, reduction, label_smoothing):
    """-sum_c p_c log softmax(x)_c per element; "mean" divides by the number of elements."""
    dim = 1 if input.ndim > 1 else 0
    probs = target if isinstance(target, Tensor) else Tensor._wrap(
        np.asarray(target, dtype=input.dtype))
    if label_smoothing:
        probs = probs * (1.0 - label_smoothing) + label_smoothing / input.shape[dim]
    return _reduce(-(input.log_softmax(dim) * probs).sum(dim), reduction, "cross_entropy")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities (N, C) (or (C,), or (N, C, d...)) at class
    ids (N,) (or (), or (N, d...)). A class `weight` (C,) scales each element's loss by its
    target's weight, and "mean" divides by the summed weights of the elements that count."""
    _no_legacy(size_average, reduce, "nll_loss")
    _check_reduction(reduction, "nll_loss")
    logp, ids, shape = _class_layout(input, target, "nll_loss")
    _check_classes(ids, logp.shape[1], ignore_index, "nll_loss")
    keep = ids != ignore_index
    safe = np.where(keep, ids, 0)
    picked = logp.gather(1, safe[:, None])[:, 0]
    w_row = keep.astype(input.dtype)
    if weight is not None:
        w = np.asarray(_array_of(weight), dtype=input.dtype)
        if w.shape != (logp.shape[1],):
            raise ValueError(f"nll_loss: weight must have one entry per class "
                             f"({logp.shape[1]},), got shape {w.shape}")
        w_row = w_row * w[safe]
    losses = -picked * Tensor._wrap(w_row)
    if reduction == "none":
        return losses.reshape(shape)
    if reduction == "sum":
        return losses.sum()
    total = float(w_row.sum())
    return losses.sum() / total if keep.any() and total else losses.sum() * np.nan


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) squared difference; an element-wise `weight` of the input's shape makes
    "mean" the weighted mean, as in PyTorch."""
    _no_legacy(size_average, reduce, "mse_loss")
    _check_reduction(reduction, "mse_loss")
    if input.shape != np.shape(_array_of(target)):
        raise ShapeError(f"mse_loss: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ"
                         f"{_torch_words(input.shape, np.shape(_array_of(target)))}")
    return _weighted_reduce((input - target) ** 2, weight, reduction, "mse_loss")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean (or sum) absolute difference; `weight` as in `mse_loss`."""
    _no_legacy(size_average, reduce, "l1_loss")
    _same_shape(input, target, "l1_loss")
    return _weighted_reduce((input - target).abs(), weight, reduction, "l1_loss")


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere, for d = input - target;
    beta=0 is the L1 loss."""
    _no_legacy(size_average, reduce, "smooth_l1_loss")
    _same_shape(input, target, "smooth_l1_loss")
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must not be negative, got {beta}")
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    return _reduce(_quadratic_then_linear(input - target, beta) / beta, reduction,
                   "smooth_l1_loss")


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta) elsewhere, for d = input - target:
    smooth_l1_loss times delta. An element-wise `weight` of the input's shape scales each
    element, and "mean" is then the plain mean of the scaled losses (PyTorch's huber_loss,
    unlike its mse_loss, does not divide by the summed weights)."""
    _same_shape(input, target, "huber_loss")
    if delta <= 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta}")
    loss = _quadratic_then_linear(input - target, delta)
    if weight is not None:
        if np.shape(_array_of(weight)) != input.shape:
            raise ValueError(f"huber_loss: weight of shape {np.shape(_array_of(weight))} must "
                             f"have the input's shape {input.shape}")
        loss = loss * weight
    return _reduce(loss, reduction, "huber_loss")


def _quadratic_then_linear(d, k):
    """0.5 d^2 where |d| < k, k (|d| - 0.5 k) elsewhere: the two pieces meet with one slope."""
    from minigrad.functional import where
    a = d.abs()
    return where(a < k, d * d * 0.5, (a - 0.5 * k) * k)


def _weighted_reduce(loss, weight, reduction, op):
    if weight is None:
        return _reduce(loss, reduction, op)
    _check_reduction(reduction, op)
    if np.shape(_array_of(weight)) != loss.shape:
        raise ValueError(f"{op}: weight of shape {np.shape(_array_of(weight))} must have the "
                         f"input's shape {loss.shape}")
    loss = loss * weight
    if reduction == "mean":
        return loss.sum() / weight.sum() if isinstance(weight, Tensor) else \
            loss.sum() / float(np.sum(weight))
    return _reduce(loss, reduction, op)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) for probabilities p; each log is floored at -100, as
    PyTorch does, so p = 0 or 1 gives a large finite loss instead of inf."""
    _no_legacy(size_average, reduce, "binary_cross_entropy")
    _same_shape(input, target, "binary_cross_entropy")
    p = np.asarray(input._array)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise InvalidValueError(f"binary_cross_entropy: all elements of input should be "
                                f"between 0 and 1, got values from {p.min()} to {p.max()} "
                                f"(for logits use binary_cross_entropy_with_logits)")
    if not isinstance(target, Tensor):
        target = Tensor._wrap(np.asarray(target, dtype=input.dtype))
    loss = ops.BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """BCE on logits: (1 - y) x + w softplus(-x), with w = 1 + (pos_weight - 1) y, times
    `weight` (broadcast to the input) if given.

    softplus(-x) = log(1 + e^-x) is computed as logsumexp([0, -x]), which never overflows and,
    unlike max(x, 0) + log(1 + e^-|x|), has the right gradient at x = 0.
    """
    _no_legacy(size_average, reduce, "binary_cross_entropy_with_logits")
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if input.shape != np.shape(_array_of(target)):
        raise ValueError(f"binary_cross_entropy_with_logits: input shape {input.shape} and "
                         f"target shape {np.shape(_array_of(target))} differ")
    # PyTorch writes the loss into (1 - target) in place, so it has the target's dtype (an
    # integer or bool target cannot hold it), whatever the input's and the weights' dtypes
    out_dtype = target.dtype if isinstance(target, Tensor) else input.dtype
    if out_dtype.kind != "f":
        raise RuntimeError(f"binary_cross_entropy_with_logits: result type {input.dtype} can't "
                           f"be cast to the desired output type {out_dtype}: the target must "
                           f"be a floating-point tensor")
    from minigrad.creation import zeros_like
    from minigrad.functional import stack
    softplus_neg = stack([zeros_like(input), -input]).logsumexp(0)
    if pos_weight is not None and not _broadcasts_to(np.shape(_array_of(pos_weight)), input.shape):
        raise ShapeError(f"binary_cross_entropy_with_logits: pos_weight of shape "
                         f"{np.shape(_array_of(pos_weight))} does not broadcast to the input's "
                         f"shape {input.shape}")
    coef = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + coef * softplus_neg
    if weight is not None:
        loss = loss * weight
    if loss.dtype != out_dtype:
        loss = loss.to(out_dtype)
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """KL(target || prediction) for log-probabilities `input`: sum of target (log target - input).

    Elements where target is 0 contribute 0 (the limit of t log t). reduction "batchmean" divides
    the sum by the batch size, which is the true KL divergence per example; "mean" (PyTorch's
    default, kept for compatibility) divides by the number of elements.
    """
    _no_legacy(size_average, reduce, "kl_div")
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                         f"got {reduction!r}")
    if input.shape != np.shape(_array_of(target)):
        raise ShapeError(f"kl_div: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ"
                         f"{_torch_words(input.shape, np.shape(_array_of(target)))}")
    from minigrad.functional import where
    target = target if isinstance(target, Tensor) else Tensor._wrap(np.asarray(target, input.dtype))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = where(positive, target, 1.0)  # log(1) = 0 where target is 0: no NaN
        loss = where(positive, target * (safe.log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target * (input1 - input2) + margin) for (N,) scores and targets of +-1: the
    first input should rank higher where target is 1, lower where it is -1."""
    _no_legacy(size_average, reduce, "margin_ranking_loss")
    if not (input1.shape == input2.shape == np.shape(_array_of(target))):
        raise ShapeError(f"margin_ranking_loss: input1 {input1.shape}, input2 {input2.shape} "
                         f"and target {np.shape(_array_of(target))} must have one shape")
    loss = (-target * (input1 - input2) + margin).clamp(min=0)
    return _reduce(loss, reduction, "margin_ranking_loss")


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1, for
    (N, D) inputs and (N,) targets (or (D,) inputs and a 0-d target); the cosine is taken
    along D, each squared norm raised by 1e-12 as PyTorch does."""
    _no_legacy(size_average, reduce, "cosine_embedding_loss")
    t_shape = np.shape(_array_of(target))
    if input1.shape != input2.shape or input1.ndim not in (1, 2) or \
            t_shape != input1.shape[:-1]:
        raise ShapeError(f"cosine_embedding_loss: input1 {input1.shape} and input2 "
                         f"{input2.shape} must have one shape (N, D) or (D,), and target "
                         f"{t_shape} the shape (N,) or ()")
    from minigrad.functional import where
    eps = 1e-12
    dot = (input1 * input2).sum(-1)
    cos = dot / (((input1 * input1).sum(-1) + eps) * ((input2 * input2).sum(-1) + eps)).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp(min=0),
                                                    0.0)
    return _reduce(loss.to(input1.dtype), reduction, "cosine_embedding_loss")


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """p-norm of x1 - x2 + eps over the last dim: (B, D), (B, D) -> (B,); the eps keeps the
    norm's gradient finite where the two rows are equal."""
    return (x1 - x2 + eps).norm(p, dim=-1, keepdim=keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(0, d(anchor, positive) - d(anchor, negative) + margin) for (B, D) embeddings, d the
    pairwise p-distance; with swap=True the negative's distance is the smaller of its
    distances to the anchor and to the positive."""
    _no_legacy(size_average, reduce, "triplet_margin_loss")
    if not (anchor.shape == positive.shape == negative.shape):
        raise ShapeError(f"triplet_margin_loss: anchor {anchor.shape}, positive "
                         f"{positive.shape} and negative {negative.shape} must have one shape")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = d_neg.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction, "triplet_margin_loss")
