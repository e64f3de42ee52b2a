"""RMSprop (Hinton's lecture notes): divide each weight's step by a running root-mean-square
of its recent gradients.

v, an exponential moving average of g * g with decay `alpha`, measures how large this weight's
gradients have lately been; stepping along g / sqrt(v) makes steps of about lr whatever the
gradient's scale, like Adam without the momentum average or the bias correction (v starts at
zero, so the first steps are large: 1 / sqrt(1 - alpha) times lr).

`centered=True` also averages g itself (m) and divides by sqrt(v - m * m), an estimate of the
gradient's variance rather than its raw second moment. `momentum` > 0 keeps a buffer b of the
normalised steps and moves along it.

PyTorch's update, which this reproduces operation for operation (maximize=True negates grad
first):

    g = grad + weight_decay * p                      (if weight_decay != 0)
    v = alpha * v + (1 - alpha) * g * g
    m = m + (1 - alpha) * (g - m)                    (centered: m.lerp_(g, 1 - alpha))
    avg = sqrt(v - m * m) + eps    (centered)  or  sqrt(v) + eps
    b = momentum * b + g / avg;  p = p - lr * b      (momentum > 0)
    p = p - lr * g / avg                             (otherwise)

State per parameter, as PyTorch's: 'step', 'square_avg', and 'momentum_buffer' (momentum > 0),
'grad_avg' (centered).
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, decayed, lerp_


class RMSprop(Optimizer):
    """RMSprop as `torch.optim.RMSprop`."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        for key, what in (("eps", "epsilon"), ("momentum", "momentum"),
                          ("weight_decay", "weight_decay"), ("alpha", "alpha")):
            if not group[key] >= 0:
                raise ValueError(f"RMSprop: invalid {what} value: {group[key]}")

    def _update(self, p, grad, state, group):
        momentum, centered = group["momentum"], group["centered"]
        if not state:
            state["step"] = 0
            state["square_avg"] = _zeros(p)
            if momentum > 0:
                state["momentum_buffer"] = _zeros(p)
            if centered:
                state["grad_avg"] = _zeros(p)
        if momentum > 0 and "momentum_buffer" not in state:  # momentum set on later (1cycle)
            state["momentum_buffer"] = _zeros(p)
        state["step"] += 1
        lr, alpha, eps, wd = group["lr"], group["alpha"], group["eps"], group["weight_decay"]
        names = ["square_avg"] + ["momentum_buffer"] * (momentum > 0) + ["grad_avg"] * centered
        for pc, gc, v, *rest in self._slices(p, grad, *(state[k]._array for k in names),
                                             scratch=3):
            *extra, t1, t2, avg = rest
            d = decayed(gc, pc, wd, t1)
            v *= alpha
            np.multiply(d, 1 - alpha, out=t2)  # addcmul: (value * g) * g
            t2 *= d
            v += t2
            if centered:
                m = extra[-1]
                lerp_(m, d, 1 - alpha, t2)
                np.multiply(m, m, out=avg)
                np.subtract(v, avg, out=avg)
                np.sqrt(avg, out=avg)
            else:
                np.sqrt(v, out=avg)
            avg += eps
            if momentum > 0:
                b = extra[0]
                b *= momentum
                np.divide(d, avg, out=t2)
                b += t2
                np.multiply(b, -lr, out=t2)
            else:  # addcdiv: (value * g) / avg
                np.multiply(d, -lr, out=t2)
                t2 /= avg
            pc += t2


def _zeros(p):
    return Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))


__all__ = ["RMSprop"]
