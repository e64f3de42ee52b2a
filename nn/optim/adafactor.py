"""Adafactor (Shazeer & Stern), as `torch.optim.Adafactor`: Adam's second moment in sublinear
memory, with a step relative to the weights' own scale.

For a matrix gradient (R, C) (the last two dims of any gradient of 2 or more), only the row
and column means of g * g are averaged ('row_var' (R, 1), 'col_var' (1, C)); their outer
product divided by the mean of the rows estimates the full (R, C) second moment, the rank-1
factorisation that makes a (R + C)-sized state do for R * C. Vectors keep a full 'variance'.
The averages' weight 1 - beta2_t = t ** beta2_decay decays with the step (no bias correction
needed); there is no first moment. The step is relative: rho_t = min(lr, 1 / sqrt(t)) times
the weights' RMS (at least eps[1]), and the update is scaled down when its RMS exceeds `d`.

PyTorch's update (t counts from 1; eps[0] defaults to the dtype's machine epsilon, fixed by
the group's first parameter; maximize=True negates grad first):

    alpha = max(eps2, rms(p)) * min(lr, t ** -0.5);  p = p * (1 - lr * weight_decay)
    row = lerp(row, |g|_row ** 2 / C, t ** beta2_decay)   (and col alike; vectors: var)
    v = (row @ col) / max(mean(row), eps1)                (vectors: var)
    u = g / sqrt(max(v, eps1 ** 2));  p = p - alpha / max(1, rms(u) / d) * u
"""
from __future__ import annotations

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import Optimizer, lerp_


class Adafactor(Optimizer):
    """Adafactor as `torch.optim.Adafactor`; state per parameter: step, and row_var and
    col_var (gradients of 2 or more dims) or variance (vectors)."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _check_group(self, group):
        eps1, eps2 = group["eps"]
        checks = [
            (group["lr"] >= 0, f"learning rate should be >= 0 but is: {group['lr']}"),
            (group["beta2_decay"] <= 0,
             f"beta2_decay should be <= 0 but is: {group['beta2_decay']}"),
            (eps1 is None or eps1 >= 0, f"epsilon1 should be >= 0 but is: {eps1}"),
            (eps2 >= 0, f"epsilon2 should be >= 0 but is: {eps2}"),
            (group["d"] >= 1.0, f"clipping threshold d should be >= 1 but is: {group['d']}"),
            (group["weight_decay"] >= 0,
             f"weight_decay should be >= 0 but is: {group['weight_decay']}")]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"Adafactor: {message}")
        super()._check_group(group)

    def _update_params(self, params, group):
        eps1 = group["eps"][0]
        for p in params:
            if eps1 is None:  # PyTorch: the first parameter's dtype decides for the group
                eps1 = float(np.finfo(p._array.dtype).eps)
            self._step_one(p, self._grad(p, group), self.state[p], group, eps1)

    def _step_one(self, p, grad, state, group, eps1):
        data = p._array
        if not state:
            state["step"] = 0
            if grad.ndim > 1:
                state["row_var"] = Tensor._wrap(np.zeros(grad.shape[:-1] + (1,), data.dtype))
                col_shape = grad.shape[:-2] + (1,) + grad.shape[-1:]
                state["col_var"] = Tensor._wrap(np.zeros(col_shape, data.dtype))
            else:
                state["variance"] = Tensor._wrap(np.zeros(grad.shape, data.dtype))
        state["step"] += 1
        t, lr = float(state["step"]), group["lr"]
        weight = t ** group["beta2_decay"]
        rho_t = min(lr, 1 / (t ** 0.5))
        rms = float(np.sqrt((data * data).sum())) / data.size ** 0.5
        alpha = max(group["eps"][1], rms) * rho_t
        if group["weight_decay"] != 0:
            data *= 1 - lr * group["weight_decay"]
        if grad.ndim > 1:
            row, col = state["row_var"]._array, state["col_var"]._array
            g2 = grad * grad
            row_mean = np.sqrt(g2.sum(-1, keepdims=True)) ** 2 / grad.shape[-1]  # norm ** 2
            lerp_(row, row_mean, weight, np.empty_like(row))
            col_mean = np.sqrt(g2.sum(-2, keepdims=True)) ** 2 / grad.shape[-2]
            lerp_(col, col_mean, weight, np.empty_like(col))
            estimate = row @ col
            estimate /= np.maximum(row.mean(-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._array
            lerp_(variance, grad * grad, weight, np.empty_like(variance))
            estimate = variance.copy()
        np.maximum(estimate, eps1 * eps1, out=estimate)
        update = 1 / np.sqrt(estimate)  # rsqrt
        update *= grad
        denom = max(1.0, float(np.sqrt((update * update).sum())) / (update.size ** 0.5
                                                                      * group["d"]))
        data += update * (-alpha / denom)

    def _load_value(self, key, value, p):
        """The factored moments have their own shapes: (..., R, 1) and (..., 1, C)."""
        if key not in ("row_var", "col_var"):
            return super()._load_value(key, value, p)
        shape = p._array.shape
        want = shape[:-1] + (1,) if key == "row_var" else shape[:-2] + (1,) + shape[-1:]
        arr = np.asarray(value._array if isinstance(value, Tensor) else value)
        if arr.shape != want or arr.dtype.kind != "f":
            raise ValueError(f"Adafactor.load_state_dict: state '{key}' should be a float "
                             f"array of shape {want} for a parameter of shape {shape}, got "
                             f"{arr.dtype} {arr.shape}")
        return Tensor._wrap(arr.astype(p._array.dtype, copy=True))


__all__ = ["Adafactor"]
