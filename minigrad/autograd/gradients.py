"""`autograd.grad` and `autograd.backward`: PyTorch's two entry points to the engine.

`grad(outputs, inputs)` returns d(outputs)/d(inputs) and leaves every `.grad` alone;
`backward(tensors, inputs=...)` accumulates into `.grad`, of the given tensors only. Both run
`graph_engine.execute`, which with `create_graph=True` records the backward pass itself.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..ops.shape import Stack
from . import op as autograd_op
from .op import _node_of
from .graph_engine import execute


def _as_tuple(x):
    return (x,) if x is None or isinstance(x, autograd_op.Tensor) else tuple(x)


def _roots(op, outputs, grad_outputs, create_graph):
    """(node, gradient) per output, PyTorch's checks on the way: each output requires grad,
    each gradient matches its output's shape, a non-scalar output needs one."""
    Tensor = autograd_op.Tensor
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"{op}: got {len(grad_outputs)} grad_outputs for {len(outputs)} "
                           f"outputs; give one per output (None for a scalar)")
    roots = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, Tensor):
            raise TypeError(f"{op}: output {i} is a {type(out).__name__}, not a Tensor")
        if not out.requires_grad:
            raise RuntimeError(f"{op}: element {i} of tensors does not require grad and does "
                               f"not have a grad_fn")
        if g is None:
            if out._array.size != 1:
                raise RuntimeError(f"{op}: grad can be implicitly created only for scalar "
                                   f"outputs; output {i} has shape {out.shape}, so give its "
                                   f"grad_outputs")
            g = Tensor._wrap(np.ones(out.shape, dtype=out.dtype))
        elif not isinstance(g, Tensor):
            g = Tensor._wrap(np.asarray(g, dtype=out.dtype))
        if g.shape != out.shape:
            raise RuntimeError(f"{op}: mismatch in shape: grad_output[{i}] has a shape of "
                               f"{g.shape} and output[{i}] has a shape of {out.shape}")
        if g.dtype != out.dtype:
            g = g.to(out.dtype)
        roots.append((_node_of(out), g if create_graph else np.array(g._array)))
    return roots


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs`, as a tuple (one per input),
    returned rather than accumulated: no `.grad` changes, not even a leaf's.

    grad_outputs: the gradient of each output (the v of a vector-Jacobian product); None for
    a scalar output means 1. With `create_graph` the result is recorded and can be
    differentiated again. An input the outputs do not depend on is an error unless
    `allow_unused` (its gradient is then None, or zeros with `materialize_grads`).
    `is_grads_batched`: the first dim of every grad_output is a batch of vectors, and each
    result gets that dim (computed one vector at a time).
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("grad: expected allow_unused to be True or not passed when "
                         "materialize_grads=True")
    allow_unused = bool(allow_unused) or materialize_grads
    outputs, inputs = _as_tuple(outputs), _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("grad: requires at least one input tensor")
    if is_grads_batched:
        return _batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                        materialize_grads)
    for i, x in enumerate(inputs):
        if not isinstance(x, autograd_op.Tensor):
            raise TypeError(f"grad: input {i} is a {type(x).__name__}, not a Tensor")
        if not x.requires_grad:
            raise RuntimeError(f"grad: one of the differentiated Tensors (input {i}, shape "
                               f"{x.shape}) does not require grad")
    grad_outputs = None if grad_outputs is None else _as_tuple(grad_outputs)
    roots = _roots("grad", outputs, grad_outputs, create_graph)
    nodes = [_node_of(x) for x in inputs]
    capture = dict.fromkeys(nodes)
    execute(roots, create_graph if retain_graph is None else retain_graph, create_graph, capture)
    result = []
    for i, (x, node) in enumerate(zip(inputs, nodes)):
        g = capture[node]
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"grad: one of the differentiated Tensors (input {i}, shape "
                                   f"{x.shape}) appears to not have been used in the graph. "
                                   f"Set allow_unused=True if this is the desired behavior.")
            result.append(autograd_op.Tensor._wrap(np.zeros(x.shape, x.dtype))
                          if materialize_grads else None)
        elif create_graph:
            result.append(g)
        else:
            result.append(autograd_op.Tensor._wrap(np.array(g)))  # its own memory, as PyTorch's
    return tuple(result)


def _batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
             materialize_grads):
    if grad_outputs is None:
        raise RuntimeError("grad: is_grads_batched=True needs grad_outputs")
    grad_outputs = _as_tuple(grad_outputs)
    n = {len(g) for g in grad_outputs}
    if len(n) != 1:
        raise RuntimeError(f"grad: with is_grads_batched=True every grad_output needs the same "
                           f"first dim, got sizes {sorted(n)}")
    rows, count = [], n.pop()
    for b in range(count):  # the graph is kept for the next vector, and then as asked
        keep = True if b < count - 1 else retain_graph
        rows.append(grad(outputs, inputs, tuple(g[b] for g in grad_outputs), keep, create_graph,
                         allow_unused=allow_unused, materialize_grads=materialize_grads))
    return tuple(None if col[0] is None else Stack.apply(*col, dim=0) for col in zip(*rows))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate the gradients of `tensors` into `.grad`: of every leaf behind them, or of
    `inputs` only (leaves or not). `retain_graph` defaults to `create_graph`; with
    `create_graph` each `.grad` is recorded and can be differentiated again. `grad_variables`
    is grad_tensors' old name (deprecated in PyTorch), accepted with its warning."""
    if grad_variables is not None:
        warnings.warn("`grad_variables` is deprecated. Use `grad_tensors` instead.",
                      FutureWarning, stacklevel=2)
        if grad_tensors is not None:
            raise RuntimeError("`grad_tensors` and `grad_variables` (deprecated) arguments both "
                               "passed to `backward()`. Please only use `grad_tensors`.")
        grad_tensors = grad_variables
    tensors = _as_tuple(tensors)
    grad_tensors = None if grad_tensors is None else _as_tuple(grad_tensors)
    roots = _roots("backward", tensors, grad_tensors, create_graph)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        execute(roots, retain, create_graph)
        return
    inputs = _as_tuple(inputs)
    if not inputs:
        raise RuntimeError("backward: inputs argument was passed as an empty sequence; leave "
                           "it None to accumulate into every leaf")
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            raise RuntimeError(f"backward: input {i} (shape {x.shape}) does not require grad")
    capture = dict.fromkeys(_node_of(x) for x in inputs)
    execute(roots, retain, create_graph, capture)
    for x in dict.fromkeys(inputs):  # each tensor once, even if listed twice
        g = capture[_node_of(x)]
        if g is None or x.retains_grad:  # retain_grad's hook has already added it
            continue
        if not create_graph:
            g = autograd_op.Tensor._wrap(np.array(g))
        if g.shape != x.shape:
            raise RuntimeError(f"backward: a gradient of shape {g.shape} reached an input of "
                               f"shape {x.shape}")
        x.grad = g if x.grad is None else x.grad + g
        for hook in getattr(x._acc, "post_hooks", ()):   # (a leaf's: see hooks.py)
            hook(x)
    return None


__all__ = ["backward", "grad"]
