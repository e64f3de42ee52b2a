"""Adam and AdamW: gradient descent with a per-weight step size.

Adam keeps two exponential moving averages per weight: of the gradient (m, the "first moment",
a momentum) and of the squared gradient (v, the "second moment", how large gradients on this
weight usually are). It steps along m / sqrt(v): weights with consistently large gradients take
smaller steps, rarely-updated weights larger ones, and the step is roughly lr whatever the
scale of the loss.

Bias correction. m and v start at zero, so after t steps m_t = (1 - beta1) * sum of beta1^(t-i)
g_i, whose weights sum to 1 - beta1^t, not 1: early averages are too small (after one step
with beta1 = 0.9, m is 0.1 * g). Dividing by (1 - beta1^t), and v by (1 - beta2^t), undoes
that shrinkage; as t grows the corrections tend to 1 and fade away.

PyTorch's update (t counts from 1), which this reproduces up to float rounding:

    g = grad + weight_decay * p                   (Adam: L2 penalty inside the gradient)
    p = p * (1 - lr * weight_decay)               (AdamW instead: decay the weight directly)
    m = m + (1 - beta1) * (g - m)                 (= beta1 * m + (1 - beta1) * g)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)                         (amsgrad: never let the denominator shrink)
    denom = sqrt(v or v_max) / sqrt(1 - beta2^t) + eps
    p = p - lr / (1 - beta1^t) * m / denom

The last line is computed as m / ((sqrt(v) + eps * c) / (-step_size * c)), c = sqrt(1 - beta2^t):
the same number with the scalar constants gathered, which saves one pass over the data.

AdamW ("decoupled weight decay", Loshchilov & Hutter) matters because with Adam's L2 term the
decay is divided by sqrt(v) like the gradient, so weights with large gradients barely decay;
AdamW shrinks every weight by the same factor.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from minigrad.tensor import Tensor

from .optimizer import CHUNK, Optimizer

# Parameters up to this many elements are updated together as one flat array (biases, layer
# norms, the projections of a small model); larger ones are worth their own ufunc calls.
SMALL = 1 << 14


class Adam(Optimizer):
    """Adam as `torch.optim.Adam`; state per parameter: step, exp_avg, exp_avg_sq(, max_...)."""

    _decoupled = False  # AdamW sets True: weight decay applied to p rather than to the gradient

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        name = type(self).__name__
        if not group["eps"] >= 0:
            raise ValueError(f"{name}: invalid epsilon value: {group['eps']}")
        betas = group["betas"]
        if len(betas) != 2:
            raise ValueError(f"{name}: betas must be a pair (beta1, beta2), got {betas!r}")
        for i, b in enumerate(betas):
            if not 0.0 <= b < 1.0:
                raise ValueError(f"{name}: invalid beta parameter at index {i}: {b}")
        if not group["weight_decay"] >= 0:
            raise ValueError(f"{name}: invalid weight_decay value: {group['weight_decay']}")

    def _update(self, p, grad, state, group):
        self._init_state(p, state, group)
        state["step"] += 1
        arrays = [state["exp_avg"]._array, state["exp_avg_sq"]._array]
        if group["amsgrad"]:
            arrays.append(state["max_exp_avg_sq"]._array)
        for pc, gc, *rest in self._slices(p, grad, *arrays, scratch=2):
            self._step_arrays(pc, gc, *rest, group=group, t=state["step"])

    def _update_params(self, params, group):
        """Small parameters are updated together, as one flat array per dtype and step count:
        a small model's step would otherwise spend its time calling a dozen ufuncs per tiny
        parameter. Large or non-contiguous ones go through `_update`, slice by slice."""
        together = defaultdict(list)
        for p in params:
            state = self.state[p]
            if p._array.size > SMALL or not p._array.flags.c_contiguous:
                self._update(p, p.grad._array, state, group)
                continue
            self._init_state(p, state, group)
            together[p._array.dtype, state["step"]].append(p)
        for (_, step), ps in together.items():
            batch, size = [], 0
            for p in ps + [None]:  # None flushes the last batch
                if p is None or size + p._array.size > CHUNK:
                    if batch:
                        self._update_flat(batch, group, step + 1)
                    batch, size = [], 0
                if p is not None:
                    batch.append(p)
                    size += p._array.size

    def _update_flat(self, params, group, t):
        """Step t of `params` (same dtype and step count) as one flat array, then copy back."""
        names = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if group["amsgrad"] else [])
        flat = [np.concatenate([p._array.reshape(-1) for p in params]),
                np.concatenate([p.grad._array.reshape(-1) for p in params])]
        flat += [np.concatenate([self.state[p][k]._array.reshape(-1) for p in params])
                 for k in names]
        scratch = np.empty((2, flat[0].size), flat[0].dtype)
        self._step_arrays(*flat, *scratch, group=group, t=t)
        start = 0
        for p in params:
            state, n = self.state[p], p._array.size
            np.copyto(p._array, flat[0][start:start + n].reshape(p._array.shape))
            for k, arr in zip(names, flat[2:]):
                np.copyto(state[k]._array, arr[start:start + n].reshape(p._array.shape))
            state["step"] = t
            start += n

    def _init_state(self, p, state, group):
        if not state:  # lazily, so parameters that never get a gradient cost no memory
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))
            state["exp_avg_sq"] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._wrap(np.zeros(p._array.shape, p._array.dtype))

    def _step_arrays(self, pc, gc, m, v, *rest, group, t):
        """Step t of Adam on matching arrays (parameter, gradient, m, v[, v_max]), in place;
        the last two of `rest` are scratch arrays of the same size."""
        lr, eps, wd, amsgrad = group["lr"], group["eps"], group["weight_decay"], group["amsgrad"]
        beta1, beta2 = group["betas"]
        *vmax, tmp, g2 = rest
        step_size = lr / (1 - beta1 ** t)
        c = math.sqrt(1 - beta2 ** t)
        # step_size * m / (sqrt(v) / c + eps) == m / ((sqrt(v) + eps * c) / (step_size * c)):
        # the same update with the constants gathered, so one pass over the data fewer.
        eps_c = eps * c
        inv_step = -1.0 / (step_size * c) if step_size else 0.0
        if wd != 0 and self._decoupled:
            pc *= 1 - lr * wd
        elif wd != 0:  # g + wd * p in scratch: the gradient itself must not change
            np.multiply(pc, wd, out=g2)
            g2 += gc
            gc = g2
        # m = lerp(m, g, 1 - beta1)
        np.subtract(gc, m, out=tmp)
        tmp *= 1 - beta1
        m += tmp
        # v = beta2 * v + (1 - beta2) * g * g
        np.multiply(gc, 1 - beta2, out=tmp)
        tmp *= gc
        v *= beta2
        v += tmp
        if amsgrad:
            np.maximum(vmax[0], v, out=vmax[0])
        if not step_size:  # lr == 0 (a schedule's first step, say) only moves m and v
            return
        np.sqrt(vmax[0] if amsgrad else v, out=tmp)
        tmp += eps_c
        tmp *= inv_step
        np.divide(m, tmp, out=tmp)
        pc += tmp


class AdamW(Adam):
    """AdamW as `torch.optim.AdamW`: Adam with decoupled weight decay (default 1e-2)."""

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad)
