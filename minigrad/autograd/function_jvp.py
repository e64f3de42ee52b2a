"""Forward mode through a custom `autograd.Function`: its `jvp` staticmethod, as PyTorch's.

    class Sin(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_forward(x)
            return x.sin()

        @staticmethod
        def jvp(ctx, t):                  # one tangent per forward input (zeros if it has
            (x,) = ctx.saved_tensors      # none, None for a non-tensor); save_for_forward's
            return t * x.cos()            # tensors; one tangent per output

Inside `forward_ad.dual_level()` the library's ops get their tangents from a record hook
(forward_ad.py) and their rule (`minigrad.jvp_rules`); a custom Function's node is left to
`Function.apply`, which calls `run_jvp` once its outputs are attached: jvp sees every input's
tangent and gives every output's at once, as PyTorch's does. An input forward changed in place
(`mark_dirty`) must have its tangent changed in place too, and be returned.
"""
from __future__ import annotations

import numpy as np

from ..grad_mode import no_grad
from . import forward_ad
from . import op as autograd_op
from .op import _node_of

__all__ = ["run_jvp"]


def run_jvp(ctx, args, outs):
    """Give the outputs `outs` (a tuple, as forward returned them, attached) the tangents
    `ctx`'s jvp computes from those of `args`, if a dual level is open and an input has one."""
    tangents = forward_ad.tangents_now()
    if tangents is None:
        return
    Tensor = autograd_op.Tensor
    # the inputs' nodes as forward found them (a dirty input's grad_fn is ctx by now)
    ins = [None if n is None else tangents.get(n) for n in ctx.next_nodes]
    if all(t is None for t in ins):
        return
    ins = [Tensor._wrap(t) if t is not None else
           Tensor._wrap(np.zeros(a._array.shape, a._array.dtype)) if isinstance(a, Tensor)
           else None for a, t in zip(args, ins)]
    ctx._jvp_running = True
    try:
        with no_grad():
            result = ctx._forward_cls.jvp(ctx, *ins)
    finally:
        ctx._jvp_running = False
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(result)})")
    dirty = {id(d): i for i, d in enumerate(args) if any(d is t for t in ctx.dirty_tensors)}
    for i, (o, t) in enumerate(zip(outs, result)):
        if t is None:
            continue
        if not isinstance(t, Tensor):
            raise RuntimeError(f"expected Variable or None (got {type(t).__name__}) for grad "
                               f"output {i}.")
        if not isinstance(o, Tensor) or o.grad_fn is None:
            raise RuntimeError(f"Function's jvp returned a gradient at position {i}, but  the "
                               f"corresponding forward output is not a differentiable Tensor."
                               f"You should return None at that position instead.")
        if t.shape != o.shape:
            raise RuntimeError(f"Trying to set a forward gradient that has a different size "
                               f"than that of the original Tensor, this is not supported. "
                               f"Tensor is of size {list(o.shape)} while the given forward "
                               f"gradient is of size {list(t.shape)}.")
        if id(o) in dirty and t._array is not ins[dirty[id(o)]]._array:
            raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                               "gradients inplace. If the forward is modifying an input "
                               "inplace, then the jvp function must modify the corresponding "
                               "gradient inplace.")
        tangents[_node_of(o)] = t._array if id(o) in dirty else np.asarray(t._array, o.dtype)
