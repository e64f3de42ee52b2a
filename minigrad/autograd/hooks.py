"""Tensor hooks and `retain_grad`: pre-hooks of the node that receives a tensor's gradient."""
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
