"""Loss modules: thin wrappers that keep their options and call `minigrad.nn.functional`."""
from __future__ import annotations

from . import functional as F
from .module import Module


class _Loss(Module):
    """The base of the loss modules (PyTorch's `_Loss`). A loss module keeps its options as
    attributes named as in PyTorch, and its forward is `loss(input, target, **options)`, with
    `loss` the function of nn.functional that computes it. The constructors take PyTorch's
    arguments in PyTorch's order; the deprecated size_average= and reduce= are refused."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", **options):
        if size_average is not None or reduce is not None:
            raise TypeError(f"{type(self).__name__}: size_average and reduce are deprecated in "
                            f"PyTorch and not supported; use reduction=")
        super().__init__()
        self.reduction = reduction
        for name, value in options.items():
            setattr(self, name, value)
        self._options = ("reduction", *options)

    def forward(self, input, target):
        return self._apply_loss(input, target)

    def _apply_loss(self, *inputs):
        return self.loss(*inputs, **{name: getattr(self, name) for name in self._options})


class CrossEntropyLoss(_Loss):
    """Cross entropy of logits (N, C) (or (N, C, d...)) against class ids (N,) (or (N, d...)) or
    class probabilities of the logits' shape, with ignore_index and label smoothing."""
    loss = staticmethod(F.cross_entropy)

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(size_average, reduce, reduction, weight=weight,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


class NLLLoss(_Loss):
    """Negative log-likelihood of log-probabilities (N, C) (or (N, C, d...)) at class ids (N,)
    (or (N, d...)), with class weights and ignore_index."""
    loss = staticmethod(F.nll_loss)

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction, weight=weight,
                         ignore_index=ignore_index)


class MSELoss(_Loss):
    """Mean squared error."""
    loss = staticmethod(F.mse_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy on logits (stable for large |logits|)."""
    loss = staticmethod(F.binary_cross_entropy_with_logits)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction, weight=weight, pos_weight=pos_weight)


class L1Loss(_Loss):
    """Mean absolute error."""
    loss = staticmethod(F.l1_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities (N, C) from target probabilities (N, C)."""
    loss = staticmethod(F.kl_div)

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction, log_target=log_target)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities (use BCEWithLogitsLoss on logits)."""
    loss = staticmethod(F.binary_cross_entropy)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction, weight=weight)


class SmoothL1Loss(_Loss):
    """Squared error where |input - target| < beta (halved, over beta), absolute error beyond."""
    loss = staticmethod(F.smooth_l1_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction, beta=beta)


class HuberLoss(_Loss):
    """Squared error where |input - target| < delta (halved), delta times absolute error
    beyond (less delta / 2); SmoothL1Loss times delta."""
    loss = staticmethod(F.huber_loss)

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(None, None, reduction, delta=delta)


class _PairLoss(_Loss):
    """A loss of two inputs and a target (PyTorch's forward(input1, input2, target))."""

    def forward(self, input1, input2, target):
        return self._apply_loss(input1, input2, target)


class MarginRankingLoss(_PairLoss):
    """max(0, -target * (input1 - input2) + margin) for (N,) scores and targets of +-1."""
    loss = staticmethod(F.margin_ranking_loss)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction, margin=margin)


class CosineEmbeddingLoss(_PairLoss):
    """1 - cos(x1, x2) for targets of 1, max(0, cos(x1, x2) - margin) for targets of -1:
    (N, D), (N, D), (N,) -> loss."""
    loss = staticmethod(F.cosine_embedding_loss)

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction, margin=margin)


class TripletMarginLoss(_Loss):
    """max(0, d(anchor, positive) - d(anchor, negative) + margin) for (B, D) embeddings, d the
    pairwise p-distance (with swap=True, the smaller of the negative's two distances)."""
    loss = staticmethod(F.triplet_margin_loss)

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction, margin=margin, p=p, eps=eps, swap=swap)

    def forward(self, anchor, positive, negative):
        return self._apply_loss(anchor, positive, negative)
