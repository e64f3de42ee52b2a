"""`minigrad.func`, as `torch.func`: transforms that take a function and return a function.

    grad, grad_and_value   the gradient of a scalar function (reverse.py)
    vjp                    the output and a function v -> v^T J (reverse.py)
    jvp, linearize         J t, and a function t -> J t (forward.py, by double vjp)
    jacrev, jacfwd         whole Jacobians, row by row or column by column (jacobians.py)
    hessian                jacfwd of jacrev (jacobians.py)
    vmap                   a function of one example mapped over a batch, as a loop (vmap.py,
                           randomness.py, writes.py)
    functional_call        a module run with given parameters and buffers
                           (minigrad.nn.utils.stateless)
    stack_module_state     several models' parameters stacked, for vmap (ensembling.py)

All of them run on minigrad's one tape (how a transform tracks its inputs: tracking.py), so
they compose: vmap(grad(loss)) gives per-example gradients, jacfwd(jacrev(f)) a Hessian.
Arguments and results may be nested tuples, lists and dicts of tensors (pytree.py).
"""
from minigrad.nn.utils.stateless import functional_call

from .ensembling import stack_module_state
from .forward import jvp, linearize
from .jacobians import hessian, jacfwd, jacrev
from .reverse import grad, grad_and_value, vjp
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "stack_module_state", "vjp", "vmap"]
