"""Loss modules: thin wrappers that keep their options and call `minigrad.nn.functional`."""
from __future__ import annotations

from . import functional as F
from .module import Module


class CrossEntropyLoss(Module):
    """Cross entropy of logits (N, C) (or (N, C, d...)) against class ids (N,) (or (N, d...)) or
    class probabilities of the logits' shape, with ignore_index and label smoothing."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__()
        if size_average is not None or reduce is not None:
            raise TypeError("CrossEntropyLoss: size_average and reduce are deprecated in PyTorch "
                            "and not supported; use reduction=")
        self.weight = weight
        self.ignore_index, self.reduction, self.label_smoothing = ignore_index, reduction, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(Module):
    """Negative log-likelihood of log-probabilities (N, C) (or (N, C, d...)) at class ids (N,)
    (or (N, d...))."""

    def __init__(self, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.ignore_index, self.reduction)


class MSELoss(Module):
    """Mean squared error."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class BCEWithLogitsLoss(Module):
    """Binary cross entropy on logits (stable for large |logits|)."""

    def __init__(self, reduction="mean", pos_weight=None):
        super().__init__()
        self.reduction, self.pos_weight = reduction, pos_weight

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.reduction, self.pos_weight)


class KLDivLoss(Module):
    """KL divergence of log-probabilities (N, C) from target probabilities (N, C)."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, self.reduction, self.log_target)


class L1Loss(Module):
    """Mean absolute error."""

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class BCELoss(Module):
    """Binary cross entropy of probabilities (use BCEWithLogitsLoss on logits)."""

    def __init__(self, weight=None, reduction="mean"):
        super().__init__()
        self.weight, self.reduction = weight, reduction

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, self.reduction)
