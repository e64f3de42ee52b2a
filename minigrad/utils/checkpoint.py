"""Activation checkpointing (`minigrad.utils.checkpoint`, PyTorch's `torch.utils.checkpoint`):
`checkpoint(block, x)` runs the block without keeping the activations its backward would need,
and runs it again, with the graph recorded, when the gradient reaches it: memory for compute.

The second run draws the same random numbers as the first (dropout masks agree) because the
default generator's state is put back for it (`preserve_rng_state=True`). Its backward runs
inside the outer one and adds the block's parameter gradients to their `.grad`, as PyTorch's
reentrant variant does; so `autograd.grad` through a checkpoint does not return them."""
from __future__ import annotations

import warnings

from .. import random
from ..autograd import backward
from ..autograd.op import Op
from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from ..tensor import Tensor

__all__ = ["checkpoint"]


class _Recompute(Op):
    """The node standing for the checkpointed block: forward hands back the output computed
    under no_grad; backward runs the block again and back-propagates through that run."""

    @staticmethod
    def forward(ctx, *arrays, output=None, rerun=None):
        ctx.save_for_backward(*arrays)  # changed in place before backward: an error, not a
        ctx.rerun = rerun               # gradient of other values
        return output

    @staticmethod
    def backward(ctx, g):
        return ctx.rerun(ctx.saved, g)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True, **kwargs):
    """`function(*args, **kwargs)`, a block returning one tensor, without its activations kept.

    use_reentrant=False: the block's parameters get gradients even when no tensor argument
    requires grad. use_reentrant=True (PyTorch's behaviour when the argument is left out,
    which warns, as PyTorch does): the output requires grad only if an argument does."""
    if use_reentrant is None:
        warnings.warn("checkpoint: the use_reentrant parameter should be passed explicitly; "
                      "use_reentrant=False is recommended (left out, it is True, as in "
                      "PyTorch)", UserWarning, stacklevel=2)
        use_reentrant = True
    tensors = [a for a in args if isinstance(a, Tensor)]
    wanted = is_grad_enabled() and (not use_reentrant or any(t.requires_grad for t in tensors))
    if use_reentrant and is_grad_enabled() and not wanted:
        warnings.warn("checkpoint: none of the inputs have requires_grad=True; gradients will "
                      "be None", UserWarning, stacklevel=2)
    state = random.get_rng_state() if preserve_rng_state else None
    with no_grad():
        out = function(*args, **kwargs)
    if not wanted:
        return out
    if not isinstance(out, Tensor):
        raise TypeError(f"checkpoint: the function must return one tensor, got "
                        f"{type(out).__name__}")

    def rerun(arrays, g):
        """The gradients of the tensor arguments, from a second run of the block."""
        leaves = [Tensor._wrap(a.copy()).requires_grad_(t.requires_grad)
                  for a, t in zip(arrays, tensors)]
        again = iter(leaves)
        call_args = [next(again) if isinstance(a, Tensor) else a for a in args]
        outer_state = random.get_rng_state()
        if state is not None:
            random.set_rng_state(state)
        try:
            with enable_grad():
                redone = function(*call_args, **kwargs)
        finally:
            random.set_rng_state(outer_state)
        if redone.requires_grad:
            backward(redone, Tensor._wrap(g))
        grads = [None if leaf.grad is None else leaf.grad._array for leaf in leaves]
        return tuple(grads) + (None,)

    # an extra input that requires grad records the node even when no argument does (the
    # parameters inside still need their gradients: use_reentrant=False)
    anchor = Tensor._wrap(out._array[:0].reshape(-1)).requires_grad_(True)
    return _Recompute.apply(*tensors, anchor, output=out._array, rerun=rerun)
