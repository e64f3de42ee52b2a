"""Adagrad (Duchi, Hazan & Singer): divide each weight's step by the root of the sum of all its
squared gradients so far.

Weights that have seen large or frequent gradients slow down, rarely-updated ones (the
embeddings of rare words, sparse features) keep large steps. The sum only grows, so every
step size shrinks over training, like 1/sqrt(t) for steady gradients; `lr_decay` shrinks the
rate further, to lr / (1 + (t - 1) * lr_decay).

PyTorch's update (t counts from 1), which this reproduces operation for operation
(maximize=True negates grad first):

    g = grad + weight_decay * p                        (if weight_decay != 0)
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g
    p = p - clr * g / (sqrt(s) + eps)

As in PyTorch, the state ('step' and 'sum', which starts at `initial_accumulator_value`) is
created for every parameter when the optimizer is built, so it is in the state dict before
the first step; parameters of a group added later get theirs on their first update, from the
constructor's `initial_accumulator_value` (a group's own value of it is not used).
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, decayed


class Adagrad(Optimizer):
    """Adagrad as `torch.optim.Adagrad`."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p])

    def _check_group(self, group):
        super()._check_group(group)
        for key in ("lr_decay", "weight_decay", "initial_accumulator_value", "eps"):
            if not group[key] >= 0:
                what = "epsilon" if key == "eps" else key
                raise ValueError(f"Adagrad: invalid {what} value: {group[key]}")

    def _init_state(self, p, state):
        if not state:
            state["step"] = 0
            state["sum"] = Tensor._wrap(np.full(p._array.shape,
                                                self.defaults["initial_accumulator_value"],
                                                p._array.dtype))

    def _update(self, p, grad, state, group):
        self._init_state(p, state)
        state["step"] += 1
        wd = group["weight_decay"]
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        for pc, gc, s, t1, t2, t3 in self._slices(p, grad, state["sum"]._array, scratch=3):
            d = decayed(gc, pc, wd, t1)
            np.multiply(d, d, out=t2)
            s += t2
            np.sqrt(s, out=t2)
            t2 += group["eps"]
            np.multiply(d, -clr, out=t3)  # addcdiv: (value * g) / std
            t3 /= t2
            pc += t3


__all__ = ["Adagrad"]
