"""OneCycleLR and CyclicLR, as `torch.optim.lr_scheduler`'s, both stepped once per batch.

OneCycleLR is the "1cycle" policy (Smith & Topin, "Super-Convergence").
The rate climbs from max_lr / div_factor to max_lr over the first `pct_start` of the steps,
then anneals (along a cosine, or linearly) down to initial_lr / final_div_factor; with
`three_phase=True` it first comes back down to initial_lr symmetrically and only then anneals
to the minimum. Momentum (SGD's 'momentum', or Adam's beta1) moves the opposite way between
max_momentum and base_momentum: a large rate wants little momentum.

Each group keeps its own 'initial_lr', 'max_lr', 'min_lr' (and 'max_momentum',
'base_momentum'), written there by the constructor, as PyTorch does, so that the optimizer's
state dict carries them when training is resumed with last_epoch=N.

CyclicLR (Smith, "Cyclical Learning Rates") sweeps the rate linearly between base_lr and
max_lr and back, cycle after cycle (`step_size_up` steps up, `step_size_down` down), the
amplitude scaled per cycle ("triangular": 1, "triangular2": halved each cycle) or per step
("exp_range": gamma ** step), or by a function of one's own (`scale_fn`).
"""
from __future__ import annotations

import math
import types
from functools import partial

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


class CyclicLR(LRScheduler):
    """Cyclical learning rates between `base_lr` and `max_lr` (each a number or one per
    group); momentum (or Adam's beta1) cycles the opposite way when `cycle_momentum`."""

    # the policy functions are rebuilt from `mode` on load; a custom one saves its __dict__
    _unsaved = ("optimizer", "lr_lambdas", "_scale_fn_ref", "_scale_fn_custom")

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _per_group("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _per_group("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_groups(optimizer, max_momentum, base_momentum,
                                              last_epoch == -1)
            self.base_momentums = _per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = _per_group("max_momentum", optimizer, max_momentum)
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        if self._scale_fn_custom is not None:
            return
        if self.mode == "triangular":
            self._scale_fn_ref, self.scale_mode = _constant_scale, "cycle"
        elif self.mode == "triangular2":
            self._scale_fn_ref, self.scale_mode = _halving_scale, "cycle"
        elif self.mode == "exp_range":
            self._scale_fn_ref = partial(_exponential_scale, self.gamma)
            self.scale_mode = "iterations"

    def scale_fn(self, x):
        """The amplitude's scale at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        return self._scale_fn_ref(x)

    def get_lr(self):
        """The rates at step `last_epoch`; also sets each group's momentum when cycled."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [low + (high - low) * scale_factor * scale
               for low, high in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, low, high in zip(self.optimizer.param_groups, self.base_momentums,
                                        self.max_momentums):
                _set_momentum(group, high - (high - low) * scale_factor * scale,
                              self.use_beta1)
        return lrs

    def state_dict(self):
        """As PyTorch's: `_scale_fn_custom` holds None, or a callable object's attributes."""
        state = super().state_dict()
        fn = self._scale_fn_custom
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else dict(fn.__dict__))
        return state

    def load_state_dict(self, state_dict):
        attrs = state_dict.get("_scale_fn_custom") if isinstance(state_dict, dict) else None
        if attrs is not None and not isinstance(attrs, dict):
            raise ValueError(f"CyclicLR.load_state_dict (nothing was loaded): "
                             f"'_scale_fn_custom' should be None or a dict, got {attrs!r}")
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_scale_fn_custom"}
                                if isinstance(state_dict, dict) else state_dict)
        if attrs is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attrs)
        self._init_scale_fn()


def _constant_scale(x):
    return 1.0


def _halving_scale(x):
    return 1 / (2.0 ** (x - 1))


def _exponential_scale(gamma, x):
    return gamma ** x


__all__ = ["CyclicLR", "OneCycleLR"]
