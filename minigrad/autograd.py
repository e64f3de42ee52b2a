"""Reverse-mode automatic differentiation.

Every differentiable op is a small `Function` subclass with a `forward(ctx, ...)` that works on
NumPy arrays and a `backward(ctx, grad)` right beside it. `SomeOp.apply(...)` runs the forward
and, when a gradient is wanted, records `ctx` as a *node*: the output's `grad_fn`, pointing to
the nodes of its inputs (`next_nodes`). `backward()` visits the nodes from the output back to
the leaves, each one after every node that sends it gradient (newest first, from a queue, so
that a chain of 100,000 ops needs no recursion).

The core is two short functions, `Function.apply` and `run_backward`. The engine also fits
every gradient to its input: an op may return a gradient in the broadcast shape of its output,
and the engine sums it back to the input's shape; an op that computed in a promoted dtype
(float32 with float64 gives float64) returns that dtype, and the engine casts it back. Anything
else a node needs is a named helper or a hook owned by the feature that needs it: views share
version counters, saved arrays remember versions, tensor hooks and `retain_grad` are pre-hooks
of a node, anomaly mode and the graph renderer (`minigrad.viz`) add record hooks.
"""
from __future__ import annotations

import functools
import itertools
import sys
import threading
import traceback
import weakref
from heapq import heappop, heappush

import numpy as np

from ._refcount import SOLE_REFCOUNT, private_memory
from .grad_mode import (_state, _Switch, current_module_path, enable_grad,  # noqa: F401
                        is_grad_enabled, module_scope, no_grad)

Tensor = None  # the Tensor class: tensor.py imports this module, then registers itself here
_sequence = itertools.count()  # numbers nodes in order of creation (PyTorch's sequence_nr)
_new = object.__new__  # makes a node without calling __init__ (a Function has none to call)


# --- record hooks: features that want to know about every node as it is created ---------------

_record_hooks = []


class RemovableHandle:
    """What `add_record_hook` and `Tensor.register_hook` return: `remove()` unregisters."""

    def __init__(self, remove):
        self._remove = remove

    def remove(self):
        self._remove()


def add_record_hook(hook):
    """Call `hook(node, output)` whenever an op records a node (viz and anomaly mode use it)."""
    _record_hooks.append(hook)
    return RemovableHandle(lambda: hook in _record_hooks and _record_hooks.remove(hook))


# --- graph nodes ------------------------------------------------------------------------------

class Node:
    """A vertex of the graph: it receives the gradient of one tensor and passes it on."""

    __slots__ = ()
    next_nodes = ()  # per input: the node its gradient goes to, or None (no gradient wanted)
    pre_hooks = ()   # `hook(grad)` run as the gradient arrives (tensor hooks, retain_grad)

    @property
    def next_functions(self):
        """PyTorch's view of `next_nodes`: (node, 0) pairs."""
        return tuple((n, 0) for n in self.next_nodes)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object>"


class AccumulateGrad(Node):
    """The graph's sink for a leaf tensor: adds incoming gradients into `variable.grad`."""

    __slots__ = ("variable", "pre_hooks", "out_shape", "out_dtype", "sequence_nr",
                 "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.pre_hooks = ()
        self.sequence_nr = -1 - next(_sequence)  # below every op node's: leaves come last
        # the gradient's shape and dtype; `Tensor.data = ...` updates them
        self.out_shape, self.out_dtype = variable._array.shape, variable._array.dtype

    def accumulate(self, g):
        """Add `g` into the leaf's `.grad`: gradients add up across backward calls, as in PyTorch."""
        t = self.variable
        if g.shape != t._array.shape or g.dtype != t._array.dtype:
            raise RuntimeError(f"AccumulateGrad: a gradient of shape {g.shape} and dtype "
                               f"{g.dtype} reached a leaf of shape {t.shape} and dtype {t.dtype}")
        if t.grad is None:
            # the engine may hand one array to several leaves, or an array someone else still
            # holds: it is copied unless nothing but this call refers to it (as PyTorch's
            # AccumulateGrad steals a gradient nobody else uses), which saves a copy of
            # every parameter's gradient per step
            sole = sys.getrefcount(g) <= SOLE_REFCOUNT and private_memory(g)
            t.grad = Tensor._wrap(g if sole else g.copy())
        else:
            t.grad._array = t.grad._array + g


class Function(Node):
    """Base class of every op. Subclasses define `forward(ctx, *args)` and `backward(ctx, grad)`.

    `forward` receives NumPy arrays in place of tensors and returns one array. `backward` gets
    the gradient of the output and returns one gradient (or None) per positional argument: in
    the input's shape or in a shape the input was broadcast to (the engine sums the broadcast
    axes), in the input's dtype or in the output's (the engine casts it).
    """

    saved = ()           # arrays kept for backward; None once backward has freed them
    saved_versions = ()  # (version counter, version when saved, shape) of tensors saved

    def save_for_backward(self, *arrays):
        """Keep arrays for backward; in-place changes to them before backward are detected."""
        self.saved = arrays

    @property
    def saved_tensors(self):
        return self.saved

    @property
    def needs_input_grad(self):
        """Per positional argument, whether its gradient is wanted (backward may skip the rest)."""
        return tuple([n is not None for n in self.next_nodes])

    def name(self) -> str:
        return type(self).__name__ + "Backward"

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run `forward` on the arrays inside `args`; record a node if a gradient is wanted."""
        ctx = _new(cls)
        # each input's node (its grad_fn, or its leaf's accumulator) is known before forward
        # runs, as in PyTorch, so that forward can leave unsaved what no gradient will need.
        # One loop finds the arrays and the nodes: this runs for every op, so it is kept lean.
        arrays, nodes, wanted = list(args), [None] * len(args), False
        grad_enabled = _state.grad_enabled
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                arrays[i] = a._array
                if grad_enabled and a._requires_grad:
                    nodes[i] = a.grad_fn or a._acc or _node_of(a)
                    wanted = True
        ctx.next_nodes = tuple(nodes)
        arr = cls.forward(ctx, *arrays, **kwargs)
        out = _new(Tensor)  # Tensor._wrap, inlined
        out._array = arr = arr if isinstance(arr, np.ndarray) else np.asarray(arr)
        out._vc = [0]
        if arr.base is not None:
            _share_version_counter(out, args)
        if wanted and arr.dtype.kind == "f":  # ints carry no gradient; ctx becomes out's node
            ctx.sequence_nr, ctx.out_shape, ctx.out_dtype = next(_sequence), arr.shape, arr.dtype
            if ctx.saved:
                _snapshot_versions(ctx, args, out)
            if _record_hooks:
                for hook in _record_hooks:
                    hook(ctx, out)
            out.grad_fn, out._requires_grad = ctx, True
        return out

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses define forward")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Function subclasses define backward")


def _node_of(t):
    """The node gradients flow into for tensor `t`: its grad_fn, or its leaf accumulator."""
    if t.grad_fn is not None:
        return t.grad_fn
    if t._acc is None:
        t._acc = AccumulateGrad(t)
    return t._acc


def _root(a):
    """The array that owns `a`'s memory (NumPy points every view's `base` at the owner)."""
    return a if a.base is None else a.base


def _share_version_counter(out, args):
    """A view shares its base's version counter (as in PyTorch, whatever the grad mode), so an
    in-place change through the view is seen by every node that saved the base, and back."""
    base = out._array.base
    for a in args:
        if isinstance(a, Tensor) and (a._array is base or a._array.base is base):
            out._vc = a._vc
            return


def _snapshot_versions(ctx, args, out):
    """Remember the version of the tensor each saved array belongs to. A plain NumPy operand
    has no version counter, so a saved array of its memory is copied instead."""
    versions, saved, arr = [], ctx.saved, out._array
    for i, s in enumerate(saved):
        if s is arr:
            x = out
        elif not isinstance(s, np.ndarray):  # None, a number: nothing that can change
            continue
        else:
            for x in args:  # usually an input as it came (searched here: this runs per op)
                if x is s or (isinstance(x, Tensor) and x._array is s):
                    break
            else:
                x = _view_owner(s, args, out)
        if isinstance(x, Tensor):
            versions.append((x._vc, x._vc[0], x._array.shape))
        elif x is not None:
            saved = saved[:i] + (s.copy(),) + saved[i + 1:]
    ctx.saved, ctx.saved_versions = saved, versions


def _view_owner(s, args, out):
    """The operand (tensor or array) that `s` is a view of (a reshape inside forward, say),
    found through NumPy's `base`; None if `s` is new memory."""
    root = _root(s)
    for x in (*args, out):
        a = x._array if isinstance(x, Tensor) else x
        if isinstance(a, np.ndarray) and _root(a) is root:
            return x
    return None


# --- the engine -------------------------------------------------------------------------------

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
            g = _run_pre_hooks(node, g)
        if node.__class__ is AccumulateGrad:
            node.accumulate(g)
            continue
        if node.saved is None:
            _raise_freed(node)
        if node.saved_versions:
            _check_versions(node)
        in_grads = node.backward(node, g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
        if anomaly:
            _check_finite(node, in_grads)
        if not retain_graph:
            node.saved = None
        for child, ig in zip(node.next_nodes, in_grads):
            if child is not None and ig is not None:
                if ig.shape != child.out_shape or ig.dtype is not child.out_dtype:
                    ig = _fit(node, child, ig)
                prev = grads.get(child)
                if prev is None:
                    grads[child] = ig
                    heappush(queue, (-child.sequence_nr, child))
                else:
                    grads[child] = prev + ig
        in_grads = ig = None  # so that a leaf can take its gradient without a copy


def _raise_freed(node):
    raise RuntimeError(
        f"{node.name()}: trying to backward through the graph a second time; its saved "
        f"values were freed by the first backward. Pass retain_graph=True to the first "
        f"backward if you need to backward twice")


def _check_versions(node):
    for counter, version, shape in node.saved_versions:
        if counter[0] != version:
            raise RuntimeError(
                f"{node.name()}: a tensor of shape {shape} needed for backward was modified "
                f"in place (version {version} when saved, now {counter[0]}); clone it before "
                f"changing it, or change it after backward")


def _fit(node, child, g):
    """The gradient `node` hands to `child`, in child's shape and dtype.

    Broadcasting in the forward copied an input along new leading axes and along axes of size
    1; each copy's gradient flows back to the same element, so those axes are summed. An op
    that computed in a promoted dtype returns that dtype, cast here to the input's own. Any
    other mismatch is a bug of the op, reported as such rather than patched over.
    """
    shape, dtype = child.out_shape, child.out_dtype
    lead = g.ndim - len(shape)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, g.shape[lead:])):
        raise RuntimeError(f"{node.name()}: returned a gradient of shape {g.shape} for an "
                           f"input of shape {shape}")
    if g.shape != shape:
        axes = tuple(range(lead)) + tuple(
            lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
        g = (g.sum(axis=axes, keepdims=True) if axes else g).reshape(shape)
    if g.dtype != dtype:
        if g.dtype != node.out_dtype:
            raise RuntimeError(f"{node.name()}: returned a gradient of dtype {g.dtype} for an "
                               f"input of dtype {dtype} (its output has dtype {node.out_dtype})")
        g = g.astype(dtype)
    return g


# --- tensor hooks and retain_grad: pre-hooks of the node that receives the tensor's gradient ---

def add_pre_hook(node, hook):
    """Run `hook(grad)` when `node` receives its gradient; a returned tensor replaces it.
    Hooks run in registration order, and before `retain_grad`'s, as in PyTorch."""
    hooks = list(node.pre_hooks)
    hooks.insert(len(hooks) - (bool(hooks) and isinstance(hooks[-1], RetainGrad)), hook)
    node.pre_hooks = tuple(hooks)

    def remove():
        node.pre_hooks = tuple(h for h in node.pre_hooks if h is not hook)
    return RemovableHandle(remove)


def _run_pre_hooks(node, g):
    for hook in node.pre_hooks:
        new = hook(Tensor._wrap(g))
        if new is not None:
            new = new._array if isinstance(new, Tensor) else np.asarray(new)
            if new.shape != g.shape or new.dtype != g.dtype:
                raise RuntimeError(f"hook: a hook of {node.name()} returned a gradient of shape "
                                   f"{new.shape} and dtype {new.dtype}; expected shape {g.shape} "
                                   f"and dtype {g.dtype}")
            g = new
    return g


class RetainGrad:
    """The pre-hook `Tensor.retain_grad()` installs: it adds the gradient to the tensor's `.grad`."""

    def __init__(self, tensor):
        self.ref = weakref.ref(tensor)  # the graph must not keep the tensor alive

    def __call__(self, g):
        t = self.ref()
        if t is not None:
            t.grad = Tensor._wrap(g._array.copy() if t.grad is None else t.grad._array + g._array)


# --- anomaly detection ----------------------------------------------------------------------

class detect_anomaly(_Switch):
    """While on, a backward producing NaN or inf names the op and where the user created it."""

    _users = 0
    _lock = threading.Lock()

    def __init__(self):
        super().__init__("anomaly", True)

    def __enter__(self):
        with detect_anomaly._lock:  # the creation-site hook is installed while any thread uses it
            if detect_anomaly._users == 0:
                _record_hooks.append(_remember_creation_site)
            detect_anomaly._users += 1
        super().__enter__()

    def __exit__(self, *exc):
        super().__exit__()
        with detect_anomaly._lock:
            detect_anomaly._users -= 1
            if detect_anomaly._users == 0:
                _record_hooks.remove(_remember_creation_site)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly():
                return fn(*args, **kwargs)
        return wrapper


def _remember_creation_site(node, out):
    if _state.anomaly:
        node.creation_site = traceback.extract_stack()[:-3]


def _check_finite(node, in_grads):
    if all(g is None or np.all(np.isfinite(g)) for g in in_grads):
        return
    trace = getattr(node, "creation_site", None)
    where = "".join(traceback.format_list(trace[-3:])) if trace else "  (unknown)\n"
    raise RuntimeError(f"detect_anomaly: {node.name()} returned NaN or inf in its gradient "
                       f"(output shape {node.out_shape}); the op was created at:\n{where}")


from .gradcheck import gradcheck  # noqa: E402,F401  (torch.autograd.gradcheck)
# the engine's general form (grad, backward(inputs=, create_graph=)), its Jacobian helpers and
# forward mode live in modules of their own; PyTorch reaches them as torch.autograd.*
from . import autograd_functional as functional, forward_ad  # noqa: E402,F401
from .autograd_grad import backward, grad  # noqa: E402,F401
from .gradgradcheck import gradgradcheck  # noqa: E402,F401
sys.modules[__name__ + ".functional"] = functional  # `import minigrad.autograd.functional`,
sys.modules[__name__ + ".forward_ad"] = forward_ad  # as os.path is registered by os
