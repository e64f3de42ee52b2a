"""Tensor hooks and `retain_grad`: pre-hooks of the node that receives a tensor's gradient; and
a leaf's post-accumulate hooks, run after its `.grad` has taken the gradient (an optimizer
step run during backward, one parameter at a time, is written with them)."""
from __future__ import annotations

import weakref

import numpy as np

from . import op as autograd_op
from .op import RemovableHandle


def add_pre_hook(node, hook):
    """Run `hook(grad)` when `node` receives its gradient; a returned tensor replaces it.
    Hooks run in registration order, and before `retain_grad`'s, as in PyTorch."""
    hooks = list(node.pre_hooks)
    hooks.insert(len(hooks) - (bool(hooks) and isinstance(hooks[-1], RetainGrad)), hook)
    node.pre_hooks = tuple(hooks)

    def remove():
        node.pre_hooks = tuple(h for h in node.pre_hooks if h is not hook)
    return RemovableHandle(remove)


def register_post_accumulate_grad_hook(tensor, hook):
    """Call `hook(tensor)` each time a backward pass has added into leaf `tensor`'s `.grad`
    (its return value is ignored). Returns a handle whose `remove()` unregisters it."""
    if tensor.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                           "tensors")
    if not tensor.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    node = autograd_op._node_of(tensor)
    node.post_hooks = node.post_hooks + (hook,)

    def remove():
        node.post_hooks = tuple(h for h in node.post_hooks if h is not hook)
    return RemovableHandle(remove)


def run_pre_hooks(node, g):
    """`g` after every pre-hook of `node` has seen it (and perhaps replaced it).

    `g` is an array, which the hooks see wrapped in a Tensor, or, when the backward pass is
    recorded (create_graph), a Tensor that the hooks see and may replace as it is."""
    tensor = autograd_op.Tensor
    recorded = isinstance(g, tensor)
    for hook in node.pre_hooks:
        new = hook(g if recorded else tensor._wrap(g))
        if new is not None:
            if not recorded:
                new = new._array if isinstance(new, tensor) else np.asarray(new)
            if new.shape != g.shape or new.dtype != g.dtype:
                raise RuntimeError(f"hook: a hook of {node.name()} returned a gradient of shape "
                                   f"{new.shape} and dtype {new.dtype}; expected shape {g.shape} "
                                   f"and dtype {g.dtype}")
            g = new
    return g


class RetainGrad:
    """The pre-hook `Tensor.retain_grad()` installs: adds the gradient to the tensor's `.grad`."""

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)  # the graph must not keep the tensor alive

    def __call__(self, g):
        t = self.ref()
        if t is not None:
            grad = g._array.copy() if t.grad is None else t.grad._array + g._array
            t.grad = autograd_op.Tensor._wrap(grad)
