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
`apply` runs forward with grad recording off on whatever the caller passed, then gives each
output that needs a gradient the node `ctx` (function_nodes.py says how the engine runs it).
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings

import numpy as np

from ..grad_mode import is_grad_enabled, no_grad
from . import op as autograd_op
from .function_jvp import run_jvp
from .function_nodes import (BackwardCFunction, DelayedError, FunctionCtx, FunctionOutput,
                             SavedOutput)
from .op import _node_of, _record_hooks, _sequence
from .versions import bump_version
from .views import adopt_node, multi_output_error, note_plain_view, rebase_views, view_chain

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable"]


class Function:
    """Base class of custom differentiable operations, as `torch.autograd.Function`: define
    static `forward(ctx, *args)` (or `forward(*args)` and `setup_context(ctx, inputs,
    output)`) and `backward(ctx, *grads)`, and call `YourFunction.apply(*args)`."""

    _backward_cls = None
    generate_vmap_rule = False  # True: vmap may run forward batched (minigrad: per example)

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

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(_NO_JVP)

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set "
                                  "generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on `args` with recording off; give the outputs that need a gradient
        this call's node as their grad_fn. Keyword arguments that name forward's parameters
        are inputs like the positional ones, as in PyTorch."""
        Tensor = autograd_op.Tensor
        with_ctx = cls.setup_context is Function.setup_context
        if kwargs or not with_ctx:
            args, kwargs = _bind(cls.forward, with_ctx, args, kwargs)
        transforms = getattr(_transforms, "kinds", None)
        if transforms:
            _check_transforms(cls, with_ctx, transforms)
        ctx = cls._backward_cls()
        grad_enabled = is_grad_enabled()
        needs = tuple(grad_enabled and isinstance(a, Tensor) and a._requires_grad for a in args)
        ctx.needs_input_grad = needs
        ctx.next_nodes = tuple(_node_of(a) if need else None for a, need in zip(args, needs))
        ctx._input_meta = tuple((a._array.shape, a._array.dtype) if isinstance(a, Tensor)
                                else None for a in args)
        with no_grad():
            if with_ctx:
                out = cls.forward(ctx, *args, **kwargs)
            else:  # PyTorch 2's style: forward without ctx, then setup_context
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
        out = _wrap_outputs(ctx, args, out, any(needs))
        if any(needs):  # (forward mode's tangents ride on recorded calls only: forward_ad.py)
            run_jvp(ctx, args, out if isinstance(out, tuple) else (out,))
            for d in ctx.dirty_tensors:  # after jvp: the rebased nodes' tangents read ctx's
                if d._view is not None and d.grad_fn is ctx:
                    _rebase_dirty_view(d)
        return out


_NO_JVP = ("You must implement the jvp function for custom autograd.Function to use it with "
           "forward mode AD.")
_EXTENDING = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"
_transforms = threading.local()  # per thread: the kinds of `torch.func` transform running


@contextlib.contextmanager
def running_transform(*kinds):
    """Mark the `minigrad.func` transforms of `kinds` ("grad", "jvp", "vmap") as running in
    this thread while the block calls the user's function: a custom Function applied there
    must be what PyTorch's transforms need (`_check_transforms`)."""
    before = getattr(_transforms, "kinds", frozenset())
    _transforms.kinds = before | frozenset(kinds)
    try:
        yield
    finally:
        _transforms.kinds = before


def _check_transforms(cls, with_ctx, kinds):
    """PyTorch's errors for a Function inside transforms: any transform needs the
    setup_context style, vmap a rule (generated or its own), forward mode a jvp. minigrad's
    transforms would run any Function (vmap loops, func.jvp runs backward), but a program
    must run on both libraries."""
    if with_ctx:
        raise RuntimeError(f"In order to use an autograd.Function with functorch transforms "
                           f"(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           f"staticmethod. {_EXTENDING}")
    if "vmap" in kinds:
        own = cls.vmap is not Function.vmap
        if cls.generate_vmap_rule and own:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it has both "
                               f"generate_vmap_rule=True and an overridden vmap staticmethod. "
                               f"Please set generate_vmap_rule=False or delete the overridden "
                               f"vmap staticmethod to avoid ambiguity. {_EXTENDING}")
        if not cls.generate_vmap_rule and not own:
            raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have "
                               f"vmap support. Please override and implement the vmap "
                               f"staticmethod or set generate_vmap_rule=True. {_EXTENDING}")
    if "jvp" in kinds and cls.jvp is Function.jvp:
        raise NotImplementedError(_NO_JVP)


def _bind(forward, with_ctx, args, kwargs):
    """forward's inputs as PyTorch's `apply` finds them: the keywords naming positional
    parameters placed among the positional arguments, any other keyword refused; in the
    setup_context style, the defaults of parameters not given filled in as inputs too."""
    bound = _signature(forward).bind(*((None,) if with_ctx else ()), *args, **kwargs)
    if not with_ctx:
        bound.apply_defaults()
    for name in bound.kwargs:
        raise TypeError(f"{forward.__name__}() got an unexpected keyword argument '{name}'")
    return bound.args[1 if with_ctx else 0:], {}


_signature = functools.lru_cache(maxsize=256)(inspect.signature)


def _wrap_outputs(ctx, args, out, wanted):
    """forward's result with the graph attached: the outputs that need a gradient get ctx (or,
    when there are several, each its `FunctionOutput`) as grad_fn."""
    Tensor = autograd_op.Tensor
    single = not isinstance(out, tuple)
    outs = [out] if single else list(out)
    dirty, frozen = _ids(ctx.dirty_tensors), _ids(ctx.non_differentiable)
    inputs = _ids(a for a in args if isinstance(a, Tensor))
    for d in ctx.dirty_tensors:
        if id(d) not in inputs:
            raise RuntimeError(f"{ctx.name()}: mark_dirty only accepts input tensors, but "
                               f"argument of shape {tuple(d.shape)} wasn't one")
    if dirty - _ids(outs):
        raise RuntimeError(f"{ctx.name()}: Some elements marked as dirty during the forward "
                           f"method were not returned as output. The inputs that are "
                           f"modified inplace must all be outputs of the Function.")
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
    ctx._output_meta = tuple((o._array.shape, o._array.dtype) if isinstance(o, Tensor)
                             else None for o in outs)
    if differentiable:
        _attach(ctx, outs, differentiable)
    return outs[0] if single else tuple(outs)


def _ids(tensors):
    return {id(t) for t in tensors}


def _check_dirty(ctx, t, wanted):
    if not is_grad_enabled():
        return
    root = view_chain(t)[0]
    if root.grad_fn is None and root._requires_grad:  # PyTorch's two wordings
        raise RuntimeError(f"{ctx.name()}: a leaf Variable that requires grad has been used "
                           f"in an in-place operation." if root is t else
                           f"{ctx.name()}: a view of a leaf Variable that requires grad is "
                           f"being used in an in-place operation.")
    if wanted and t._split_output is not None:
        multi_output_error(ctx.name(), t)


def _rebase_dirty_view(view):
    """A view that forward wrote in place (`mark_dirty`), now produced by ctx: as for any write
    through a view, its root's graph becomes the old one with the view's region replaced by
    ctx's output (`CopySlices`), and the root's views, this one too, read that (views.py)."""
    from ..ops.assign import CopySlices  # (the ops import this package)
    root, chain = view_chain(view)
    adopt_node(root, CopySlices.apply(root, view, chain=chain).grad_fn)
    rebase_views(root)


def _alias(t):
    a = autograd_op.Tensor._wrap(t._array)
    a._vc = t._vc
    note_plain_view(a, t)
    return a


def _attach(ctx, outs, differentiable):
    """Make ctx the grad_fn of the outputs at positions `differentiable`: the node the one
    output 0 sends its gradient to, or, for outputs at other positions, the receiver of their
    `FunctionOutput` edges (function_nodes.py)."""
    ctx.sequence_nr = next(_sequence)
    if ctx.saved:
        ctx.saved_versions = [(t._vc, t._vc[0], tuple(t._array.shape))
                              for t in ctx.saved if t is not None]
    if differentiable == [0]:
        o = outs[0]
        ctx.out_shape, ctx.out_dtype = o._array.shape, o._array.dtype
        nodes = [(ctx, o)]
    else:
        ctx._pending, ctx.out_shape, ctx.out_dtype = {}, (), np.dtype(np.float64)
        first = outs[differentiable[0]]
        nodes = [(FunctionOutput(ctx, i, outs[i]), outs[i]) for i in differentiable]
        if _record_hooks:  # the shared node too (anomaly mode's creation site, forward AD)
            for hook in _record_hooks:
                hook(ctx, first)
    for node, o in nodes:
        if _record_hooks:  # anomaly mode, forward AD, the graph renderer
            for hook in _record_hooks:
                hook(node, o)
        o.grad_fn, o._requires_grad = ctx, True
        if node is not ctx:
            o._acc = node
    if ctx.saved:  # the outputs among the saved tensors are kept without their node
        own = {id(o): (i, node) for (node, o), i in zip(nodes, differentiable)}
        saved = []
        for s in ctx.saved:
            if id(s) in own:
                i, node = own[id(s)]
                s = SavedOutput(s, i, None if node is ctx else node)
            saved.append(s)
        ctx.saved = tuple(saved)


class InplaceFunction(Function):
    """A Function with an `inplace` flag, as PyTorch's (for subclasses that read it)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


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

