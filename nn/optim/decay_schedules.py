"""Decay schedules as `torch.optim.lr_scheduler`'s: MultiStepLR, ConstantLR, LinearLR,
PolynomialLR and CosineAnnealingLR.

Each is *chained*, as PyTorch's: a step multiplies the rate the optimizer holds now by the
ratio of the schedule's factor at this epoch to its factor at the last one, so schedules can be
combined (ChainedScheduler, SequentialLR) and a schedule built with last_epoch=N continues from
the optimizer's rate. `step(epoch)` uses each one's closed form in `base_lrs` (the groups'
'initial_lr'), as PyTorch's does. The chained and closed forms agree up to float rounding
while nothing else changes the rate.
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter

from .scheduler import LRScheduler


def _lrs(scheduler):
    return [g["lr"] for g in scheduler.optimizer.param_groups]


class MultiStepLR(LRScheduler):
    """Multiply the rate by gamma at each epoch listed in `milestones` (gamma ** n at a
    milestone listed n times)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return _lrs(self)
        return [lr * self.gamma ** self.milestones[self.last_epoch] for lr in _lrs(self)]

    def load_state_dict(self, state_dict):
        """As every schedule's; `milestones` may come back as a plain dict (minigrad.save
        keeps a Counter's items, not its type)."""
        if isinstance(state_dict, dict) and type(state_dict.get("milestones")) is dict:
            state_dict = dict(state_dict, milestones=Counter(state_dict["milestones"]))
        super().load_state_dict(state_dict)

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the rate by `factor` for the first `total_iters` epochs, then restore it."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in _lrs(self)]
        if self.last_epoch != self.total_iters:
            return _lrs(self)
        return [lr * (1.0 / self.factor) for lr in _lrs(self)]

    def _get_closed_form_lr(self):
        return [base * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor))
                for base in self.base_lrs]


class LinearLR(LRScheduler):
    """Multiply the rate by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs (a linear warm-up with the defaults), then keep it."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 "
                             "and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor = start_factor, end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in _lrs(self)]
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self)
        # factor(e) / factor(e - 1), with factor(e) = start + (end - start) * e / total
        change = self.end_factor - self.start_factor
        ratio = 1.0 + change / (self.total_iters * self.start_factor
                                + (self.last_epoch - 1) * change)
        return [lr * ratio for lr in _lrs(self)]

    def _get_closed_form_lr(self):
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters)
                for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = initial_lr * (1 - epoch / total_iters) ** power until total_iters, then kept."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return _lrs(self)
        factor = ((1.0 - self.last_epoch / self.total_iters)
                  / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [lr * factor for lr in _lrs(self)]

    def _get_closed_form_lr(self):
        return [base * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Half a cosine from initial_lr down to eta_min over T_max epochs (no restarts: past
    T_max the rate climbs back along the cosine, as PyTorch's does):

        lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return _lrs(self)
        e, T, low = self.last_epoch, self.T_max, self.eta_min
        if (e - 1 - T) % (2 * T) == 0:  # at the bottom, where the ratio below would be 0/0
            return [lr + (base - low) * (1 - math.cos(math.pi / T)) / 2
                    for base, lr in zip(self.base_lrs, _lrs(self))]
        ratio = (1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T))
        return [ratio * (lr - low) + low for lr in _lrs(self)]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]


__all__ = ["ConstantLR", "CosineAnnealingLR", "LinearLR", "MultiStepLR", "PolynomialLR"]
