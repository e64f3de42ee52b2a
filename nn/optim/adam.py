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

PyTorch's update (t counts from 1), which this reproduces up to float rounding
(maximize=True negates grad first):

    g = grad + weight_decay * p                   (Adam: L2 penalty inside the gradient)
    p = p * (1 - lr * weight_decay)               (AdamW instead: decay the weight directly)
    m = m + (1 - beta1) * (g - m)                 (= beta1 * m + (1 - beta1) * g)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v)                         (amsgrad: never let the denominator shrink)
    denom = sqrt(v or v_max) / sqrt(1 - beta2^t) + eps
    p = p - lr / (1 - beta1^t) * m / denom

The last line is computed as m / ((sqrt(v) + eps * c) / (-step_size * c)), c = sqrt(1 - beta2^t):
the same number with the scalar constants gathered, which saves one pass over the data.

Speed: with the "numba" kernel backend a float32 or float64 parameter is updated by one
compiled pass (`kernels.adam_step`), which reads each element of p, grad, m and v once and
gives the same bits as the NumPy formula (`kernels.reference.adam_step`). That formula, in
cache-sized slices or over small parameters batched into one flat array (below), is the path
of the "numpy" backend and of other dtypes.

AdamW ("decoupled weight decay", Loshchilov & Hutter) matters because with Adam's L2 term the
decay is divided by sqrt(v) like the gradient, so weights with large gradients barely decay;
AdamW shrinks every weight by the same factor.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from minigrad import kernels
from minigrad.kernels import reference
from minigrad.tensor import Tensor

from .optimizer import CHUNK, Optimizer

# Parameters up to this many elements are updated together as one flat array (biases, layer
# norms, the projections of a small model); larger ones are worth their own ufunc calls.
SMALL = 1 << 14
_COMPILED = (np.dtype(np.float32), np.dtype(np.float64))  # dtypes kernels.adam_step takes


class Adam(Optimizer):
    """Adam as `torch.optim.Adam`; state per parameter: step, exp_avg, exp_avg_sq(, max_...)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        # decoupled_weight_decay=True is AdamW (weight decay applied to p, not the gradient)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _check_group(self, group):
        super()._check_group(group)
        check_moments(type(self).__name__, group)

    def _update(self, p, grad, state, group):
        self._init_state(p, state, group)
        state["step"] += 1
        arrays = [state["exp_avg"]._array, state["exp_avg_sq"]._array]
        if group["amsgrad"]:
            arrays.append(state["max_exp_avg_sq"]._array)
        for pc, gc, *rest in self._slices(p, grad, *arrays, scratch=2):
            self._step_arrays(pc, gc, *rest, group=group, t=state["step"])

    def _update_params(self, params, group):
        """With the "numba" backend each float32/float64 parameter is one compiled pass; the
        rest go the NumPy way: small parameters together, as one flat array per dtype and
        step count (a small model's step would otherwise spend its time calling a dozen
        ufuncs per tiny parameter), large or non-contiguous ones slice by slice (`_update`)."""
        if kernels.get_backend() == "numba":
            params = self._update_compiled(params, group)
        together = defaultdict(list)
        for p in params:
            state = self.state[p]
            if p._array.size > SMALL or not p._array.flags.c_contiguous:
                self._update(p, self._grad(p, group), state, group)
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

    def _update_compiled(self, params, group):
        """Step with the compiled kernel every parameter it can take (float32/64,
        C-contiguous, its gradient of the same dtype), as one `kernels.adam_steps` call for
        the group (PyTorch's foreach form: the step's scalars worked out once, not per
        parameter); returns the others."""
        items, rest = [], []
        amsgrad, maximize, states = group["amsgrad"], group["maximize"], self.state
        for p in params:
            a, g = p._array, p.grad._array
            if a.dtype not in _COMPILED or g.dtype != a.dtype or not a.flags.c_contiguous:
                rest.append(p)
                continue
            state = states[p]
            if not state:
                self._init_state(p, state, group)
            state["step"] += 1
            # (_grad's negation inlined: this loop runs for every parameter at every step)
            items.append((a, np.negative(g) if maximize else g, state["exp_avg"]._array,
                          state["exp_avg_sq"]._array,
                          state["max_exp_avg_sq"]._array if amsgrad else None, state["step"]))
        if items:
            beta1, beta2 = group["betas"]
            kernels.adam_steps(items, group["lr"], beta1, beta2, group["eps"],
                               group["weight_decay"], group["decoupled_weight_decay"])
        return rest

    def _update_flat(self, params, group, t):
        """Step t of `params` (same dtype and step count) as one flat array, then copy back."""
        names = ["exp_avg", "exp_avg_sq"] + (["max_exp_avg_sq"] if group["amsgrad"] else [])
        flat = [np.concatenate([p._array.reshape(-1) for p in params]),
                np.concatenate([p.grad._array.reshape(-1) for p in params])]
        if group["maximize"]:  # the concatenation is a copy: negate it in place
            np.negative(flat[1], out=flat[1])
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
        *vmax, tmp, g2 = rest
        beta1, beta2 = group["betas"]
        c = reference.adam_constants(group["lr"], beta1, beta2, group["eps"],
                                     group["weight_decay"], group["decoupled_weight_decay"], t)
        reference.adam_step(pc, gc, m, v, vmax[0] if vmax else None, tmp, g2, *c,
                            group["amsgrad"])


def check_moments(name, group):
    """The hyper-parameters of Adam and its variants: eps, the pair betas, weight_decay."""
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


class AdamW(Adam):
    """AdamW as `torch.optim.AdamW`: Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
