"""`gradcheck`: autograd's gradients against central differences, in float64."""
from __future__ import annotations

import numpy as np

from ..grad_mode import enable_grad, no_grad
from ..tensor import Tensor


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare autograd's gradient of `sum(fn(*inputs) * w)` with central differences in float64.

    `w` is a fixed random weighting, so every output element is checked, not just their sum.
    On failure the error names the input, the worst element's index and both values.
    """
    inputs = [x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x)) for x in inputs]
    for i, x in enumerate(inputs):
        if x.requires_grad and x._array.dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} has dtype {x._array.dtype}; use float64 "
                            f"(float32 rounding swamps a central difference)")
    with enable_grad():
        out = fn(*inputs)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(out.shape)

    def objective():
        with no_grad():
            return float(np.sum(fn(*inputs)._array * w))

    for x in inputs:
        x.grad = None
    with enable_grad():
        out = fn(*inputs)
        out.backward(Tensor._wrap(w.astype(out._array.dtype)))
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            continue
        analytic = np.zeros_like(x._array) if x.grad is None else x.grad._array
        numeric = np.zeros_like(x._array)
        arr = x._array  # perturbed in place, element by element, whatever its memory layout
        for j in np.ndindex(arr.shape):
            orig = arr[j]
            arr[j] = orig + eps
            plus = objective()
            arr[j] = orig - eps
            minus = objective()
            arr[j] = orig
            numeric[j] = (plus - minus) / (2 * eps)
        err = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
        if err.size and err.max() > 0:
            k = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), err.shape))
            if raise_exception:
                raise AssertionError(
                    f"gradcheck: input {i} (shape {x.shape}) gradient mismatch at index {k}: "
                    f"autograd {analytic[k]:.8g}, finite difference {numeric[k]:.8g}")
            return False
    return True
