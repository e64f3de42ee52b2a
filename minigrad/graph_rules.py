"""Tensor-level backward rules: what each op's backward is, written with differentiable ops.

The first-order engine runs each op's array-level `backward(ctx, grad)`, the one a learner
reads first. With `create_graph=True` the engine runs the rule registered here instead: the
same formula on Tensors, so every product and sum of the backward pass is itself recorded,
and the gradient can be differentiated again (and again: the rules use ops that have rules).

A rule receives the node and the incoming gradient (a Tensor) and returns one gradient per
input, like `backward`. It reads the node's saved arrays back as Tensors attached to the
graph the way PyTorch unpacks a SavedVariable: an array that is input i of the node becomes a
Tensor whose gradient flows to `node.next_nodes[i]` (`saved_input`), the node's own output one
whose gradient flows to the node itself (`saved_output`). So nothing more is kept on the
first-order path than its backward already keeps.

The rules live by kind of op in `graph_rules_elementwise.py`, `graph_rules_reduce_shape.py`
and `graph_rules_nn.py` (imported by `minigrad`); a layer's own op registers its rule with
`rule` from its module. An op with no rule makes the engine raise an error naming it: a
second derivative is never silently wrong.
"""
from __future__ import annotations

from .autograd import op as autograd_op
from .autograd.op import AccumulateGrad

def registrar(table):
    """A decorator factory: `@decorator(*ops)` enters the decorated function in `table` as the
    rule of each op (an Op class), and leaves the function as it is."""
    def rule(*ops):
        def register(fn):
            for op in ops:
                table[op] = fn
            return fn
        return register
    return rule


RULES = {}
rule = registrar(RULES)  # @rule(*ops) over `fn(ctx, grad) -> gradients`: the tensor-level rule


def saved_input(ctx, i, array):
    """`array`, a value of input i of node `ctx`, as a Tensor whose gradient reaches that
    input: the leaf itself, a stand-in pointing to the input's node, or a constant if input i
    wants no gradient."""
    node = ctx.next_nodes[i] if i < len(ctx.next_nodes) else None
    t = autograd_op.Tensor._wrap(array)
    if node is None:
        return t
    if node.__class__ is AccumulateGrad:
        if node.variable._array is array:
            return node.variable
        t._acc = node  # a reshaped or reconstructed view of the leaf: gradients go to it
    else:
        t.grad_fn = node
    t._requires_grad = True
    return t


def saved_output(ctx, array):
    """The node's own output as a Tensor: its gradient flows back into the node itself."""
    t = autograd_op.Tensor._wrap(array.reshape(ctx.out_shape))
    t.grad_fn, t._requires_grad = ctx, True
    return t


def constant(array):
    """An array the rule uses as a constant (a mask, a count): no gradient flows to it."""
    return autograd_op.Tensor._wrap(array)


__all__ = ["RULES", "constant", "registrar", "rule", "saved_input", "saved_output"]
