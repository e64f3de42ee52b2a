"""Loss modules: thin wrappers that keep their options and call `minigrad.nn.functional`
(`ctc.py`, `functional_loss.py`, `functional_loss_likelihood.py`, `functional_loss_margin.py`)."""
from __future__ import annotations

from minigrad import Tensor

from . import functional as F
from .distance import PairwiseDistance
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
            # PyTorch's buffers (in state_dict, converted by double()); an array stays as given
            if name in ("weight", "pos_weight") and (value is None or isinstance(value, Tensor)):
                self.register_buffer(name, value)
            else:
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


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood of counts `target` under a predicted rate (its log with
    log_input=True); full=True adds the Stirling term of log(target!)."""
    loss = staticmethod(F.poisson_nll_loss)

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction, log_input=log_input, full=full,
                         eps=eps)

    def forward(self, log_input, target):  # PyTorch's name for the first argument
        return self._apply_loss(log_input, target)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood of `target` under a predicted mean `input` and
    variance `var`: forward(input, target, var)."""
    loss = staticmethod(F.gaussian_nll_loss)

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction, full=full, eps=eps)

    def forward(self, input, target, var):
        return self._apply_loss(input, target, var)


class SoftMarginLoss(_Loss):
    """log(1 + exp(-target * input)) for targets of +-1."""
    loss = staticmethod(F.soft_margin_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Binary cross entropy of logits (N, C) against 0/1 labels (N, C), averaged over the
    classes (each weighted by `weight` (C,) if given)."""
    loss = staticmethod(F.multilabel_soft_margin_loss)

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction, weight=weight)


class HingeEmbeddingLoss(_Loss):
    """input where target is 1, max(0, margin - input) where it is -1."""
    loss = staticmethod(F.hinge_embedding_loss)

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction, margin=margin)


class MultiMarginLoss(_Loss):
    """The multi-class hinge loss of scores (N, C) at class ids (N,), with p of 1 or 2, a
    margin and class weights."""
    loss = staticmethod(F.multi_margin_loss)

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        if p != 1 and p != 2:
            raise ValueError("only p == 1 and p == 2 supported")
        super().__init__(size_average, reduce, reduction, p=p, margin=margin, weight=weight)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss of scores (N, C) and class lists (N, C) ended by -1."""
    loss = staticmethod(F.multilabel_margin_loss)

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """max(0, margin + d(anchor, positive) - d(anchor, negative)) for a distance function d
    of two batches (a PairwiseDistance module by default)."""
    loss = staticmethod(F.triplet_margin_with_distance_loss)

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        super().__init__(None, None, reduction, margin=margin, swap=swap,
                         distance_function=distance_function if distance_function is not None
                         else PairwiseDistance())

    def forward(self, anchor, positive, negative):
        return self._apply_loss(anchor, positive, negative)


class CTCLoss(_Loss):
    """The connectionist temporal classification loss: forward(log_probs (T, N, C), targets,
    input_lengths (N,), target_lengths (N,)), with the targets padded (N, S) or concatenated."""
    loss = staticmethod(F.ctc_loss)

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(None, None, reduction, blank=blank, zero_infinity=zero_infinity)

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return self._apply_loss(log_probs, targets, input_lengths, target_lengths)
