"""`minigrad.optim.swa_utils`, as `torch.optim.swa_utils`: averaged copies of a model's weights.

Stochastic Weight Averaging (Izmailov et al.) keeps the running mean of the weights visited
late in training, an exponential moving average (EMA, Polyak averaging) a decayed one; either
usually generalises better than the last weights:

    ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.999))
    for x, y in batches:
        ...; optimizer.step()
        ema.update_parameters(model)
    evaluate(ema)                      # ema(x) runs the averaged copy

`AveragedModel` deep-copies the model; its first `update_parameters` copies the weights, each
later one averages them in with `avg_fn` (one tensor at a time, returning the average) or
`multi_avg_fn` (lists of tensors, updated in place), or by default the equal-weight mean.
Buffers (running statistics) are copied from the model, or averaged too with
`use_buffers=True`, or recomputed afterwards by `update_bn`. `SWALR` anneals each group's rate
to a constant `swa_lr` for the SWA phase.
"""
from __future__ import annotations

import itertools
import math
from copy import deepcopy

import numpy as np

from minigrad.autograd import bump_version
from minigrad.grad_mode import no_grad
from minigrad.nn.module import Module
from minigrad.nn.normalization import BatchNorm1d
from minigrad.tensor import Tensor

from .optimizer import lerp_
from .scheduler import LRScheduler, _per_group


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def _lerp_all(averaged, current, weight):
    """averaged[i].lerp_(current[i], weight) for every pair, in place."""
    for a, c in zip(averaged, current):
        lerp_(a._array, c._array, weight, np.empty_like(a._array))
        bump_version(a)


def get_ema_multi_avg_fn(decay=0.999):
    """The EMA as a `multi_avg_fn`: ema = lerp(ema, current, 1 - decay), in place."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0]._array.dtype.kind in "fc":
                _lerp_all(ema_param_list, current_param_list, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """The running mean as a `multi_avg_fn`: avg = lerp(avg, current, 1 / (n + 1))."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            n = int(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
            if averaged_param_list[0]._array.dtype.kind in "fc":
                _lerp_all(averaged_param_list, current_param_list, 1 / (n + 1))
            else:
                for a, c in zip(averaged_param_list, current_param_list):
                    a.copy_(a + (c - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """The EMA as an `avg_fn`: returns decay * ema + (1 - decay) * current."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The running mean as an `avg_fn`: returns avg + (current - avg) / (n + 1)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A deep copy of `model` (as `self.module`) whose weights average those of `model`
    passed to `update_parameters`; 'n_averaged' (a buffer) counts the updates."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", Tensor._wrap(np.zeros((), np.int64)))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Average `model`'s current weights in (the first call copies them)."""
        if self.use_buffers:
            mine = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            theirs = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            mine, theirs = list(self.parameters()), list(model.parameters())
        pairs = [(a.detach(), b.detach()) for a, b in zip(mine, theirs)]
        n = int(self.n_averaged.item())
        with no_grad():
            if n == 0:
                for a, b in pairs:
                    a.copy_(b)
            elif self.avg_fn is not None:
                for a, b in pairs:
                    a.copy_(self.avg_fn(a, b, self.n_averaged))
            else:  # lists per dtype, as PyTorch groups them
                groups = {}
                for a, b in pairs:
                    groups.setdefault(a._array.dtype, []).append((a, b))
                for group in groups.values():
                    averaged, current = [a for a, _ in group], [b for _, b in group]
                    if self.multi_avg_fn is not None:
                        self.multi_avg_fn(averaged, current, self.n_averaged)
                    else:  # PyTorch's CPU path: one tensor at a time
                        mean = get_swa_avg_fn()
                        for a, b in group:
                            a.copy_(mean(a, b, self.n_averaged))
            if not self.use_buffers:
                for a, b in zip(self.module.buffers(), model.buffers()):
                    a.copy_(b.detach())
            self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the running statistics of `model`'s batch norms (as averaged weights need):
    reset them, then pass every batch of `loader` (a tensor, or a list or tuple whose first
    item is the input) through the model in training mode, averaging the batches' statistics
    equally, as PyTorch does with momentum=None. The model's mode and momenta are restored."""
    norms = [m for m in model.modules() if isinstance(m, BatchNorm1d) and m.track_running_stats]
    if not norms:
        return
    momenta = {m: m.momentum for m in norms}
    for m in norms:  # reset_running_stats
        m.running_mean._array[...] = 0
        m.running_var._array[...] = 1
        m.num_batches_tracked._array[...] = 0

    def cumulative(module, args):  # momentum=None's factor: 1 / (batches seen, this one too)
        module.momentum = 1 / (int(module.num_batches_tracked.item()) + 1)
    handles = [m.register_forward_pre_hook(cumulative) for m in norms]
    was_training = model.training
    model.train()
    try:
        with no_grad():
            for batch in loader:
                if isinstance(batch, (list, tuple)):
                    batch = batch[0]
                if device is not None:
                    batch = batch.to(device)
                model(batch)
    finally:
        for h in handles:
            h.remove()
        for m, momentum in momenta.items():
            m.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's rate from its current value to `swa_lr` (a number or one per
    group) over `anneal_epochs` steps, along half a cosine or linearly, then keep it.

    Like PyTorch's, it anneals by its count of `step()` calls (`_step_count`, which every
    schedule keeps), which an epoch passed to `step(epoch)` does not change."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def get_lr(self):
        # the rate before annealing is recovered from the current one, so that other
        # schedules may have changed it meanwhile
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev_lrs)]

    def load_state_dict(self, state_dict):
        # the annealing reads `_step_count`: it must be there, a count
        count = state_dict.get("_step_count") if isinstance(state_dict, dict) else None
        if not isinstance(count, (int, np.integer)) or isinstance(count, bool) or count < 0:
            raise ValueError(f"SWALR.load_state_dict (nothing was loaded): '_step_count' must "
                             f"be a whole number >= 0, got {count!r}")
        super().load_state_dict(state_dict)
        self._step_count = int(count)
        self._set_anneal_func(self._anneal_strategy)


__all__ = ["AveragedModel", "SWALR", "get_ema_avg_fn", "get_ema_multi_avg_fn", "get_swa_avg_fn",
           "get_swa_multi_avg_fn", "update_bn"]
