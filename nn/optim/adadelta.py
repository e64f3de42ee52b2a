"""Adadelta (Zeiler): RMSprop whose step size is itself a running average, so that the update
has the units of the weights and needs almost no learning rate (lr defaults to 1).

Two moving averages with decay `rho`: v of the squared gradients ('square_avg') and u of the
squared updates ('acc_delta'). The update is the gradient scaled by sqrt(u + eps) /
sqrt(v + eps): the RMS of recent steps over the RMS of recent gradients. Both start at zero,
so the first steps are about sqrt(eps) / sqrt(v) times the gradient, which is why PyTorch's
MNIST example can run it with lr=1.

PyTorch's update, which this reproduces operation for operation (maximize=True negates grad
first):

    g = grad + weight_decay * p                      (if weight_decay != 0)
    v = rho * v + (1 - rho) * g * g
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta
    p = p - lr * delta
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, decayed


class Adadelta(Optimizer):
    """Adadelta as `torch.optim.Adadelta`; state per parameter: step, square_avg, acc_delta."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not 0.0 <= group["rho"] <= 1.0:
            raise ValueError(f"Adadelta: invalid rho value: {group['rho']}")
        for key, what in (("eps", "epsilon"), ("weight_decay", "weight_decay")):
            if not group[key] >= 0:
                raise ValueError(f"Adadelta: invalid {what} value: {group[key]}")

    def _update(self, p, grad, state, group):
        if not state:
            state["step"] = 0
            for k in ("square_avg", "acc_delta"):
                state[k] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))
        state["step"] += 1
        lr, rho, eps, wd = group["lr"], group["rho"], group["eps"], group["weight_decay"]
        for pc, gc, v, u, t1, t2, t3 in self._slices(p, grad, state["square_avg"]._array,
                                                     state["acc_delta"]._array, scratch=3):
            d = decayed(gc, pc, wd, t1)
            v *= rho
            np.multiply(d, 1 - rho, out=t2)  # addcmul: (value * g) * g
            t2 *= d
            v += t2
            np.add(v, eps, out=t2)  # std
            np.sqrt(t2, out=t2)
            np.add(u, eps, out=t3)  # delta
            np.sqrt(t3, out=t3)
            t3 /= t2
            t3 *= d
            u *= rho
            np.multiply(t3, 1 - rho, out=t2)
            t2 *= t3
            u += t2
            t3 *= -lr
            pc += t3


__all__ = ["Adadelta"]
