"""The backward pass: gradients from an output back to every leaf behind it.

`backward()` visits the nodes `Op.apply` recorded (and those of custom `Function`s, which
function.py fits to this loop), from the output back to the leaves, each one after every node
that sends it gradient (newest first, from a queue, so that a chain of 100,000 ops needs no
recursion). The engine also fits every gradient to its input: an op may
return a gradient in the broadcast shape of its output, and the engine sums it back to the
input's shape; an op that computed in a promoted dtype (float32 with float64 gives float64)
returns that dtype, and the engine casts it back (a complex gradient of a real input to its
real part). Gradients arriving at one node along several paths are added up, into the first
one's array where nothing else refers to it (adoption.py). Anything else a node needs is a
one-line call into the module of the feature: version checks (versions.py), anomaly mode
(anomaly_mode.py), tensor hooks (hooks.py).
"""
from __future__ import annotations

from heapq import heappop, heappush

import numpy as np

from ..grad_mode import _state
from .adoption import accumulable
from .anomaly_mode import check_finite
from .op import AccumulateGrad, _node_of
from .hooks import run_pre_hooks
from .versions import check_versions

# while a profiler runs, its `timer(node, fn, *args)`: calls fn(*args), the node's backward, and
# times it (profiler/recorder.py); empty otherwise, so a node pays one falsy check
_backward_timers = []


def run_backward(tensor, grad, retain_graph=False):
    """Backpropagate `grad` (an array shaped like `tensor`) to every leaf behind `tensor`.

    A node runs once all its gradient has arrived, that is after every node created later
    (only those can send it gradient): the queue pops the most recently created node first.
    Each node's backward runs once its saved arrays are known to be there and unchanged; then
    they are freed (unless `retain_graph`), so memory is given back as the pass goes.
    """
    root = _node_of(tensor)
    grads, queue = {root: grad}, [(-root.sequence_nr, root)]
    anomaly = _state.anomaly
    while queue:
        node = heappop(queue)[1]
        g = grads.pop(node)
        if node.pre_hooks:
            g = run_pre_hooks(node, g)
        if node.__class__ is AccumulateGrad:
            if _backward_timers:
                _backward_timers[0](node, node.accumulate, g)
            else:
                node.accumulate(g)
            continue
        if node.saved is None:
            _raise_freed(node)
        if node.saved_versions:
            check_versions(node)
        if _backward_timers:
            in_grads = _backward_timers[0](node, node.backward, node, g)
        else:
            in_grads = node.backward(node, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if anomaly:
            check_finite(node, in_grads)
        if not retain_graph and node.saved:  # a node that saved nothing stays runnable,
            node.saved = None                # as PyTorch's nodes without saved tensors
        for child, ig in zip(node.next_nodes, in_grads):
            if child is not None and ig is not None:
                if ig.shape != child.out_shape or ig.dtype is not child.out_dtype:
                    ig = _fit(node, child, ig)
                prev = grads.get(child)  # hand_on(grads, queue, child, ig), inlined: per edge
                if prev is None:
                    grads[child] = ig
                    heappush(queue, (-child.sequence_nr, child))
                elif accumulable(prev):  # the table's alone: add into it (see adoption.py)
                    np.add(prev, ig, out=prev)
                else:
                    grads[child] = prev + ig
        in_grads = ig = prev = None  # the loop's only references: see adoption.adoptable


def hand_on(grads, queue, node, g):
    """Add `g` to the gradient `node` collects in `grads`; its first one puts the node in
    `queue`, where it waits until every node created after it has run."""
    prev = grads.get(node)
    if prev is None:
        grads[node] = g
        heappush(queue, (-node.sequence_nr, node))
    else:
        grads[node] = prev + g


def _raise_freed(node):
    raise RuntimeError(
        f"{node.name()}: Trying to backward through the graph a second time; its saved "
        f"values were freed by the first backward. Pass retain_graph=True to the first "
        f"backward if you need to backward twice")


def _fit(node, child, g):
    """The gradient `node` hands to `child`, in child's shape and dtype.

    Broadcasting in the forward copied an input along new leading axes and along axes of size
    1; each copy's gradient flows back to the same element, so those axes are summed. An op
    that computed in a promoted dtype returns that dtype, cast here to the input's own; a real
    input of an op that computed in complex gets the real part of its gradient. Any
    other mismatch is a bug of the op, reported as such rather than patched over.
    """
    shape, dtype = child.out_shape, child.out_dtype
    if g.shape != shape:
        axes = _broadcast_axes(node, shape, g)
        g = (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)
    if g.dtype != dtype:
        if g.dtype.kind == "c" and dtype.kind != "c":  # a real input of a complex op: the
            g = g.real                                 # real part is dL/dx (PyTorch's rule)
        elif g.dtype != node.out_dtype:
            raise RuntimeError(f"{node.name()}: returned a gradient of dtype {g.dtype} for an "
                               f"input of dtype {dtype} (its output has dtype {node.out_dtype})")
        g = g.astype(dtype)
    return g


def _broadcast_axes(node, shape, g):
    """The axes of `g` (a gradient from `node`, array or Tensor) to sum so that it fits an input
    of `shape`: its leading axes and those where the input had size 1. A gradient that no
    broadcast of `shape` could have produced is an error of the op."""
    lead = g.ndim - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, g.shape[lead:])):
        raise RuntimeError(f"{node.name()}: returned a gradient of shape {g.shape} for an "
                           f"input of shape {shape}")
    return tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
