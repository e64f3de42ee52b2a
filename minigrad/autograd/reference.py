"""The backward pass in its plainest form: the reference the real engine is tested against.

`minigrad.autograd.run_backward` is this algorithm plus what a library needs: a queue instead of
a sort (no recursion, and nodes are visited newest first without ordering the whole graph),
saved arrays freed as soon as their node has run, checks that nothing saved was changed in
place, hooks, `retain_grad` and anomaly mode. This module keeps only the algorithm, so that a
learner can hold it in their head, and tests run both on the same graphs to show that what the
real engine adds changes no number.

    grads = reference_backward(loss)        # {leaf tensor: gradient array}
"""
from __future__ import annotations

import numpy as np

from .op import AccumulateGrad


def topological_order(root):
    """Every node behind `root`, each after all the nodes it sends gradient to (its inputs'
    nodes), so that reversed it visits a node only when all of its gradient has arrived."""
    order, seen = [], set()

    def visit(node):
        if node is None or node in seen:
            return
        seen.add(node)
        for child in node.next_nodes:
            visit(child)
        order.append(node)
    visit(root)
    return order


def fit(g, shape, dtype):
    """Sum a gradient over the axes broadcasting added or stretched, then cast it back."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and g.shape[lead + i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape).astype(dtype, copy=False)


def reference_backward(tensor, grad=None):
    """d(tensor)/d(leaf) for every leaf behind `tensor`, as {leaf tensor: array}. The graph is
    left as it was (saved arrays are not freed), and no `.grad` is touched."""
    root = tensor.grad_fn or tensor._acc
    if root is None:
        raise RuntimeError("reference_backward: the tensor does not require grad")
    grads = {root: np.ones(tensor.shape, tensor.dtype) if grad is None else grad}
    leaves = {}
    for node in reversed(topological_order(root)):
        g = grads.pop(node, None)
        if g is None:  # no gradient reached it (every path to it carried None)
            continue
        if isinstance(node, AccumulateGrad):
            leaves[node.variable] = g
            continue
        in_grads = node.backward(node, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        for child, ig in zip(node.next_nodes, in_grads):
            if child is None or ig is None:
                continue
            ig = fit(np.asarray(ig), child.out_shape, child.out_dtype)
            grads[child] = grads[child] + ig if child in grads else ig  # paths add up
    return leaves
