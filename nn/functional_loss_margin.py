"""The margin losses of `torch.nn.functional` beyond margin ranking and triplet: the soft
margin losses (a logistic loss of +-1 labels, and its multi-label form), the hinge embedding
loss, the multi-class and multi-label hinge losses, and the triplet loss of any distance.

Each is built from ops that have backward rules, with PyTorch's formulas (so its edge cases:
a target that is neither 1 nor -1, a class listed twice, a hinge exactly at 0), its argument
checks and its error wording; `minigrad.nn.functional` re-exports them.
"""
from __future__ import annotations

import numpy as np

from minigrad.errors import IndexRangeError
from minigrad.grad_mode import is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.tensor import array_of as _array_of

from .functional_loss import _no_legacy, _reduce, pairwise_distance
from .functional_activation import logsigmoid


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-target * input)) per element, for targets of +-1: the logistic loss of a
    two-class score. Written as PyTorch's, so a large -target * input overflows to inf."""
    _no_legacy(size_average, reduce, "soft_margin_loss")
    _not_differentiable(target, "target", "soft_margin_loss")
    return _reduce((-input * target).exp().log1p(), reduction, "soft_margin_loss")


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """The binary cross entropy of logits (N, C) against 0/1 labels (N, C), each class
    weighted by `weight` (C,) if given, averaged over the C classes: (N, C) -> (N,) before
    the reduction (a (C,) input gives a 0-d loss)."""
    _no_legacy(size_average, reduce, "multilabel_soft_margin_loss")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.ndim - 1
    loss = loss.sum(dim=class_dim) / input.shape[class_dim]
    return _reduce(loss, reduction, "multilabel_soft_margin_loss")


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """input where target is 1, max(0, margin - input) where it is -1, for distances `input`
    and +-1 targets of one shape. As in PyTorch, a target of any other value takes both terms."""
    _no_legacy(size_average, reduce, "hinge_embedding_loss")
    from minigrad.functional import where
    target = target if isinstance(target, Tensor) else Tensor._wrap(np.asarray(target))
    loss = (where(target != 1, (margin - input).clamp(min=0), 0.0)
            + where(target != -1, input, 0.0))
    return _reduce(loss, reduction, "hinge_embedding_loss")


def _not_differentiable(t, name, op):
    """PyTorch's kernels of these losses give no gradient to this argument, and say so."""
    if isinstance(t, Tensor) and t.requires_grad and is_grad_enabled():
        raise RuntimeError(f"The function '{op}' is not differentiable with respect to "
                           f"argument '{name}'. This input cannot have requires_grad True.")


def _class_scores(input, target, op):
    """(N, C) scores and (N,) class ids of a multi-class hinge loss, with PyTorch's checks: a
    (C,) or 0-d input is one row; the loss per row has the target's shape."""
    ndim = input.ndim
    if not (ndim == 0 or (ndim == 1 and input.shape[0] != 0) or
            (ndim == 2 and input.shape[1] != 0)):
        raise RuntimeError(f"{op}: Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    rows = input.shape[0] if ndim == 2 else 1
    c = input.shape[-1] if ndim else 1
    return input.reshape(rows, c), rows, c


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: for scores x (N, C) and class ids y (N,), the sum over the
    other classes j of max(0, margin - x[y] + x[j])^p, times weight[y], over C. p is 1 or 2."""
    _no_legacy(size_average, reduce, "multi_margin_loss")
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and np.ndim(_array_of(weight)) != 1:
        raise ValueError("weight must be one-dimensional")
    _not_differentiable(weight, "weight", "multi_margin_loss")
    scores, rows, c = _class_scores(input, target, "multi_margin_loss")
    ids = np.asarray(_array_of(target))
    if ids.ndim > 1 or ids.size != rows:
        raise RuntimeError(f"multi_margin_loss: inconsistent target size, expected {rows} but "
                           f"got {list(ids.shape)}")
    per_row = ids.shape  # the shape of the unreduced loss
    ids = ids.reshape(rows).astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= c):
        raise IndexRangeError(f"multi_margin_loss: target out of range: class ids must be in "
                              f"[0, {c}), got {ids.min()} to {ids.max()}")
    z = (scores - scores.gather(1, Tensor._wrap(ids[:, None])) + margin).clamp(min=0)
    hinge = z if p == 1 else z * z
    # the target's own class, where z is the margin, does not count
    other = np.ones((rows, c), dtype=input.dtype)
    other[np.arange(rows), ids] = 0
    hinge = hinge * Tensor._wrap(other)
    if weight is not None:
        w = weight if isinstance(weight, Tensor) else Tensor._wrap(np.asarray(weight))
        if w.shape != (c,):
            raise RuntimeError(f"multi_margin_loss: inconsistent weight size, expected {c} but "
                               f"got {list(w.shape)}")
        hinge = hinge * w[ids].reshape(rows, 1)
    loss = hinge.sum(1) / c
    return _reduce(loss.reshape(per_row) if reduction == "none" else loss, reduction,
                   "multi_margin_loss")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: target (N, C) lists each row's classes, ended by the first
    -1; for every listed class j and every class k not listed, max(0, 1 - x[j] + x[k]),
    summed and divided by C. A class listed twice counts twice, as in PyTorch."""
    _no_legacy(size_average, reduce, "multilabel_margin_loss")
    scores, rows, c = _class_scores(input, target, "multilabel_margin_loss")
    lists = np.asarray(_array_of(target))
    fits = (lists.ndim <= 1 and lists.size == c) if input.ndim <= 1 else lists.shape == (rows, c)
    if not fits:
        raise RuntimeError(f"multilabel_margin_loss: inconsistent target size: "
                           f"{list(lists.shape)} for input of size: {list(input.shape)}")
    lists = lists.reshape(rows, c).astype(np.int64)
    listed = np.cumprod(lists >= 0, axis=1).astype(bool)  # up to the first -1
    if np.any(listed & (lists >= c)):
        raise RuntimeError(f"multilabel_margin_loss: target index is out of range: class ids "
                           f"must be in [0, {c}) or -1, got {lists[listed].max()}")
    times = np.zeros((rows, c), dtype=input.dtype)  # how often each class is listed
    np.add.at(times, (np.nonzero(listed)[0], lists[listed]), 1)
    pairs = times[:, :, None] * (times == 0)[:, None, :].astype(input.dtype)  # (N, j, k)
    hinge = (1 - scores.unsqueeze(2) + scores.unsqueeze(1)).clamp(min=0)
    loss = (hinge * Tensor._wrap(pairs)).sum((1, 2)) / c
    if input.ndim <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction, "multilabel_margin_loss")


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for any distance function
    d of two batches (pairwise_distance by default); with swap=True the negative's distance
    is the smaller of its distances to the anchor and to the positive."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {anchor.ndim}D, positive "
                           f"{positive.ndim}D, and negative {negative.ndim}D inputs")
    distance = pairwise_distance if distance_function is None else distance_function
    d_pos, d_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        d_neg = d_neg.minimum(distance(positive, negative))
    return _reduce((margin + d_pos - d_neg).clamp(min=0), reduction,
                   "triplet_margin_with_distance_loss")
