"""`gradcheck` and `gradgradcheck`: autograd's first and second derivatives against central
differences, in float64, as `torch.autograd.gradcheck` and `torch.autograd.gradgradcheck`."""
from __future__ import annotations

import numpy as np

from ..functional import cat
from ..grad_mode import enable_grad
from ..tensor import Tensor
from .gradients import grad


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True) -> bool:
    """Compare autograd's gradient of `sum(fn(*inputs) * w)` with central differences in float64.

    `w` is a fixed random weighting, so every output element is checked, not just their sum.
    Complex inputs (complex128) and outputs are checked as torch.autograd.gradcheck checks
    them: a complex output is weighted by a complex `w` through the real loss
    sum(Re(conj(w) out)), whose gradient (PyTorch's convention) is dL/dx + i dL/dy; each
    complex input element is perturbed along its real and its imaginary part.
    On failure the error names the input, the worst element's index and both values.
    """
    inputs = [x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x)) for x in inputs]
    for i, x in enumerate(inputs):
        if x.requires_grad and x._array.dtype not in (np.float64, np.complex128):
            raise TypeError(f"gradcheck: input {i} has dtype {x._array.dtype}; use float64 "
                            f"or complex128 (float32 rounding swamps a central difference)")
    with enable_grad():
        out = fn(*inputs)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(out.shape)
    if out._array.dtype.kind == "c":
        w = w + 1j * rng.standard_normal(out.shape)

    def objective():
        # grad mode stays on, as in PyTorch: `fn` may itself take a gradient (gradgradcheck's
        # first derivative, a gradient penalty) and needs its graph recorded to do so
        with enable_grad():
            return float(np.sum(np.real(fn(*inputs)._array * np.conj(w))))

    saved = [x.grad for x in inputs]  # the caller's: PyTorch's gradcheck leaves .grad alone
    try:
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
            steps = (eps, 1j * eps) if arr.dtype.kind == "c" else (eps,)
            for j in np.ndindex(arr.shape):
                orig = arr[j]
                for step in steps:  # dL/dx, then i dL/dy for a complex element
                    arr[j] = orig + step
                    plus = objective()
                    arr[j] = orig - step
                    minus = objective()
                    arr[j] = orig
                    numeric[j] += (plus - minus) / (2 * eps) * (step / eps)
            err = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
            if err.size and err.max() > 0:
                k = tuple(int(i) for i in np.unravel_index(int(np.argmax(err)), err.shape))
                if raise_exception:
                    raise AssertionError(
                        f"gradcheck: input {i} (shape {x.shape}) gradient mismatch at index {k}: "
                        f"autograd {analytic[k]:.8g}, finite difference {numeric[k]:.8g}")
                return False
        return True
    finally:
        for x, g in zip(inputs, saved):
            x.grad = g


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, seed=0) -> bool:
    """Check the gradients of the vector-Jacobian products of `func` at `inputs`.

    The first derivative, grad(func(*inputs), inputs, grad_outputs, create_graph=True), is
    itself a function of the inputs and of `grad_outputs` (random float64 tensors drawn from
    `seed` when not given); `gradcheck` compares its gradient, which create_graph records,
    with central differences of it. Failing raises (or returns False) naming the input.
    """
    inputs = tuple(x if isinstance(x, Tensor) else Tensor._wrap(np.asarray(x)) for x in inputs)
    diff = [i for i, x in enumerate(inputs) if x.requires_grad]
    outputs = func(*inputs)
    outputs = (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = []
        for o in outputs:
            v = rng.standard_normal(o.shape)
            if gen_non_contig_grad_outputs and v.ndim:
                v = np.repeat(v, 2, axis=-1)[..., ::2]  # the same values, strided memory
            grad_outputs.append(Tensor._wrap(v.astype(o.dtype)).requires_grad_(True))
    grad_outputs = tuple(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        xs, vs = args[:n], args[n:]
        with enable_grad():  # whatever mode the caller of gradgradcheck is in
            outs = func(*xs)
            grads = grad(outs, [xs[i] for i in diff], vs, create_graph=True,
                         materialize_grads=True)
            return cat([g.reshape(-1) for g in grads])

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
