"""ReduceLROnPlateau, as `torch.optim.lr_scheduler`'s: lower the rate when a watched metric
(a validation loss, an accuracy) stops improving.

    scheduler = ReduceLROnPlateau(optimizer, mode="min", factor=0.5, patience=2)
    for epoch in range(epochs):
        train(...)
        scheduler.step(validation_loss)

A value counts as an improvement only if it beats the best so far by the threshold (relative:
best * (1 - threshold) in "min" mode, best * (1 + threshold) in "max"; absolute: best -/+
threshold), so that noise does not reset the count. After more than `patience` epochs without
one, every group's rate becomes max(lr * factor, min_lr) (unless that changes it by less than
`eps`), and `cooldown` epochs follow during which bad epochs are not counted.
"""
from __future__ import annotations

import math
import warnings

from .scheduler import _EPOCH_DEPRECATION, LRScheduler, _check_optimizer


class ReduceLROnPlateau(LRScheduler):
    """Multiply the rates by `factor` once the metric passed to `step` has not improved for
    more than `patience` epochs."""

    _unbounded = ("best", "mode_worse")  # +-inf until the first step

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        """Forget the best value and the bad-epoch and cooldown counts."""
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record this epoch's value of the metric and lower the rates if it has stalled."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):  # a group was added since construction
            if self.default_min_lr is None:
                raise RuntimeError(
                    f"The number of param groups in the `optimizer` ({len(groups)}) differs "
                    f"from when `ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), "
                    f"usually due to a new param group being added to the optimizer. Please "
                    f"modify the `min_lrs` field to match the length of the `optimizer` param "
                    f"groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for g, min_lr in zip(groups, self.min_lrs):
            old = float(g["lr"])
            new = max(old * self.factor, min_lr)
            if old - new > self.eps:
                g["lr"] = new

    @property
    def in_cooldown(self):
        """Whether bad epochs are being ignored after a reduction."""
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        _check_modes(mode, threshold_mode)
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def get_lr(self):
        """The rates the optimizer holds: this schedule changes them only in `step`."""
        return [g["lr"] for g in self.optimizer.param_groups]

    def load_state_dict(self, state_dict):
        """Resume (all or nothing, as every schedule); the mode and thresholds are checked."""
        if isinstance(state_dict, dict):
            _check_modes(state_dict.get("mode", self.mode),
                         state_dict.get("threshold_mode", self.threshold_mode))
        super().load_state_dict(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)


def _check_modes(mode, threshold_mode):
    if mode not in {"min", "max"}:
        raise ValueError(f"mode {mode} is unknown!")
    if threshold_mode not in {"rel", "abs"}:
        raise ValueError(f"threshold mode {threshold_mode} is unknown!")


__all__ = ["ReduceLROnPlateau"]
