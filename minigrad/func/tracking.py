"""How a transform makes its inputs differentiable and hands its results back.

A transform (grad, vjp, jvp, ...) runs the user's function on inputs that require grad, on
the one autograd tape. An input nobody outside is differentiating becomes a fresh leaf of the
transform's own (a detached copy that requires grad). An input that some outer computation
differentiates (an outer transform's input, a parameter under ordinary autograd) becomes a
view of it instead, so the outer computation can differentiate through this one: that is how
grad(grad(f)) and jacfwd(jacrev(f)) compose, and how a result of grad stays differentiable
with respect to a parameter that requires grad, as PyTorch's is.

A result that reaches nothing outside (only the transform's own leaves) is detached before
it is returned, so it does not require grad, as in PyTorch; when nothing outside is reached,
the backward pass is not recorded either (`create_graph` only when needed).
"""
from __future__ import annotations

import minigrad
from minigrad.autograd import AccumulateGrad


class Level:
    """The inputs of one call of a transform: which leaves are its own."""

    def __init__(self):
        self.outer = minigrad.is_grad_enabled()  # under no_grad, nothing outside is tracked
        self.own = {}  # id -> the transform's own leaves (kept alive while it runs)

    def track(self, x):
        if not isinstance(x, minigrad.Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
        with minigrad.enable_grad():
            if x.requires_grad and self.outer:
                return x.view_as(x)
            if not x.is_floating_point():
                raise RuntimeError("only Tensors of floating point dtype can require gradients")
            y = x.detach().requires_grad_(True)
        self.own[id(y)] = y
        return y

    def reaches_outside(self, t):
        """Whether `t`'s graph reaches a leaf that is not this level's own."""
        if not (self.outer and isinstance(t, minigrad.Tensor) and t.requires_grad):
            return False
        if t.grad_fn is None:
            return id(t) not in self.own
        stack, seen = [t.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                if id(node.variable) not in self.own:
                    return True
                continue
            stack.extend(n for n, _ in node.next_functions)
        return False

    def release(self, t):
        """`t` as the transform returns it: detached unless it reaches outside."""
        if isinstance(t, minigrad.Tensor) and t.requires_grad and not self.reaches_outside(t):
            return t.detach()
        return t


def gradients(level, outputs, inputs, cotangents, keep_graph):
    """d outputs / d inputs weighted by `cotangents` (one per output), an input nothing led to
    getting zeros; recorded when the result must stay differentiable from outside."""
    live = [(o, v) for o, v in zip(outputs, cotangents) if o.requires_grad]
    if not live:
        return [minigrad.zeros_like(x) for x in inputs]
    create = any(level.reaches_outside(o) for o, _ in live) or any(
        level.reaches_outside(v) for _, v in live)
    with minigrad.enable_grad():
        gs = minigrad.autograd.grad([o for o, _ in live], inputs, [v for _, v in live],
                                    retain_graph=keep_graph or create, create_graph=create,
                                    allow_unused=True)
    return [minigrad.zeros_like(x) if g is None else level.release(g)
            for g, x in zip(gs, inputs)]


def check_argnums(argnums, n_args):
    """argnums as a tuple of non-negative positions, with PyTorch's errors."""
    def bad():
        return RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if not all(isinstance(a, int) and not isinstance(a, bool) for a in argnums):
            raise bad()
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums = argnums
    elif isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    else:
        raise bad()
    for a in nums:
        if not -n_args <= a < n_args:
            raise RuntimeError(f"Got argnum={a}, but only {n_args} positional inputs")
    return tuple(a % n_args for a in nums)


def split_aux(output, has_aux, fn):
    """(output, aux) of a function called with has_aux (PyTorch's error for anything else)."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{fn}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return output


__all__ = ["Level", "check_argnums", "gradients", "split_aux"]
