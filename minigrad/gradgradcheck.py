"""`gradgradcheck`: second derivatives (the backward of the backward) against central
differences of the first derivative, in float64, as `torch.autograd.gradgradcheck`."""
from __future__ import annotations

import numpy as np

from .grad_mode import enable_grad
from .gradcheck import gradcheck


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, seed=0) -> bool:
    """Check the gradients of the vector-Jacobian products of `func` at `inputs`.

    The first derivative, grad(func(*inputs), inputs, grad_outputs, create_graph=True), is
    itself a function of the inputs and of `grad_outputs` (random float64 tensors drawn from
    `seed` when not given); `gradcheck` compares its gradient, which create_graph records,
    with central differences of it. Failing raises (or returns False) naming the input.
    """
    from .autograd_grad import grad
    from .functional import cat
    from .tensor import Tensor

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
        with enable_grad():  # gradcheck evaluates it under no_grad for its differences
            outs = func(*xs)
            grads = grad(outs, [xs[i] for i in diff], vs, create_graph=True,
                         materialize_grads=True)
            return cat([g.reshape(-1) for g in grads])

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)


__all__ = ["gradgradcheck"]
