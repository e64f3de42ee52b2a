"""`LRScheduler`: the base of every learning-rate schedule, as `torch.optim.lr_scheduler`'s.

A schedule writes a rate into each of its optimizer's parameter groups ('lr'); `last_epoch`
counts its `step()` calls, and the constructor makes the first one ("the initial step"). A
*chained* schedule computes the next rate from the rate the optimizer holds now (so several
can act on one optimizer), a *closed-form* one from `last_epoch` and the initial rates
(`base_lrs`); `step(epoch)` uses the closed form where a schedule has one.

The state dict has PyTorch's keys, its bookkeeping too: `_step_count` (the `step()` calls,
the constructor's included), `_is_initial` (true during the constructor's step, when a chained
schedule keeps the optimizer's rate) and `_get_lr_called_within_step` (true while `step()`
computes the rates), so a state dict saved by either library loads into the other.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .optimizer import Optimizer


class LRScheduler:
    """Base class: subclasses define `get_lr()` from `self.last_epoch` and `self.base_lrs`."""

    _unbounded = ()  # state-dict numbers that may be infinite (a plateau's best value)
    _unsaved = ("optimizer", "lr_lambdas")  # attributes a subclass saves its own way, if at all
    _is_initial = False
    _get_lr_called_within_step = False

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        groups = optimizer.param_groups
        if last_epoch == -1:
            for g in groups:
                g.setdefault("initial_lr", g["lr"])
        elif any("initial_lr" not in g for g in groups):
            raise KeyError(f"{type(self).__name__}: resuming at last_epoch={last_epoch} needs "
                           f"'initial_lr' in every parameter group (load the optimizer's state "
                           f"first)")
        self.base_lrs = [g["initial_lr"] for g in groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The constructor's step, the first that `_step_count` counts. A chained schedule
        keeps the optimizer's rate on it (resuming must not decay it once more): `_is_initial`
        tells it so."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The learning rate of every group at `self.last_epoch`."""
        raise NotImplementedError(f"{type(self).__name__} does not define get_lr")

    def step(self, epoch=None):
        """Advance one step (or jump to `epoch`, deprecated in PyTorch, which warns alike) and
        write the new rates into the optimizer's groups."""
        if epoch is not None:
            warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        """The next rates (or those at `epoch`, in closed form where the schedule has one),
        written into the optimizer's groups."""
        if epoch is None:
            self.last_epoch += 1
            self._set_lrs(self._rates_within_step(self.get_lr))
        else:
            self.last_epoch = epoch
            self._set_lrs(self._rates_within_step(getattr(self, "_get_closed_form_lr",
                                                          self.get_lr)))

    def _rates_within_step(self, compute):
        """compute(), the rates, with `_get_lr_called_within_step` true meanwhile."""
        self._get_lr_called_within_step = True
        try:
            return list(compute())
        finally:
            self._get_lr_called_within_step = False

    def _set_lrs(self, lrs):
        for g, lr in zip(self.optimizer.param_groups, lrs):
            g["lr"] = lr
        self._last_lr = list(lrs)

    def get_last_lr(self):
        """The rates set by the latest `step()` (one per parameter group)."""
        return list(self._last_lr)

    def state_dict(self):
        """Everything but the optimizer and functions: numbers and lists, so minigrad.save works."""
        return {k: v for k, v in self.__dict__.items()
                if k not in self._unsaved and not callable(v)}

    def load_state_dict(self, state_dict):
        """Resume the schedule (the optimizer's own lr is restored by its load_state_dict).

        All or nothing: the keys must be this scheduler's and each value of the same kind
        (a whole number for `last_epoch`, a list as long for `base_lrs`), or nothing changes.
        """
        name = type(self).__name__
        own = LRScheduler.state_dict(self)  # what a subclass adds, it loads itself
        if not isinstance(state_dict, dict):
            raise ValueError(f"{name}.load_state_dict: expected a dict, got "
                             f"{type(state_dict).__name__}")
        problems = [f"unknown key {k!r}" for k in state_dict if k not in own]
        # the bookkeeping may be absent (a state dict saved before minigrad kept it): the
        # schedule's own values stay
        problems += [f"missing key {k!r}" for k in own
                     if k not in state_dict and k not in _BOOKKEEPING]
        problems += [f"{k!r} should be like {own[k]!r}, got {state_dict[k]!r}"
                     for k in own if k in state_dict
                     and not _same_kind(own[k], state_dict[k], k in self._unbounded)]
        epoch = state_dict.get("last_epoch", -1)
        if not (isinstance(epoch, (int, np.integer)) and not isinstance(epoch, bool)
                and epoch >= -1):
            problems.append(f"'last_epoch' must be a whole number >= -1, got {epoch!r}")
        if problems:
            raise ValueError(f"{name}.load_state_dict (nothing was loaded): "
                             + "; ".join(problems))
        self.__dict__.update(state_dict)

    def __repr__(self):
        return f"{type(self).__name__}(last_epoch={self.last_epoch}, lr={self._last_lr})"


_BOOKKEEPING = ("_step_count", "_is_initial", "_get_lr_called_within_step")
_EPOCH_DEPRECATION = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where "
    "possible. Please use `scheduler.step()` to step the scheduler. During the deprecation, if "
    "epoch is different from None, the closed form is used instead of the new chainable form, "
    "where available. Please open an issue if you are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose.")


def _same_kind(mine, theirs, unbounded=False):
    """Whether a loaded value can stand in for this scheduler's own value (numbers finite,
    or at least not NaN when `unbounded`)."""
    def number(x):
        return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool)
    if number(mine):
        return number(theirs) and (not math.isnan(theirs) if unbounded
                                   else math.isfinite(theirs))
    if isinstance(mine, (list, tuple)):
        return (isinstance(theirs, (list, tuple)) and len(theirs) == len(mine)
                and all(_same_kind(a, b) for a, b in zip(mine, theirs)))
    return type(theirs) is type(mine)


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _per_group(name, optimizer, value):
    """`value` once per parameter group: a list or tuple as long as the groups, or one value
    repeated (PyTorch's `_format_param`)."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return list(value)
    return [value] * n
