"""The graph nodes of a custom `autograd.Function` (function.py): how the engine runs it.

`ctx` is the node, as in PyTorch: an instance of the Function's `<Name>Backward` class, a
`BackwardCFunction` (which is also the `FunctionCtx` forward wrote to). The engine calls its
`backward(node, grad)` with an array (first order) or a recorded Tensor (`create_graph`): it
hands the user's backward Tensors, runs it under `no_grad` in the first case and recorded in the
second (so its gradient can be differentiated again), and fits what it returns to each input as
PyTorch's engine does (a broadcast shape summed, a dtype cast, an impossible shape refused).

A Function with several differentiable outputs has one node, every output's `grad_fn`, as in
PyTorch; but the engine gives each node one gradient. So each output also gets a small
`FunctionOutput` node, the edge its consumers point to, which stores its gradient in the shared
node and sends that an empty token. The shared node was created before them, so it runs after
all of them (the engine runs the newest node first) and sees every gradient at once. The edge
is kept in the output's `_acc`, and the shared node is falsy: the engine's `grad_fn or _acc`
(op.py's `_node_of`, inlined in `Op.apply`) then finds the edge with no test added for it.
"""
from __future__ import annotations

import weakref

import numpy as np

from ..grad_mode import enable_grad, no_grad
from . import op as autograd_op
from .engine import _broadcast_axes
from .op import Node, RemovableHandle, _node_of, _sequence

__all__ = ["BackwardCFunction", "DelayedError", "FunctionCtx", "FunctionOutput", "SavedOutput"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True "
          "if you need to backward through the graph a second time or if you need to access "
          "saved tensors after calling backward.")


class FunctionCtx:
    """What `forward` (or `setup_context`) tells backward through `ctx`."""

    saved = ()                # the tensors saved; None once a backward has freed them
    dirty_tensors = ()        # inputs forward changed in place (`mark_dirty`)
    non_differentiable = ()   # outputs that get no gradient (`mark_non_differentiable`)
    materialize_grads = True  # unused outputs' gradients: zeros (True) or None
    saved_for_forward = ()    # the tensors jvp sees as `saved_tensors` (`save_for_forward`)
    _jvp_running = False

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward; an in-place change to one before backward
        makes backward raise."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, autograd_op.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.saved = tensors

    def save_for_forward(self, *tensors):
        """Keep tensors for `jvp` (forward mode), where `saved_tensors` gives them."""
        for t in tensors:
            if t is not None and not isinstance(t, autograd_op.Tensor):  # (PyTorch's type)
                raise AssertionError("save_for_forward expects all arguments to be tensors; "
                                     "you should save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    @property
    def saved_tensors(self):
        if self._jvp_running:  # inside jvp: what save_for_forward kept
            return self.saved_for_forward
        if self.saved is None:
            raise RuntimeError(_FREED)
        return tuple(s.unpack(self) if s.__class__ is SavedOutput else s for s in self.saved)

    def mark_dirty(self, *tensors):
        """Declare inputs that forward changed in place and returns."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (indices, masks)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward receives None, not zeros, for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class SavedOutput:
    """An output of the node saved for backward, kept without the node: the output itself
    would hold the node that holds it, a reference cycle that only Python's cycle collector
    frees (a graph never run backward would linger). Unpacked, it is a tensor on the same
    memory whose grad_fn is the node again, as PyTorch's SavedVariable of an output."""

    __slots__ = ("array", "version_counter", "position", "node")

    def __init__(self, output, position, node):
        self.array, self.version_counter, self.position = output._array, output._vc, position
        # the output's own node if several outputs each have one, held weakly (it holds ctx)
        self.node = None if node is None else weakref.ref(node)

    def unpack(self, ctx):
        t = autograd_op.Tensor._wrap(self.array)
        t._vc, t.grad_fn, t._requires_grad = self.version_counter, ctx, True
        if self.node is not None:
            t._acc = self.node() or FunctionOutput(ctx, self.position, t)
        return t


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call of a custom Function (its class is `<Name>Backward`)."""

    _forward_cls = None  # the Function subclass
    tensor_level = True  # its backward also takes Tensors (graph_engine's create_graph)
    saved_versions = ()
    _pending = None      # with several outputs: output position -> its gradient (see above)
    _prehooks = _hooks = ()  # `register_prehook`'s and `register_hook`'s functions
    _input_meta = _output_meta = ()  # per argument, per output: (shape, dtype), None if no tensor
    needs_input_grad = ()

    def name(self):
        return type(self).__name__

    def __bool__(self):
        """False for the node of several outputs, whose outputs' edges are elsewhere (above)."""
        return self._pending is None

    @property
    def next_functions(self):
        """PyTorch's edges: one per tensor argument of forward (others have no place)."""
        return tuple((None, 0) if n is None else n.edge
                     for n, meta in zip(self.next_nodes, self._input_meta) if meta is not None)

    def register_prehook(self, hook):
        """Call `hook(grad_outputs)` before backward runs (None for an output no gradient
        reached); a returned tuple replaces the gradients."""
        return self._add_hook("_prehooks", hook)

    def register_hook(self, hook):
        """Call `hook(grad_inputs, grad_outputs)` after backward (one gradient per tensor
        argument of forward); a returned tuple replaces grad_inputs."""
        return self._add_hook("_hooks", hook)

    def _add_hook(self, kind, hook):
        setattr(self, kind, getattr(self, kind) + (hook,))
        return RemovableHandle(lambda: setattr(self, kind, tuple(
            h for h in getattr(self, kind) if h is not hook)))

    @staticmethod
    def backward(node, g):
        """The engine's entry: `g`, the gradient of the output (an array, or a Tensor under
        create_graph; with several outputs a token, the gradients being in `_pending`). Returns
        one gradient per input of forward, of the input's shape and dtype."""
        recorded = isinstance(g, autograd_op.Tensor)
        if node._pending is None:
            got = {0: g if recorded else autograd_op.Tensor._wrap(g)}
        else:
            got, node._pending = node._pending, {}
            if not recorded:
                got = {i: autograd_op.Tensor._wrap(a) for i, a in got.items()}
        grads = [got.get(i) for i in range(len(node._output_meta))]
        for hook in node._prehooks:
            grads = _replaced(hook(tuple(grads)), grads, node, "pre-hook")
        given = tuple(grads)
        for i, meta in enumerate(node._output_meta):
            if grads[i] is None and meta is not None and node.materialize_grads:
                grads[i] = autograd_op.Tensor._wrap(np.zeros(*meta))
        with enable_grad() if recorded else no_grad():
            result = _fit_gradients(node, node._forward_cls.backward(node, *grads))
        if node._hooks:
            result = _run_hooks(node, result, given)
        return tuple(r if r is None or recorded else r._array for r in result)

    def forward_ad_error(self):
        """None: forward-mode AD (forward_ad.py) leaves this node's tangents to its jvp,
        which `Function.apply` runs (function_jvp.py)."""
        return None


def _run_hooks(node, result, given):
    """`register_hook`'s functions, which see (and may replace) one gradient per tensor
    argument of forward, as PyTorch's."""
    tensors = [i for i, meta in enumerate(node._input_meta) if meta is not None]
    grad_inputs = [result[i] for i in tensors]
    for hook in node._hooks:
        grad_inputs = _replaced(hook(tuple(grad_inputs), given), grad_inputs, node, "hook")
    result = list(result)
    for i, g in zip(tensors, grad_inputs):
        result[i] = g if node.needs_input_grad[i] else None
    return result


def _replaced(new, old, node, kind):
    """What a node hook returned: None (keep `old`) or as many gradients as it was given."""
    if new is None:
        return list(old)
    new = list(new) if isinstance(new, (tuple, list)) else [new]
    if len(new) != len(old):
        raise RuntimeError(f"{node.name()}: a {kind} returned {len(new)} gradients where "
                           f"{len(old)} were expected")
    return new


def _fit_gradients(node, result):
    """The gradients backward returned, checked and fitted to the inputs as PyTorch's engine
    does: one per input (extra trailing Nones allowed), None for non-tensors and for inputs
    that need none, a broadcast shape summed back, another dtype cast."""
    name = node.name()
    if not isinstance(result, tuple):
        result = (result,)
    n = len(node._input_meta)
    if len(result) < n or any(r is not None for r in result[n:]):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(result)})")
    fitted = []
    for i, (meta, g) in enumerate(zip(node._input_meta, result)):
        if g is not None and meta is None:
            raise RuntimeError(f"function {name} returned a gradient different than None at "
                               f"position {i + 1}, but the corresponding forward input was "
                               f"not a Variable")
        if g is None or not node.needs_input_grad[i]:
            fitted.append(None)
            continue
        if not isinstance(g, autograd_op.Tensor):
            raise RuntimeError(f"function {name}: expected Variable or None (got "
                               f"{type(g).__name__}) as the gradient at index {i}")
        shape, dtype = meta
        if g.shape != shape:
            try:  # the engine's rule for a broadcast gradient, with PyTorch's message here
                axes = _broadcast_axes(node, shape, g)
            except RuntimeError:
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} "
                                   f"- got {list(g.shape)} but expected shape compatible with "
                                   f"{list(shape)}") from None
            g = (g.sum(dim=axes, keepdim=True) if axes else g).reshape(shape)
        if g.dtype != dtype:
            g = g.to(dtype)
        fitted.append(g)
    return fitted


class FunctionOutput(Node):
    """The edge of one output of a custom Function with several: hands its gradient to the
    shared node, and shows that node's name and edges, as PyTorch's shared node would."""

    __slots__ = ("function", "position", "next_nodes", "pre_hooks", "sequence_nr",
                 "out_shape", "out_dtype", "__weakref__")
    saved = saved_versions = ()
    tensor_level = True

    def __init__(self, function, position, out):
        self.function, self.position = function, position
        self.next_nodes, self.pre_hooks = (function,), ()
        self.sequence_nr = next(_sequence)  # after the shared node's: it runs first
        self.out_shape, self.out_dtype = out._array.shape, out._array.dtype

    @staticmethod
    def backward(node, g):
        shared = node.function
        shared._pending[node.position] = g
        token = np.zeros((), shared.out_dtype)
        return (autograd_op.Tensor._wrap(token) if isinstance(g, autograd_op.Tensor) else token,)

    def name(self):
        return self.function.name()

    @property
    def edge(self):
        return (self.function, self.position)

    @property
    def next_functions(self):
        return self.function.next_functions

    def __getattr__(self, name):  # ctx's attributes (saved_tensors, the user's own)
        if name == "function":  # not set yet: no ctx to ask
            raise AttributeError(name)
        return getattr(self.function, name)


class DelayedError(Node):
    """The node of a gradient computed by a `once_differentiable` backward under
    create_graph: differentiating it again raises."""

    __slots__ = ("next_nodes", "pre_hooks", "sequence_nr", "out_shape", "out_dtype",
                 "__weakref__")
    saved = saved_versions = ()
    tensor_level = True

    def __init__(self, t, grads):
        self.next_nodes = tuple(_node_of(g) for g in grads
                                if isinstance(g, autograd_op.Tensor) and g._requires_grad)
        self.pre_hooks = ()
        self.sequence_nr = next(_sequence)
        self.out_shape, self.out_dtype = t._array.shape, t._array.dtype

    def forward_ad_error(self):
        return NotImplementedError("DelayedError: forward-mode AD through a gradient of a "
                                   "once_differentiable backward is not supported")

    @staticmethod
    def backward(node, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")
