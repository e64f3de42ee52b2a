"""The engine's general form: `autograd.grad`, `autograd.backward(inputs=)` and create_graph.

`engine.run_backward` is the first-order core: one output, gradients as arrays, every leaf's
`.grad` filled. This layer above it runs the same schedule (the newest node first) with three
more choices:

- several outputs at once, each with its own gradient;
- `capture`: the gradient reaching chosen nodes is handed back instead of accumulated, and the
  pass runs only the nodes that lead to them (what `grad` and `backward(inputs=)` need);
- `create_graph`: the gradients are Tensors and each node runs its *tensor-level* rule
  (`minigrad.graph_rules`), written with differentiable ops, so the backward pass is recorded
  like any computation and its result can be differentiated again (a Hessian-vector product,
  a gradient penalty). The array-level `backward` of each op stays what the first-order path
  runs; nothing here costs the first-order path anything.
"""
from __future__ import annotations

import contextlib
from heapq import heappop

import numpy as np

from ..grad_mode import _state, enable_grad
from ..graph_rules import RULES  # filled by the rule modules, which `minigrad` imports
from .anomaly_mode import check_finite
from .engine import _backward_timers, _broadcast_axes, _fit, _raise_freed, hand_on
from .op import AccumulateGrad
from .hooks import run_pre_hooks
from .versions import check_versions


def execute(roots, retain_graph=False, create_graph=False, capture=None):
    """Backpropagate from `roots`, a list of (node, gradient) pairs.

    Gradients are arrays, or Tensors when `create_graph`. `capture`: None (accumulate into
    every leaf's `.grad`, as `backward` does), or a dict whose keys are nodes: the gradient
    reaching each is stored as its value, and no `.grad` is touched.
    """
    grads, queue = {}, []
    for node, g in roots:
        hand_on(grads, queue, node, g)
    needed = None if capture is None else _leading_to(grads, capture)
    anomaly = _state.anomaly
    with enable_grad() if create_graph else contextlib.nullcontext():
        while queue:
            node = heappop(queue)[1]
            g = grads.pop(node)
            if node.pre_hooks:
                g = run_pre_hooks(node, g)
            if capture is not None and node in capture:
                capture[node] = g
                if not any(c in needed for c in node.next_nodes):
                    continue  # nothing asked for lies behind this node
            if node.__class__ is AccumulateGrad:
                if capture is None:
                    accumulate = _accumulate_tensor if create_graph else AccumulateGrad.accumulate
                    if _backward_timers:
                        _backward_timers[0](node, accumulate, node, g)
                    else:
                        accumulate(node, g)
                continue
            if node.saved is None:
                _raise_freed(node)
            if node.saved_versions:
                check_versions(node)
            rule = _tensor_rule(node, g) if create_graph else node.backward
            if _backward_timers:  # a profiler is running: time the node (engine.py)
                in_grads = _backward_timers[0](node, rule, node, g)
            else:
                in_grads = rule(node, g)
            if not isinstance(in_grads, tuple):
                in_grads = (in_grads,)
            if anomaly:
                check_finite(node, [None if ig is None else np.asarray(ig) for ig in in_grads])
            if not retain_graph and node.saved:  # a node that saved nothing stays runnable,
                node.saved = None                # as PyTorch's nodes without saved tensors
            for child, ig in zip(node.next_nodes, in_grads):
                if child is None or ig is None or (needed is not None and child not in needed):
                    continue
                if ig.shape != child.out_shape or ig.dtype != child.out_dtype:
                    ig = _fit_tensor(node, child, ig) if create_graph else _fit(node, child, ig)
                hand_on(grads, queue, child, ig)


def _leading_to(roots, targets):
    """The nodes from which some node of `targets` can be reached (targets included): only
    those need to run. An iterative depth-first walk, so deep graphs need no recursion."""
    leads, seen = set(), set()
    stack = [(n, False) for n in roots]
    while stack:
        node, done = stack.pop()
        if done:
            if node in targets or any(c in leads for c in node.next_nodes):
                leads.add(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        stack.append((node, True))
        stack.extend((c, False) for c in node.next_nodes if c is not None and c not in seen)
    return leads


def _tensor_rule(node, g):
    if node.tensor_level:  # written on Tensors itself (a custom Function's node)
        return node.backward
    if g.dtype.kind == "c" or any(getattr(s, "dtype", None) is not None and s.dtype.kind == "c"
                                  for s in node.saved):
        # the tensor-level rules are written for real tensors: they lack the conjugates
        raise RuntimeError(f"{node.name()}: create_graph=True through complex tensors is not "
                           f"supported (their first derivatives are: use create_graph=False)")
    rule = RULES.get(node.__class__)
    if rule is None:
        raise RuntimeError(
            f"{node.name()}: create_graph=True needs a differentiable backward, and this op has "
            f"none (its backward works on arrays only), so its gradient cannot be "
            f"differentiated again. Use create_graph=False, or an op with a rule "
            f"(see minigrad.graph_rules)")
    return rule


def _fit_tensor(node, child, g):
    """`engine._fit` for a Tensor gradient: the broadcast axes summed and the dtype cast by
    differentiable ops, so the fitting is recorded too."""
    shape, dtype = child.out_shape, child.out_dtype
    if g.shape != shape:
        axes = _broadcast_axes(node, shape, g)
        g = (g.sum(dim=axes, keepdim=True) if axes else g).reshape(shape)
    if g.dtype != dtype:
        g = (g.real if g.dtype.kind == "c" and dtype.kind != "c" else g).to(dtype)
    return g


def _accumulate_tensor(node, g):
    """AccumulateGrad under create_graph: `.grad` becomes (or adds) the recorded gradient."""
    t = node.variable
    if g.shape != t.shape or g.dtype != t.dtype:
        raise RuntimeError(f"AccumulateGrad: a gradient of shape {g.shape} and dtype "
                           f"{g.dtype} reached a leaf of shape {t.shape} and dtype {t.dtype}")
    if t.grad is None:
        # a broadcast view or an array someone else holds would be written by `grad +=`
        t.grad = g.clone() if g.grad_fn is not None else g.detach().clone()
    else:
        t.grad = t.grad + g
    for hook in node.post_hooks:
        hook(t)
