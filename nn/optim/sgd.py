"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay.

Plain SGD moves each parameter a small step against its gradient: p <- p - lr * g.

Momentum keeps a running "velocity" b <- momentum * b + (1 - dampening) * g and steps along it
instead, so directions on which successive gradients agree build up speed while the noise
(directions that flip sign from batch to batch) averages out. The buffer starts as the first
gradient itself, undamped, exactly as in PyTorch.

Nesterov momentum steps along g + momentum * b: a look-ahead that corrects the velocity with
the gradient one step sooner. Weight decay adds weight_decay * p to the gradient (an L2
penalty), pulling weights towards zero.

PyTorch's update, which this reproduces operation for operation (maximize=True negates grad
first, climbing the objective):

    g = grad + weight_decay * p                       (if weight_decay != 0)
    b = g (first step)  or  momentum * b + (1 - dampening) * g
    g = g + momentum * b  (nesterov)  or  b
    p = p - lr * g
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, decayed


class SGD(Optimizer):
    """SGD as `torch.optim.SGD` (momentum buffer kept in state['momentum_buffer'])."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not group["momentum"] >= 0:
            raise ValueError(f"SGD: invalid momentum value: {group['momentum']}")
        if not group["weight_decay"] >= 0:
            raise ValueError(f"SGD: invalid weight_decay value: {group['weight_decay']}")
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise ValueError(f"SGD: nesterov momentum requires a momentum and zero dampening "
                             f"(got momentum={group['momentum']}, "
                             f"dampening={group['dampening']})")

    def _update(self, p, grad, state, group):
        lr, wd = group["lr"], group["weight_decay"]
        mu, damp, nesterov = group["momentum"], group["dampening"], group["nesterov"]
        buf = state.get("momentum_buffer")
        first = mu != 0 and buf is None
        if first:  # allocated once; the first step copies the gradient into it below
            buf = state["momentum_buffer"] = Tensor._wrap(np.empty(p._array.shape, p._array.dtype))
        state_arrays = (buf._array,) if mu != 0 else ()
        for pc, gc, *rest in self._slices(p, grad, *state_arrays, scratch=2):
            *bc, t1, t2 = rest
            d = decayed(gc, pc, wd, t1)
            if mu != 0:
                b = bc[0]
                if first:
                    np.copyto(b, d)
                else:
                    b *= mu
                    if damp != 0:
                        np.multiply(d, 1 - damp, out=t2)
                        b += t2
                    else:
                        b += d
                if nesterov:
                    np.multiply(b, mu, out=t2)
                    np.add(d, t2, out=t1)
                    d = t1
                else:
                    d = b
            np.multiply(d, -lr, out=t2)
            pc += t2
