"""PyTorch's custom `autograd.Function`, on tensors (`torch.autograd.function`).

    class Clip(Function):
        @staticmethod
        def forward(ctx, x):                 # x: the caller's Tensor
            ctx.save_for_backward(x)
            return x.clamp(-1, 1)

        @staticmethod
        def backward(ctx, grad):             # grad: a Tensor shaped like the output
            (x,) = ctx.saved_tensors
            return grad * (x.abs() <= 1)     # one gradient per forward input

    y = Clip.apply(x)                        # y.grad_fn is a `ClipBackward` node

This is the class users write; the library's own ops are array-level `Op`s (op.py): one array
computation per op, and no graph built inside a backward unless `create_graph` asks for one.
Here forward runs with grad recording off on whatever the caller passed; each output that
needs a gradient gets the node `ctx`, an instance of the class's `<Name>Backward` (PyTorch's
names: ctx *is* the node). The engine calls the node's `backward(node, grad)` with an array
(first order) or a recorded Tensor (`create_graph`): it hands the user's backward Tensors, runs
it under `no_grad` in the first case and recorded in the second (so its gradient can be
differentiated again), and fits what it returns to each input as PyTorch does (a broadcast
shape summed, a dtype cast, an impossible shape refused).

A Function with several differentiable outputs has one node, but the engine gives each node
one gradient: so each output gets a small `FunctionOutput` node that stores its gradient in the
shared node and sends it an empty token. The shared node was created before them, so it runs
after all of them (the engine runs the newest node first) and sees every gradient at once.
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from ..grad_mode import enable_grad, is_grad_enabled, no_grad
from . import op as autograd_op
from .op import Node, _node_of, _record_hooks, _sequence
from .versions import bump_version
from .views import note_plain_view

__all__ = ["BackwardCFunction", "DelayedError", "Function", "FunctionCtx", "FunctionOutput",
           "InplaceFunction", "once_differentiable"]

_FREED = ("Trying to backward through the graph a second time (or directly access saved "
          "tensors after they have already been freed). Saved intermediate values of the graph "
          "are freed when you call .backward() or autograd.grad(). Specify retain_graph=True "
          "if you need to backward through the graph a second time or if you need to access "
          "saved tensors after calling backward.")


class FunctionCtx:
    """What `forward` (or `setup_context`) tells backward through `ctx`."""

    saved = ()                # the tensors saved; None once a backward has freed them
    dirty = ()                # inputs forward changed in place (`mark_dirty`)
    non_differentiable = ()   # outputs that get no gradient (`mark_non_differentiable`)
    materialize_grads = True  # unused outputs' gradients: zeros (True) or None

    def save_for_backward(self, *tensors):
        """Keep tensors (or None) for backward; an in-place change to one before backward
        makes backward raise."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, autograd_op.Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.saved = tensors

    @property
    def saved_tensors(self):
        if self.saved is None:
            raise RuntimeError(_FREED)
        return self.saved

    def mark_dirty(self, *tensors):
        """Declare inputs that forward changed in place and returns."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors):
        """Declare outputs that get no gradient (indices, masks)."""
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        """False: backward receives None, not zeros, for outputs that got no gradient."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of one call of a custom Function (its class is `<Name>Backward`)."""

    _forward_cls = None  # the Function subclass
    tensor_level = True  # its backward also takes Tensors (graph_engine's create_graph)
    saved_versions = ()
    pending = None       # with several outputs: output position -> its gradient (see above)
    needs_input_grad = ()

    def name(self):
        return type(self).__name__

    @staticmethod
    def backward(node, g):
        """The engine's entry: `g`, the gradient of the output (an array, or a Tensor under
        create_graph; with several outputs a token, the gradients being in `pending`). Returns
        one gradient per input of forward, of the input's shape and dtype."""
        recorded = isinstance(g, autograd_op.Tensor)
        if node.pending is None:
            got = {node.position: g if recorded else autograd_op.Tensor._wrap(g)}
        else:
            got, node.pending = node.pending, {}
            if not recorded:
                got = {i: autograd_op.Tensor._wrap(a) for i, a in got.items()}
        grads = []
        for i, meta in enumerate(node.outputs):
            if i in got:
                grads.append(got[i])
            elif meta is not None and node.materialize_grads:
                grads.append(autograd_op.Tensor._wrap(np.zeros(*meta)))
            else:
                grads.append(None)
        with enable_grad() if recorded else no_grad():
            result = node._forward_cls.backward(node, *grads)
        return tuple(r if r is None or recorded else r._array
                     for r in _fit_gradients(node, result))

    def forward_ad_error(self):
        """What forward-mode AD (forward_ad.py) raises on meeting this node."""
        if "jvp" in vars(self._forward_cls):
            return NotImplementedError(f"{self._forward_cls.__name__}: minigrad does not run "
                                       f"the jvp of a custom autograd.Function; forward-mode AD "
                                       f"through it is not supported (use reverse mode)")
        return NotImplementedError(f"{self._forward_cls.__name__}: You must implement the jvp "
                                   f"function for custom autograd.Function to use it with "
                                   f"forward mode AD.")


def _fit_gradients(node, result):
    """The gradients backward returned, checked and fitted to the inputs as PyTorch's engine
    does: one per input (extra trailing Nones allowed), None for non-tensors and for inputs
    that need none, a broadcast shape summed back, another dtype cast."""
    name = node.name()
    if not isinstance(result, tuple):
        result = (result,)
    n = len(node.inputs)
    if len(result) < n or any(r is not None for r in result[n:]):
        raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                           f"(expected {n}, got {len(result)})")
    fitted = []
    for i, (meta, g) in enumerate(zip(node.inputs, result)):
        if g is not None and meta is None:
            raise RuntimeError(f"function {name} returned a gradient different than None at "
                               f"position {i + 1}, but the corresponding forward input was "
                               f"not a Variable")
        if g is None or not node.needs_input_grad[i]:
            fitted.append(None)
            continue
        if not isinstance(g, autograd_op.Tensor):
            raise TypeError(f"function {name} returned a {type(g).__name__} as the gradient "
                            f"at index {i}; expected a Tensor or None")
        shape, dtype = meta
        if g.shape != shape:
            lead = g.ndim - len(shape)
            if lead < 0 or any(n != 1 and n != m for n, m in zip(shape, g.shape[lead:])):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index {i} "
                                   f"- got {list(g.shape)} but expected shape compatible with "
                                   f"{list(shape)}")
            axes = tuple(range(lead)) + tuple(lead + j for j, n in enumerate(shape)
                                              if n == 1 and g.shape[lead + j] != 1)
            g = (g.sum(dim=axes, keepdim=True) if axes else g).reshape(shape)
        if g.dtype != dtype:
            g = g.to(dtype)
        fitted.append(g)
    return fitted


class FunctionOutput(Node):
    """The node of one output of a custom Function with several: hands its gradient to the
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
        shared.pending[node.position] = g
        token = np.zeros((), shared.out_dtype)
        return (autograd_op.Tensor._wrap(token) if isinstance(g, autograd_op.Tensor) else token,)

    def name(self):
        return self.function.name()

    @property
    def next_functions(self):
        return self.function.next_functions

    def __getattr__(self, name):  # ctx's attributes (saved_tensors, the user's own)
        if name == "function":  # not set yet: no ctx to ask
            raise AttributeError(name)
        return getattr(self.function, name)


class Function:
    """Base class of custom differentiable operations, as `torch.autograd.Function`: define
    static `forward(ctx, *args)` (or `forward(*args)` and `setup_context(ctx, inputs,
    output)`) and `backward(ctx, *grads)`, and call `YourFunction.apply(*args)`."""

    _backward_cls = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "vjp" in vars(cls) and "backward" not in vars(cls):  # PyTorch's two names
            cls.backward = cls.vjp
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": __name__})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions "
                      f"are all static, so you should invoke them on the class itself. "
                      f"Instantiating an autograd function will raise an error in a future "
                      f"version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on `args` with recording off; give the outputs that need a gradient
        this call's node as their grad_fn."""
        Tensor = autograd_op.Tensor
        ctx = cls._backward_cls()
        grad_enabled = is_grad_enabled()
        needs = tuple(grad_enabled and isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        ctx.next_nodes = tuple(_node_of(a) if need else None for a, need in zip(args, needs))
        ctx.inputs = tuple((a._array.shape, a._array.dtype) if isinstance(a, Tensor) else None
                           for a in args)
        with no_grad():
            if cls.setup_context is Function.setup_context:
                out = cls.forward(ctx, *args, **kwargs)
            else:  # PyTorch 2's style: forward without ctx, then setup_context
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
        return _wrap_outputs(ctx, args, out, any(needs))


def _wrap_outputs(ctx, args, out, wanted):
    """forward's result with the graph attached: the outputs that need a gradient get ctx (or,
    when there are several, each its `FunctionOutput`) as grad_fn."""
    Tensor = autograd_op.Tensor
    single = not isinstance(out, tuple)
    outs = [out] if single else list(out)
    dirty, frozen = _ids(ctx.dirty), _ids(ctx.non_differentiable)
    inputs = _ids(a for a in args if isinstance(a, Tensor))
    for d in ctx.dirty:
        if id(d) not in inputs:
            raise RuntimeError(f"{ctx.name()}: mark_dirty only accepts input tensors, but "
                               f"argument of shape {tuple(d.shape)} wasn't one")
    if dirty - _ids(outs):
        raise RuntimeError(f"{ctx.name()}: Some elements marked as dirty during the forward "
                           f"method were not returned as output.")
    differentiable = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            continue
        if id(o) in dirty:
            _check_dirty(ctx, o, wanted)
            bump_version(o)  # as PyTorch's mark_dirty, on top of forward's own write
        elif id(o) in inputs or o.grad_fn is not None or o._requires_grad:
            outs[i] = _alias(o)  # a new tensor showing the same memory, as PyTorch's
        if wanted and id(o) not in frozen and o._array.dtype.kind in "fc":
            differentiable.append(i)
    ctx.outputs = tuple((o._array.shape, o._array.dtype) if isinstance(o, Tensor) else None
                        for o in outs)
    if differentiable:
        _attach(ctx, outs, differentiable)
    return outs[0] if single else tuple(outs)


def _ids(tensors):
    return {id(t) for t in tensors}


def _check_dirty(ctx, t, wanted):
    if t.grad_fn is None and t._requires_grad and is_grad_enabled():
        raise RuntimeError(f"{ctx.name()}: a leaf Variable that requires grad has been used in "
                           f"an in-place operation.")
    if t._view is not None and wanted:
        raise NotImplementedError(f"{ctx.name()}: mark_dirty on a view of another tensor is "
                                  f"not supported; clone the view before the call")


def _alias(t):
    a = autograd_op.Tensor._wrap(t._array)
    a._vc = t._vc
    note_plain_view(a, t)
    return a


def _attach(ctx, outs, differentiable):
    """Make ctx the node of the outputs at positions `differentiable`: the grad_fn of the one
    there is, or the receiver of the `FunctionOutput` nodes of several."""
    ctx.sequence_nr = next(_sequence)
    if ctx.saved:
        ctx.saved_versions = [(t._vc, t._vc[0], tuple(t._array.shape))
                              for t in ctx.saved if t is not None]
    if len(differentiable) == 1:
        (ctx.position,) = differentiable
        o = outs[ctx.position]
        ctx.out_shape, ctx.out_dtype = o._array.shape, o._array.dtype
        nodes = [(ctx, o)]
    else:
        ctx.pending, ctx.out_shape, ctx.out_dtype = {}, (), np.dtype(np.float64)
        first = outs[differentiable[0]]
        nodes = [(FunctionOutput(ctx, i, outs[i]), outs[i]) for i in differentiable]
        if _record_hooks:  # the shared node too (anomaly mode's creation site, forward AD)
            for hook in _record_hooks:
                hook(ctx, first)
    for node, o in nodes:
        if _record_hooks:  # anomaly mode, forward AD, the graph renderer
            for hook in _record_hooks:
                hook(node, o)
        o.grad_fn, o._requires_grad = node, True


class InplaceFunction(Function):
    """A Function with an `inplace` flag, as PyTorch's (for subclasses that read it)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


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


def once_differentiable(fn):
    """Decorate a backward that is not itself differentiable: it runs without recording, and
    under create_graph its gradients carry a node that raises if differentiated again."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        Tensor = autograd_op.Tensor
        if not is_grad_enabled() or not any(isinstance(a, Tensor) and a._requires_grad
                                            for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        wrapped = tuple(_delayed_error(o, args) for o in ((outputs,) if single else outputs))
        return wrapped[0] if single else wrapped
    return wrapper


def _delayed_error(o, grads):
    if not isinstance(o, autograd_op.Tensor) or o._array.dtype.kind not in "fc":
        return o
    t = _alias(o)
    t.grad_fn, t._requires_grad = DelayedError(o, grads), True
    return t

