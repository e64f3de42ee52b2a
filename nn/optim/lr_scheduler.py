"""Learning-rate schedules: change each parameter group's 'lr' as training goes on.

A scheduler is stepped once per optimizer step (or per epoch) *after* `optimizer.step()`:

    opt = Adam(model.parameters(), lr=1.0)
    sched = WarmupScheduler(opt, d_model=512, warmup_steps=4000)
    for batch in data:
        loss(batch).backward(); opt.step(); opt.zero_grad(); sched.step()

`last_epoch` counts the `step()` calls; the constructor makes the first one, so right after
construction `last_epoch` is 0 and the optimizer already holds the rate for the first update.

Why warm-up? At the start Adam's second-moment estimate v rests on a handful of gradients, so
its per-weight step sizes are unreliable, and a Transformer's layer norms and attention are not
yet well conditioned: a full-size learning rate then can blow training up. "Attention Is All
You Need" ramps the rate up linearly for `warmup_steps` updates, then lets it decay like
1/sqrt(step) (the "Noam" schedule, after Noam Shazeer):

    lr(step) = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)

The two branches meet at step == warmup, where the rate peaks. Steps count from 1.

LambdaLR and WarmupScheduler are closed-form functions of `last_epoch` and the groups' initial
rates; MultiplicativeLR multiplies the optimizer's current rate by its function's value, and
StepLR and ExponentialLR, as PyTorch's, by gamma (so one built with last_epoch=N continues
from the rate the optimizer holds), using the closed form only for `step(epoch)`;
CosineAnnealingWarmRestarts follows its restart periods.

This module is `torch.optim.lr_scheduler`'s namespace: the base class is in `scheduler.py`,
the other decays in `decay_schedules.py`, OneCycleLR and CyclicLR in `cyclic.py`,
ReduceLROnPlateau in `plateau.py`, SequentialLR and ChainedScheduler in
`scheduler_chains.py`.
"""
from __future__ import annotations

import math
import types

from .cyclic import CyclicLR, OneCycleLR
from .decay_schedules import ConstantLR, CosineAnnealingLR, LinearLR, MultiStepLR, PolynomialLR
from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler
from .scheduler_chains import ChainedScheduler, SequentialLR


class _LRScheduler(LRScheduler):
    """PyTorch's former name of the base class, which older scripts still subclass."""


class _Lambdas(LRScheduler):
    """A schedule driven by user functions of the epoch: one, or a list with one per group.
    Its state dict holds, under `lr_lambdas`, None for a plain function (which cannot be saved)
    and the attributes (`__dict__`) of a callable object, restored on load, as PyTorch's."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        name, n = type(self).__name__, len(optimizer.param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"{name}: expected {n} lr_lambdas (one per parameter group), "
                                 f"got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = super().state_dict()
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        saved = state_dict.get("lr_lambdas") if isinstance(state_dict, dict) else None
        if saved is not None and (not isinstance(saved, (list, tuple))
                                  or len(saved) != len(self.lr_lambdas)):
            raise ValueError(f"{type(self).__name__}.load_state_dict (nothing was loaded): "
                             f"'lr_lambdas' should be a list of {len(self.lr_lambdas)}, got "
                             f"{saved!r}")
        super().load_state_dict(
            {k: v for k, v in state_dict.items() if k != "lr_lambdas"}
            if isinstance(state_dict, dict) else state_dict)
        for fn, attrs in zip(self.lr_lambdas, saved or ()):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_Lambdas):
    """lr = initial_lr * lr_lambda(last_epoch)."""

    def get_lr(self):
        return [base * fn(self.last_epoch) for base, fn in zip(self.base_lrs, self.lr_lambdas)]


class MultiplicativeLR(_Lambdas):
    """Each step multiplies the optimizer's rate by lr_lambda(last_epoch) (chained: the rate
    after n steps is initial_lr times the product of the factors at epochs 1..n)."""

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self._is_initial:
            return lrs
        return [lr * fn(self.last_epoch) for lr, fn in zip(lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """lr = initial_lr * gamma ** (last_epoch // step_size): decay by gamma every step_size."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if not isinstance(step_size, int) or step_size < 1:
            raise ValueError(f"StepLR: step_size must be a positive int, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return lrs
        return [lr * self.gamma for lr in lrs]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = initial_lr * gamma ** last_epoch, chained as PyTorch's: each step multiplies the
    optimizer's current rate by gamma (`step(epoch)` uses the closed form)."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        return lrs if self._is_initial else [lr * self.gamma for lr in lrs]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR (Loshchilov & Hutter): within each period the rate falls along half a cosine from
    initial_lr to eta_min, then restarts; periods last T_0, T_0 * T_mult, T_0 * T_mult^2, ...

        lr = eta_min + (initial_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2

    T_cur counts the steps since the last restart and T_i is the current period's length.
    `step(epoch)` may take a fractional epoch (e.g. epoch + batch / batches_per_epoch) and
    finds its period in closed form, as PyTorch's does (without the deprecation warning).
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type "
                             f"{type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur
                                                                     / self.T_i)) / 2
                for base in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0  # the constructor's step: the start of the first period
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        elif epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        elif epoch < self.T_0:
            self.T_i, self.T_cur = self.T_0, epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:  # periods before n sum to T_0 (T_mult^n - 1) / (T_mult - 1)
            n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** n
        self.last_epoch = math.floor(epoch)
        self._set_lrs(self._rates_within_step(self.get_lr))


def noam_lr(step, d_model, warmup_steps=4000, factor=1.0):
    """The Transformer's rate at `step` (counted from 1): linear warm-up, then 1/sqrt decay."""
    if step < 1:
        raise ValueError(f"noam_lr: steps count from 1, got {step}")
    if d_model <= 0 or warmup_steps <= 0:
        raise ValueError(f"noam_lr: d_model and warmup_steps must be positive, got "
                         f"{d_model} and {warmup_steps}")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


class WarmupScheduler(LRScheduler):
    """The Noam schedule, `noam_lr(last_epoch + 1, ...)`; the optimizer's own lr is ignored.

    After construction the optimizer holds step 1's rate, so the first `optimizer.step()` uses
    it; each `scheduler.step()` then moves on to the next step's rate.
    """

    def __init__(self, optimizer, d_model, warmup_steps=4000, factor=1.0, last_epoch=-1):
        noam_lr(1, d_model, warmup_steps, factor)  # validates the arguments
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        lr = noam_lr(self.last_epoch + 1, self.d_model, self.warmup_steps, self.factor)
        return [lr] * len(self.optimizer.param_groups)


__all__ = ["ChainedScheduler", "ConstantLR", "CosineAnnealingLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ExponentialLR", "LRScheduler", "LambdaLR", "LinearLR", "MultiStepLR",
           "MultiplicativeLR", "OneCycleLR", "PolynomialLR", "ReduceLROnPlateau", "SequentialLR",
           "StepLR", "WarmupScheduler", "noam_lr"]
