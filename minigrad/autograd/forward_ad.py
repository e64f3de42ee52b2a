"""Forward-mode automatic differentiation with dual numbers, as `torch.autograd.forward_ad`.

    with forward_ad.dual_level():
        x = forward_ad.make_dual(primal, tangent)   # x carries a tangent t
        y = f(x)                                    # each op also computes its J t
        y_primal, jvp = forward_ad.unpack_dual(y)   # jvp = J_f(primal) t

Reverse mode gets a whole gradient (one row of J per output) from one backward pass: cheap for
a loss. Forward mode gets one column of J (J t) per pass, alongside the forward computation:
cheap for a function of one input and many outputs.

How tangents ride along: while a level is open, a record hook of the engine sees every op
recorded, and computes the output's tangent from the inputs' with the op's rule
(`minigrad.jvp_rules`). A dual tensor therefore requires grad (so its ops are recorded), and
ops run under `no_grad` carry no tangent. Nothing of this runs unless a level is open.
"""
from __future__ import annotations

import collections
import threading

import numpy as np

from ..grad_mode import is_grad_enabled
from . import op as autograd_op
from .op import AccumulateGrad, _node_of, add_record_hook

UnpackedDualTensor = collections.namedtuple("UnpackedDualTensor", ["primal", "tangent"])

_lock = threading.Lock()
_level = None  # the open level, or None


class _Level:
    def __init__(self):
        self.tangents = {}  # node of a dual tensor -> its tangent (an array)
        self.forced = set()  # accumulators of the leaves make_dual made require grad
        self.handle = add_record_hook(self.record)

    def record(self, node, out):
        """The record hook: the tangent of `out` from those of the node's inputs."""
        tangents = self.tangents
        if not tangents:
            return
        ts = [None if n is None else tangents.get(n) for n in node.next_nodes]
        if all(t is None for t in ts):
            return
        from ..jvp_rules import JVP_RULES  # the rules import the ops
        rule = JVP_RULES.get(node.__class__)
        if rule is None:
            if node.tensor_level:  # a custom Function's node: Function.apply runs its jvp
                error = node.forward_ad_error()  # (function_jvp.py); others say what is missing
                if error is None:
                    return
                raise error
            raise RuntimeError(f"{type(node).__name__}: forward-mode "
                               f"AD has no rule for this op (see minigrad.jvp_rules); compute "
                               f"this derivative with reverse mode (autograd.functional.jvp)")
        t = rule(node, out._array, ts)
        if t is not None:
            tangents[node] = np.asarray(t, dtype=out.dtype).reshape(out.shape)


def tangents_now():
    """The open level's table (node of a dual tensor -> its tangent array), or None."""
    level = _level
    return None if level is None else level.tangents


class dual_level:
    """Context manager: a forward-AD level. Dual tensors and their tangents live until it
    closes (then `unpack_dual` gives no tangent). Levels do not nest, as in PyTorch."""

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()
        return False


def enter_dual_level():
    global _level
    with _lock:
        if _level is not None:
            raise RuntimeError("enter_dual_level: nested forward mode AD is not supported")
        _level = _Level()
    return 0


def exit_dual_level(*, level=None):
    global _level
    with _lock:
        if _level is None:
            raise RuntimeError("exit_dual_level: no forward AD level is open")
        _level.handle.remove()
        _level = None


def make_dual(tensor, tangent, *, level=None):
    """`tensor` carrying `tangent` (same shape; cast to tensor's dtype) in the open level.
    The result shares tensor's memory; if tensor requires grad it stays in its graph."""
    if _level is None:
        raise RuntimeError("make_dual: no forward AD level is open; use "
                           "`with forward_ad.dual_level():`")
    Tensor = autograd_op.Tensor
    if not is_grad_enabled():
        raise RuntimeError("make_dual: forward mode records its ops, so it needs grad mode "
                           "on; call make_dual outside no_grad()")
    if tensor.dtype.kind != "f":
        raise ValueError(f"make_dual: expected a floating point primal, got dtype {tensor.dtype}")
    t = tangent._array if isinstance(tangent, Tensor) else np.asarray(tangent)
    if t.shape != tensor.shape:
        raise ValueError(f"make_dual: the tangent of shape {t.shape} does not match the primal "
                         f"of shape {tensor.shape}")
    if tensor.requires_grad:
        dual = tensor.reshape(tensor.shape)  # a view in the graph, with a node of its own
    else:
        dual = tensor.detach()
        dual._requires_grad = True
        _level.forced.add(_node_of(dual))
    _level.tangents[_node_of(dual)] = t.astype(tensor.dtype, copy=True)
    return dual


def unpack_dual(tensor, *, level=None):
    """(primal, tangent): the tensor's values and its tangent (None if it has none). The
    primal is outside the forward-mode bookkeeping: it requires grad only if the tensor
    depends on a tensor that required grad before make_dual."""
    Tensor = autograd_op.Tensor
    if _level is None or not tensor.requires_grad:
        return UnpackedDualTensor(tensor, None)
    node = _node_of(tensor)
    t = _level.tangents.get(node)
    primal = tensor if _reaches_a_real_leaf(node, _level.forced) else tensor.detach()
    return UnpackedDualTensor(primal, None if t is None else Tensor._wrap(t))


def _reaches_a_real_leaf(node, forced):
    stack, seen = [node], set()
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        if n.__class__ is AccumulateGrad:
            if n not in forced:
                return True
            continue
        stack.extend(n.next_nodes)
    return False


__all__ = ["UnpackedDualTensor", "dual_level", "enter_dual_level", "exit_dual_level",
           "make_dual", "unpack_dual"]
