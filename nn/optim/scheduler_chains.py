"""Schedules made of schedules, as `torch.optim.lr_scheduler`'s: SequentialLR (one after the
other, switching at milestones) and ChainedScheduler (all at once, each step applying every
one's change to the optimizer's rate: chained schedules multiply).

    warmup = LinearLR(optimizer, start_factor=0.1, total_iters=5)
    decay = CosineAnnealingLR(optimizer, T_max=95)
    scheduler = SequentialLR(optimizer, [warmup, decay], milestones=[5])

Their state dicts hold the inner schedules' state dicts under '_schedulers', as PyTorch's.
"""
from __future__ import annotations

from bisect import bisect_right

from .plateau import ReduceLROnPlateau
from .scheduler import LRScheduler


def _check_schedulers(owner, optimizer, schedulers, what):
    name = type(owner).__name__
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler{what}, but got no scheduler.")
    for i, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(
                f"{name} does not support `ReduceLROnPlateau` scheduler as it requires "
                f"additional kwargs to be specified when calling `step`, but got one at index "
                f"{i} in the given schedulers sequence.")
        if optimizer is not scheduler.optimizer:
            raise ValueError(
                f"{name} expects all schedulers to belong to the same optimizer, but got "
                f"scheduler {type(scheduler).__name__} at index {i} has {scheduler.optimizer}, "
                f"which is different from {type(optimizer).__name__}.")


class _Composite(LRScheduler):
    """State dict and loading shared by the schedules that hold schedules."""

    _unsaved = ("optimizer", "_schedulers")

    def state_dict(self):
        state = super().state_dict()
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        """All or nothing: if one inner schedule refuses its state, none changes."""
        name = type(self).__name__
        inner = state_dict.get("_schedulers") if isinstance(state_dict, dict) else None
        if not isinstance(inner, (list, tuple)) or len(inner) != len(self._schedulers):
            raise ValueError(f"{name}.load_state_dict (nothing was loaded): '_schedulers' "
                             f"should be a list of {len(self._schedulers)} state dicts, got "
                             f"{inner!r}")
        saved = [dict(s.__dict__) for s in (self, *self._schedulers)]
        try:
            super().load_state_dict({k: v for k, v in state_dict.items() if k != "_schedulers"})
            for s, state in zip(self._schedulers, inner):
                s.load_state_dict(state)
        except Exception:
            for s, attrs in zip((self, *self._schedulers), saved):
                s.__dict__.clear()
                s.__dict__.update(attrs)
            raise

    def __repr__(self):
        inner = ", ".join(type(s).__name__ for s in self._schedulers)
        return f"{type(self).__name__}([{inner}], lr={self._last_lr})"


class SequentialLR(_Composite):
    """Run `schedulers[0]` until `milestones[0]`, then `schedulers[1]` (restarted at its epoch
    0, in closed form) until `milestones[1]`, and so on."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_schedulers(self, optimizer, schedulers, "")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                f"Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to "
                f"{len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # undo the inner schedules' initial steps, then start the first one afresh
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo(self)
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def _undo(self, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for s in scheduler._schedulers:
                self._undo(s)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        """Step the schedule whose turn it is (starting it at its epoch 0 at a milestone)."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite):
    """Step every schedule in `schedulers`, in order, at each `step()`."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:  # before schedulers[0] is read, as PyTorch's
            _check_schedulers(self, optimizer, schedulers, " to be chained")
        optimizer = optimizer or schedulers[0].optimizer
        _check_schedulers(self, optimizer, schedulers, " to be chained")
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in schedulers[-1].optimizer.param_groups]

    def step(self):
        """One step of each schedule."""
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


__all__ = ["ChainedScheduler", "SequentialLR"]
