"""Averaged SGD (Polyak & Juditsky; the schedule of Bottou's SGD-QN), as `torch.optim.ASGD`.

Plain SGD with a decaying rate eta_t = lr / (1 + lambd * lr * t) ** alpha and a weight decay
of lambd * eta_t, which also keeps the running average 'ax' of the iterates from step t0 on
(before it, ax follows the weights); the average, not the last iterate, is the estimate that
converges at the optimal rate (load it into the model for evaluation).

PyTorch's update, which this reproduces operation for operation (maximize=True negates grad
first); PyTorch keeps eta and mu in float32 0-d tensors, minigrad in Python floats holding
the same float32 values:

    g = grad + weight_decay * p                      (if weight_decay != 0)
    p = p * (1 - lambd * eta);  p = p - eta * g
    ax = ax + (p - ax) * mu     (ax = p while mu == 1)
    eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, decayed


def _float32(x):
    return float(np.float32(x))


class ASGD(Optimizer):
    """ASGD as `torch.optim.ASGD`; state per parameter: step, eta, mu, ax."""

    _scalars = ("eta", "mu")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not group["weight_decay"] >= 0:
            raise ValueError(f"ASGD: invalid weight_decay value: {group['weight_decay']}")

    def _update(self, p, grad, state, group):
        if not state:
            state["step"] = 0
            state["eta"] = _float32(group["lr"])
            state["mu"] = 1.0
            state["ax"] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))
        state["step"] += 1
        lr, lambd, wd = group["lr"], group["lambd"], group["weight_decay"]
        eta, mu = state["eta"], state["mu"]
        for pc, gc, ax, t1, t2 in self._slices(p, grad, state["ax"]._array, scratch=2):
            d = decayed(gc, pc, wd, t1)
            pc *= 1 - lambd * eta
            np.multiply(d, -eta, out=t2)
            pc += t2
            if mu != 1:
                np.subtract(pc, ax, out=t2)
                t2 *= mu
                ax += t2
            else:
                np.copyto(ax, pc)
        t = state["step"]
        state["eta"] = _float32(lr / ((1 + lambd * lr * t) ** group["alpha"]))
        state["mu"] = _float32(1 / max(1, t - group["t0"]))


__all__ = ["ASGD"]
