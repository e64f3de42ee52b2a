"""Rprop (Riedmiller & Braun, "resilient backpropagation"): each weight has its own step size,
and only the gradient's sign is used.

While the gradient keeps its sign, the weight's step grows by etas[1]; when the sign flips (the
last step jumped over a minimum) it shrinks by etas[0], always within `step_sizes`, and that
weight skips one move (its gradient is taken as 0 until the next step). It suits full-batch
training, where the gradient's sign is reliable; the rate `lr` only sets the first step size.

PyTorch's update, which this reproduces (maximize=True negates grad first):

    s = sign(g * prev);  factor = etas[1] where s > 0, etas[0] where s < 0, 1 where s == 0
    step_size = clamp(step_size * factor, *step_sizes)
    g = 0 where factor == etas[0]
    p = p - sign(g) * step_size;  prev = g
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer


class Rprop(Optimizer):
    """Rprop as `torch.optim.Rprop`; state per parameter: step, prev, step_size."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        etas = group["etas"]
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Rprop: invalid eta values: {etas[0]}, {etas[1]}")

    def _update(self, p, grad, state, group):
        if not state:
            state["step"] = 0
            state["prev"] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))
            state["step_size"] = Tensor._wrap(np.full(p._array.shape, group["lr"],
                                                      p._array.dtype))
        state["step"] += 1
        (shrink, grow), (low, high) = group["etas"], group["step_sizes"]
        for pc, gc, prev, size, t1, t2 in self._slices(p, grad, state["prev"]._array,
                                                       state["step_size"]._array, scratch=2):
            np.multiply(gc, prev, out=t1)
            np.sign(t1, out=t1)
            factor = np.where(t1 > 0, grow, np.where(t1 < 0, shrink, 1)).astype(t1.dtype)
            size *= factor
            np.clip(size, low, high, out=size)
            np.copyto(t2, gc)
            t2[factor == np.asarray(shrink, t1.dtype)] = 0  # a flipped sign: skip this move
            np.sign(t2, out=t1)
            t1 *= -1  # addcmul: (value * sign(g)) * step_size
            t1 *= size
            pc += t1
            np.copyto(prev, t2)


__all__ = ["Rprop"]
