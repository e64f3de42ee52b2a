"""Graph nodes and `Op.apply`, which runs an op and records its node.

Every differentiable op is a small `Op` subclass with a `forward(ctx, ...)` that works on
NumPy arrays and a `backward(ctx, grad)` right beside it. `SomeOp.apply(...)` runs the forward
and, when a gradient is wanted, records `ctx` as a *node*: the output's `grad_fn`, pointing to
the nodes of its inputs (`next_nodes`). A leaf tensor's node is its `AccumulateGrad`, which adds
the gradients reaching it into `.grad`. The backward pass over these nodes is in engine.py.
"""
from __future__ import annotations

import itertools
import threading

import numpy as np

from ..grad_mode import _state, threads_without_grad
from .adoption import adoptable
from .node_names import node_name
from .views import note_plain_view, note_view
from .versions import share_version_counter, snapshot_versions, track_indices, unwrap_indices

Tensor = None  # the Tensor class, set by `register_tensor_class` (tensor.py imports this module)
_sequence = itertools.count()  # numbers nodes in order of creation (PyTorch's sequence_nr)
_new = object.__new__  # makes a node without calling __init__ (a Op has none to call)
_ndarray = np.ndarray  # a global, not `np.ndarray`: one attribute lookup less for every op


def register_tensor_class(cls):
    """Called once by tensor.py: the class `apply` wraps its outputs in."""
    global Tensor
    Tensor = cls


# --- record hooks: features that want to know about every node as it is created ---------------

_record_hooks = []


class RemovableHandle:
    """What `add_record_hook` and `Tensor.register_hook` return: `remove()` unregisters."""

    def __init__(self, remove):
        self._remove = remove

    def remove(self):
        self._remove()


def add_record_hook(hook):
    """Call `hook(node, output)` whenever an op records a node, until the handle removes it."""
    _record_hooks.append(hook)
    return RemovableHandle(lambda: hook in _record_hooks and _record_hooks.remove(hook))


_apply_hooks = []
_enter_hooks = []  # `hook(cls, args)` before an op's forward runs: the profiler's start point


def add_apply_hook(hook):
    """Call `hook(cls, args, kwargs, out)` after every op applied, recorded or not: the ONNX
    exporter traces a model's ops this way."""
    _apply_hooks.append(hook)
    return RemovableHandle(lambda: hook in _apply_hooks and _apply_hooks.remove(hook))


class SharedRecordHook:
    """A record hook installed while at least one user holds it (the users of a `with` block
    in any thread: anomaly mode, the graph renderer's `recording`), so that ops recorded
    outside every such block pay nothing for it."""

    def __init__(self, hook):
        self.hook, self.users, self.lock = hook, 0, threading.Lock()

    def acquire(self):
        with self.lock:
            if self.users == 0:
                _record_hooks.append(self.hook)
            self.users += 1

    def release(self):
        with self.lock:
            self.users -= 1
            if self.users == 0:
                _record_hooks.remove(self.hook)


# --- instance layout --------------------------------------------------------------------------

def share_attribute_layout(cls, names):
    """Put `names` in the table of attribute names that CPython shares among the instances of
    `cls`, by setting them once on a throwaway instance when the class is made.

    CPython (3.11 on) keeps an instance's attributes in a compact array indexed by a table of
    names shared by its class, and only the first few dozen instances may add names to that
    table. An instance given a name the table lacks gets a dict of its own, which costs about
    1.5 thousand instructions to make, and more to read and to free. A program makes
    thousands of tensors (and op nodes under `no_grad`) before an op records its first node,
    so without this every recorded output would get a dict for its `grad_fn`. Only speed
    depends on it: the attributes behave the same either way."""
    obj = _new(cls)
    for name in names:
        setattr(obj, name, None)


# attributes `apply`, the engine and `register_hook` set on nodes
_NODE_ATTRIBUTES = ("next_nodes", "saved", "sequence_nr", "out_shape", "out_dtype",
                    "saved_versions", "pre_hooks")


# --- graph nodes ------------------------------------------------------------------------------

class Node:
    """A vertex of the graph: it receives the gradient of one tensor and passes it on."""

    __slots__ = ()
    next_nodes = ()  # per input: the node its gradient goes to, or None (no gradient wanted)
    pre_hooks = ()   # `hook(grad)` run as the gradient arrives (tensor hooks, retain_grad)
    tensor_level = False  # True: its `backward` also takes and returns Tensors, recording
                          # them under create_graph (a custom Function's node: function.py)

    @property
    def next_functions(self):
        """PyTorch's view of `next_nodes`: (node, output number) pairs."""
        return tuple((None, 0) if n is None else n.edge for n in self.next_nodes)

    @property
    def edge(self):
        """(node, output number) of the gradients this node receives: (self, 0), unless it
        receives one output's gradient for a node with several (function_nodes.py)."""
        return (self, 0)

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad(Node):
    """The graph's sink for a leaf tensor: adds incoming gradients into `variable.grad`."""

    __slots__ = ("variable", "pre_hooks", "post_hooks", "out_shape", "out_dtype", "sequence_nr",
                 "__weakref__")

    def __init__(self, variable):
        self.variable = variable
        self.pre_hooks = ()
        self.post_hooks = ()   # register_post_accumulate_grad_hook's: hook(tensor), after
        self.sequence_nr = -1 - next(_sequence)  # below every op node's: leaves come last
        # the gradient's shape and dtype; `Tensor.data = ...` updates them
        self.out_shape, self.out_dtype = variable._array.shape, variable._array.dtype

    def accumulate(self, g):
        """Add `g` into the leaf's `.grad`: gradients add up across backward calls (PyTorch's)."""
        t = self.variable
        if g.shape != t._array.shape or g.dtype != t._array.dtype:
            raise RuntimeError(f"AccumulateGrad: a gradient of shape {g.shape} and dtype "
                               f"{g.dtype} reached a leaf of shape {t.shape} and dtype {t.dtype}")
        if t.grad is None:
            t.grad = Tensor._wrap(g if adoptable(g) else g.copy())
        else:
            t.grad._array = t.grad._array + g
        for hook in self.post_hooks:
            hook(t)


class Op(Node):
    """Base class of every op. Subclasses define `forward(ctx, *args)` and `backward(ctx, grad)`.

    `forward` receives NumPy arrays in place of tensors and returns one array. `backward` gets
    the gradient of the output and returns one gradient (or None) per positional argument: in
    the input's shape or in a shape the input was broadcast to (the engine sums the broadcast
    axes), in the input's dtype or in the output's (the engine casts it).
    """

    saved = ()           # arrays kept for backward; None once backward has freed them
    saved_versions = ()  # per tensor saved: (version counter, version then, shape or index)
    takes_indices = False  # keyword tensors are index data kept as attributes (versions.py)
    complex_aware = False  # may give a complex result: its backward follows PyTorch's complex
                           # convention (complex_tensors.py); others refuse complex results

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        share_attribute_layout(cls, _NODE_ATTRIBUTES)  # every op class's nodes (see there)

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
        """PyTorch's name for this node: `MulBackward0` (see node_names.py)."""
        return node_name(self)

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run `forward` on the arrays inside `args`; record a node if a gradient is wanted."""
        if _enter_hooks:  # a profiler is running (profiler/recorder.py): the op's start time
            for hook in _enter_hooks:
                hook(cls, args)
        ctx = _new(cls)
        # each input's node (its grad_fn, or its leaf's accumulator) is known before forward
        # runs, as in PyTorch, so that forward can leave unsaved what no gradient will need.
        # One loop finds the arrays and the nodes: this runs for every op, so it is kept lean.
        arrays, nodes, wanted = [], [], False
        grad_enabled = not threads_without_grad[0] or _state.grad_enabled  # (grad_mode.py)
        for a in args:
            node = None
            if isinstance(a, Tensor):
                if grad_enabled and a._requires_grad:
                    node = a.grad_fn or a._acc or _node_of(a)
                    wanted = True
                a = a._array
            arrays.append(a)
            nodes.append(node)
        ctx.next_nodes = tuple(nodes)
        indices = unwrap_indices(kwargs, Tensor) if cls.takes_indices else None
        arr = cls.forward(ctx, *arrays, **kwargs)
        out = _new(Tensor)  # Tensor._wrap, inlined
        out._array = arr = arr if isinstance(arr, _ndarray) else np.asarray(arr)
        out._vc = [0]
        if arr.base is not None:
            parent = share_version_counter(out, args, arrays)
            if parent is None:  # a view of memory no input has: the result's own
                out._owns_memory = True
            elif len(args) == 1:
                if grad_enabled:
                    note_view(out, parent, cls, kwargs)  # an in-place write can now rebase it
                else:
                    note_plain_view(out, parent)
        dtype = arr.dtype  # (read once: each read of an array's dtype makes a call)
        kind = dtype.kind
        if kind == "c" and not cls.complex_aware:
            complex_unsupported(cls, args)
        if wanted and kind in "fc":  # ints carry no gradient; ctx becomes out's node
            ctx.sequence_nr, ctx.out_shape, ctx.out_dtype = next(_sequence), arr.shape, dtype
            if ctx.saved:
                snapshot_versions(ctx, args, arrays, out)
            if indices:
                track_indices(ctx, indices, Tensor)
            if _record_hooks:
                for hook in _record_hooks:
                    hook(ctx, out)
            out.grad_fn, out._requires_grad = ctx, True
        if _apply_hooks:
            for hook in _apply_hooks:
                hook(cls, args, kwargs, out)
        return out

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Op subclasses define forward")

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("Op subclasses define backward")


def complex_unsupported(cls, args):
    """The error of an op that has not been made complex-aware, given complex operands: its
    backward would give wrong gradients (no conjugates), so it refuses to run at all."""
    dtypes = sorted({str(a.dtype) for a in args if hasattr(a, "dtype")})
    raise NotImplementedError(f"{cls.__name__.lower()}: not implemented for complex tensors "
                              f"(got dtypes {', '.join(dtypes)})")


def _node_of(t):
    """The node gradients flow into for tensor `t`: its grad_fn, or its leaf accumulator, or,
    for an output of a node with several (which is falsy, see function_nodes.py), the node
    in `_acc` that receives that output's gradient. `Op.apply` inlines this."""
    node = t.grad_fn or t._acc
    if node is None:
        node = t._acc = AccumulateGrad(t)
    return node
