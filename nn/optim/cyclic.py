"""OneCycleLR, as `torch.optim.lr_scheduler`'s: the "1cycle" policy (Smith & Topin,
"Super-Convergence"), stepped once per batch.

The rate climbs from max_lr / div_factor to max_lr over the first `pct_start` of the steps,
then anneals (along a cosine, or linearly) down to initial_lr / final_div_factor; with
`three_phase=True` it first comes back down to initial_lr symmetrically and only then anneals
to the minimum. Momentum (SGD's 'momentum', or Adam's beta1) moves the opposite way between
max_momentum and base_momentum: a large rate wants little momentum.

Each group keeps its own 'initial_lr', 'max_lr', 'min_lr' (and 'max_momentum',
'base_momentum'), written there by the constructor, as PyTorch does, so that the optimizer's
state dict carries them when training is resumed with last_epoch=N.
"""
from __future__ import annotations

import math

from .scheduler import LRScheduler, _check_optimizer, _per_group


def _momentum_groups(optimizer, max_momentum, base_momentum, write):
    """Check that the optimizer has a momentum to cycle (SGD/RMSprop's 'momentum' or
    Adam's beta1), and on a fresh start (`write`) set each group's bounds and starting value.
    Returns whether beta1 is the momentum."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled")
    use_beta1 = "betas" in optimizer.defaults
    highs = _per_group("max_momentum", optimizer, max_momentum)
    lows = _per_group("base_momentum", optimizer, base_momentum)
    if write:
        for high, low, group in zip(highs, lows, optimizer.param_groups):
            _set_momentum(group, high, use_beta1)
            group["max_momentum"], group["base_momentum"] = high, low
    return use_beta1


def _set_momentum(group, value, use_beta1):
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


class OneCycleLR(LRScheduler):
    """The 1cycle schedule over `total_steps` (or `epochs * steps_per_epoch`) steps; a step
    beyond the last raises ValueError, as PyTorch's does."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        # (last step of the phase, rate from, rate to, momentum from, momentum to): group keys
        up = float(pct_start * self.total_steps) - 1
        if three_phase:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                       "base_momentum", "max_momentum"),
                      (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum",
                       "max_momentum")]
        else:
            phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                      (self.total_steps - 1, "max_lr", "min_lr", "base_momentum",
                       "max_momentum")]
        keys = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        self._schedule_phases = [dict(zip(keys, phase)) for phase in phases]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_func_type = anneal_strategy
        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_groups(optimizer, max_momentum, base_momentum,
                                              last_epoch == -1)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start, end, pct):
        """From `start` (pct 0) to `end` (pct 1)."""
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        """The rates at step `last_epoch`; also sets each group's momentum when cycled."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total "
                             f"steps is {self.total_steps}")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, phase in enumerate(self._schedule_phases):
                end = phase["end_step"]
                if step <= end or i == last:
                    pct = (step - start) / (end - start)
                    lrs.append(self._anneal(group[phase["start_lr"]], group[phase["end_lr"]],
                                            pct))
                    if self.cycle_momentum:
                        _set_momentum(group, self._anneal(group[phase["start_momentum"]],
                                                          group[phase["end_momentum"]], pct),
                                      self.use_beta1)
                    break
                start = end
        return lrs


__all__ = ["OneCycleLR"]
