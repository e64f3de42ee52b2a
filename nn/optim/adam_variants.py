"""Adamax, NAdam and RAdam, as `torch.optim`'s: Adam with another denominator, Nesterov
momentum, or a warm-up derived from the variance of its estimates.

All three keep Adam's first moment m = lerp(m, g, 1 - beta1) ('exp_avg'), and NAdam and RAdam
its second moment v = beta2 * v + (1 - beta2) * g * g ('exp_avg_sq'); t counts steps from 1,
maximize=True negates the gradient first, and weight decay adds weight_decay * p to the
gradient (or, with decoupled_weight_decay=True in NAdam and RAdam, shrinks p by
1 - lr * weight_decay first, as AdamW). Each reproduces PyTorch's single-tensor update
operation for operation:

Adamax (Kingma & Ba, section 7) replaces sqrt(v) by an exponentially weighted infinity norm,
u = max(beta2 * u, |g| + eps) ('exp_inf'), and steps p -= lr / (1 - beta1^t) * m / u.

NAdam (Dozat) applies Nesterov momentum to Adam: with mu_t = beta1 * (1 - 0.96^(t *
momentum_decay) / 2) and their running product ('mu_product'),

    denom = sqrt(v / (1 - beta2^t)) + eps
    p -= lr * (1 - mu_t) / (1 - prod mu_1..t) * g / denom
    p -= lr * mu_{t+1} / (1 - prod mu_1..t+1) * m / denom

PyTorch keeps the product in a float32 0-d tensor; minigrad keeps a Python float rounded to
float32 after each step, the same number (its state dict holds that float).

RAdam (Liu et al.) starts as SGD with momentum and turns into Adam as the second moment
becomes trustworthy: with rho_inf = 2 / (1 - beta2) - 1 and rho_t = rho_inf - 2 t beta2^t /
(1 - beta2^t), while rho_t <= 5 it steps p -= lr * m / (1 - beta1^t); afterwards
p -= lr * m / (1 - beta1^t) * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r_t, with the
rectification r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)).
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .adam import check_moments
from .optimizer import Optimizer, lerp_


def _zeros(p):
    return Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))


class _Moments(Optimizer):
    """Shared by the three: Adam's checks, lazy state, and the first steps of the update."""

    _names = ("exp_avg", "exp_avg_sq")  # per-parameter arrays, after 'step'

    def _check_group(self, group):
        super()._check_group(group)
        check_moments(type(self).__name__, group)

    def _update(self, p, grad, state, group):
        if not state:
            state["step"] = 0
            self._init_scalars(state)
            for k in self._names:
                state[k] = _zeros(p)
        state["step"] += 1
        constants = self._constants(state, group)
        for pc, gc, *rest in self._slices(p, grad, *(state[k]._array for k in self._names),
                                          scratch=3):
            *arrays, t1, t2, t3 = rest
            d = gc
            wd = group["weight_decay"]
            if wd != 0 and group.get("decoupled_weight_decay"):
                pc *= 1 - group["lr"] * wd
            elif wd != 0:  # g + wd * p in scratch: the gradient itself must not change
                np.multiply(pc, wd, out=t1)
                np.add(gc, t1, out=t1)
                d = t1
            lerp_(arrays[0], d, 1 - group["betas"][0], t2)
            self._step_arrays(pc, d, *arrays, t2, t3, group=group, c=constants)

    def _init_scalars(self, state):
        """Per-parameter numbers beside 'step' (NAdam's mu_product)."""

    def _constants(self, state, group):
        """The step's scalars, computed once per parameter."""
        return None

    def _step_arrays(self, pc, d, *arrays, group, c):
        raise NotImplementedError(f"{type(self).__name__} does not define _step_arrays")


def _second_moment(v, d, beta2, scratch):
    """v = beta2 * v + ((1 - beta2) * g) * g (addcmul's order)."""
    v *= beta2
    np.multiply(d, 1 - beta2, out=scratch)
    scratch *= d
    v += scratch


class Adamax(_Moments):
    """Adamax as `torch.optim.Adamax`; state per parameter: step, exp_avg, exp_inf."""

    _names = ("exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _constants(self, state, group):
        return group["lr"] / (1 - group["betas"][0] ** state["step"])

    def _step_arrays(self, pc, d, m, u, t2, t3, *, group, c):
        u *= group["betas"][1]
        np.abs(d, out=t2)
        t2 += group["eps"]
        np.maximum(u, t2, out=u)
        np.multiply(m, -c, out=t2)  # addcdiv: (value * m) / u
        t2 /= u
        pc += t2


class NAdam(_Moments):
    """NAdam as `torch.optim.NAdam`; state per parameter: step, mu_product, exp_avg,
    exp_avg_sq."""

    _scalars = ("mu_product",)

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        if not group["momentum_decay"] >= 0:
            raise ValueError(f"NAdam: invalid momentum_decay value: {group['momentum_decay']}")

    def _init_scalars(self, state):
        state["mu_product"] = 1.0

    def _constants(self, state, group):
        beta1, t, decay, lr = group["betas"][0], state["step"], group["momentum_decay"], group["lr"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * decay)))
        product = float(np.float32(state["mu_product"]) * np.float32(mu))  # as float32 tensor
        state["mu_product"] = product
        return (1 - group["betas"][1] ** t, -lr * (1.0 - mu) / (1.0 - product),
                (-lr * mu_next) / (1.0 - product * mu_next))

    def _step_arrays(self, pc, d, m, v, t2, t3, *, group, c):
        correction2, grad_value, avg_value = c
        _second_moment(v, d, group["betas"][1], t2)
        np.divide(v, correction2, out=t3)
        np.sqrt(t3, out=t3)
        t3 += group["eps"]
        np.multiply(d, grad_value, out=t2)  # two addcdivs: (value * x) / denom
        t2 /= t3
        pc += t2
        np.multiply(m, avg_value, out=t2)
        t2 /= t3
        pc += t2


class RAdam(_Moments):
    """RAdam as `torch.optim.RAdam`; state per parameter: step, exp_avg, exp_avg_sq."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _constants(self, state, group):
        (beta1, beta2), t = group["betas"], state["step"]
        correction1, correction2 = 1 - beta1 ** t, 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / correction2
        rect = None
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
        return correction1, correction2, rect

    def _step_arrays(self, pc, d, m, v, t2, t3, *, group, c):
        correction1, correction2, rect = c
        _second_moment(v, d, group["betas"][1], t2)
        np.divide(m, correction1, out=t2)
        t2 *= group["lr"]
        if rect is not None:  # the variance is tractable: Adam's step, rectified
            np.sqrt(v, out=t3)
            t3 += group["eps"]
            np.divide(correction2 ** 0.5, t3, out=t3)
            t2 *= t3
            t2 *= rect
        pc -= t2


__all__ = ["Adamax", "NAdam", "RAdam"]
