"""A module's forward and backward hooks, and the global ones every module runs.

`hook(module, args)` runs before forward and may replace the arguments (with `with_kwargs=True`,
`hook(module, args, kwargs)` returns `(args, kwargs)`); `hook(module, args, output)` runs after
it and may replace the output: a non-None return replaces, as in PyTorch. Global hooks
(`register_module_forward_hook`, ...) run before a module's own. The full backward hooks see
the gradients of a call's tensor outputs (`grad_output`) and of its tensor inputs
(`grad_input`), both tuples with None where there is none, and may return replacements: the
tensors are passed through one joint identity node on each side (see `_JointIdentity`), so
the hook sees every gradient of a side at once, as PyTorch's BackwardHookFunction does.
"""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.grad_mode import is_grad_enabled
from minigrad.graph_rules import rule
from minigrad.tensor import Tensor

_ids = itertools.count()

# the global hooks: {handle id: hook}, and the ids registered with_kwargs / always_call
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


class RemovableHandle:
    """What every `register_*hook` returns: `remove()` takes the hook out of its tables (also
    usable as a context manager that removes it on exit), as torch.utils.hooks'."""

    def __init__(self, table, extra=()):
        self.id = next(_ids)  # not id(hook): the same function may be registered twice
        self._tables = (table, *extra)

    def remove(self):
        for table in self._tables:
            table.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register(table, hook, prepend=False, extra=(), flags=(), handle_class=RemovableHandle):
    """Put `hook` in `table` (first if `prepend`); each dict of `flags` marks its id."""
    handle = handle_class(table, extra)
    table[handle.id] = hook
    for flag in flags:
        flag[handle.id] = True
    if prepend:
        table.move_to_end(handle.id, last=False)
    return handle


# every hook table a module has (Module.__init__ makes each an OrderedDict)
TABLES = ("_forward_hooks", "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
          "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_backward_hooks",
          "_backward_pre_hooks", "_state_dict_hooks", "_state_dict_pre_hooks",
          "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks")


class HookMethods:
    """The hook registrations of `Module` (each returns a handle whose `remove()` undoes it)."""

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """`hook(module, args)` before forward, returning None or new args (a single value
        is wrapped in a tuple); with `with_kwargs`, `hook(module, args, kwargs)` returning
        None or `(args, kwargs)`. `prepend` runs it before the hooks already registered."""
        kw = self._forward_pre_hooks_with_kwargs
        return register(self._forward_pre_hooks, hook, prepend, (kw,), [kw] if with_kwargs
                        else ())

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """`hook(module, args, output)` after forward (`hook(module, args, kwargs, output)`
        with `with_kwargs`); a non-None return replaces output. `always_call` runs it even
        when forward raises."""
        kw, always = self._forward_hooks_with_kwargs, self._forward_hooks_always_called
        flags = [d for d, on in ((kw, with_kwargs), (always, always_call)) if on]
        return register(self._forward_hooks, hook, prepend, (kw, always), flags)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """`hook(module, grad_output)` when the gradients of the module's outputs are known,
        before they flow into it; it may return replacements (a tuple of the same length)."""
        return register(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """`hook(module, grad_input, grad_output)` once the gradients of the module's tensor
        inputs are computed; it may return replacements for grad_input. Both are tuples by
        argument position, None where an argument is not a tensor or gets no gradient."""
        return register(self._backward_hooks, hook, prepend)


# [True] while any global hook is registered: Module.__call__ reads this one flag
any_global = [False]


class _GlobalHandle(RemovableHandle):
    def remove(self):
        super().remove()
        _refresh()


def _refresh():
    any_global[0] = bool(_global_forward_pre_hooks or _global_forward_hooks
                         or _global_backward_pre_hooks or _global_backward_hooks)


def _register_global(table, hook, extra=(), flags=()):
    handle = register(table, hook, extra=extra, flags=flags, handle_class=_GlobalHandle)
    _refresh()
    return handle


def register_module_forward_pre_hook(hook):
    """`hook(module, args)` before the forward of every module."""
    return _register_global(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """`hook(module, args, output)` (or `(module, args, kwargs, output)`) after every forward."""
    flags = [d for d, on in ((_global_forward_hooks_with_kwargs, with_kwargs),
                             (_global_forward_hooks_always_called, always_call)) if on]
    return _register_global(_global_forward_hooks, hook,
                            (_global_forward_hooks_with_kwargs,
                             _global_forward_hooks_always_called), flags)


def register_module_full_backward_pre_hook(hook):
    """`hook(module, grad_output)` for every module, before its gradients are computed."""
    return _register_global(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """`hook(module, grad_input, grad_output)` for every module, after its backward."""
    return _register_global(_global_backward_hooks, hook)


# the global registration hooks: {"buffer" | "module" | "parameter": {handle id: hook}}; an
# empty dict while none is registered, so that Module.__setattr__ tests one dict
registration_hooks = {}


def _register_registration_hook(kind, hook):
    table = registration_hooks.setdefault(kind, OrderedDict())

    class Handle(RemovableHandle):
        def remove(self):
            super().remove()
            if not table and registration_hooks.get(kind) is table:
                del registration_hooks[kind]
    return register(table, hook, handle_class=Handle)


def register_module_buffer_registration_hook(hook):
    """`hook(module, name, buffer)` whenever any module registers a buffer; a non-None return
    is registered instead."""
    return _register_registration_hook("buffer", hook)


def register_module_module_registration_hook(hook):
    """`hook(module, name, submodule)` whenever any module registers a sub-module."""
    return _register_registration_hook("module", hook)


def register_module_parameter_registration_hook(hook):
    """`hook(module, name, param)` whenever any module registers a parameter."""
    return _register_registration_hook("parameter", hook)


def run_registration_hooks(module, name, value, kind):
    """`value` as the registration hooks of its `kind` leave it."""
    for hook in list(registration_hooks.get(kind, {}).values()):
        new = hook(module, name, value)
        if new is not None:
            value = new
    return value


def any_hooks(module):
    """True when calling `module` must go through `call_with_hooks`."""
    d = module.__dict__
    return bool(d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or any_global[0])


def call_with_hooks(module, args, kwargs):
    """`module(*args, **kwargs)` with its hooks and the global ones, in PyTorch's order: forward
    pre-hooks, the input side of the backward hooks, forward, forward hooks, the output side
    of the backward hooks. Hooks registered with `always_call=True` run even when forward
    raises (their own errors then become warnings, so the first error is the one raised)."""
    d = module.__dict__
    result, called = None, set()
    try:
        for key, hook in (*_global_forward_pre_hooks.items(), *d["_forward_pre_hooks"].items()):
            if key in d["_forward_pre_hooks_with_kwargs"]:
                new = hook(module, args, kwargs)
                if new is not None:
                    if not (isinstance(new, tuple) and len(new) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {new}.")
                    args, kwargs = new
            else:
                new = hook(module, args)
                if new is not None:
                    args = new if isinstance(new, tuple) else (new,)
        backward = None
        full = [*_global_backward_hooks.values(), *d["_backward_hooks"].values()]
        pre = [*_global_backward_pre_hooks.values(), *d["_backward_pre_hooks"].values()]
        if full or pre:
            backward = _BackwardHooks(module, full, pre)
            args = backward.wrap_inputs(args)
        result = module.forward(*args, **kwargs)
        for key, hook in (*_global_forward_hooks.items(), *d["_forward_hooks"].items()):
            if key in d["_forward_hooks_always_called"] or key in \
                    _global_forward_hooks_always_called:
                called.add(key)
            if key in d["_forward_hooks_with_kwargs"] or key in \
                    _global_forward_hooks_with_kwargs:
                new = hook(module, args, kwargs, result)
            else:
                new = hook(module, args, result)
            if new is not None:
                result = new
        if backward is not None:
            if not isinstance(result, (Tensor, tuple)):
                warnings.warn(f"For backward hooks to be called, module output should be a "
                              f"Tensor or a tuple of Tensors but received {type(result)}")
            result = backward.wrap_outputs(result)
        return result
    except Exception:
        _always_called(module, args, kwargs, result, called)
        raise


def _always_called(module, args, kwargs, result, called):
    d = module.__dict__
    tables = ((_global_forward_hooks, _global_forward_hooks_always_called,
               _global_forward_hooks_with_kwargs, "global module forward hook"),
              (d["_forward_hooks"], d["_forward_hooks_always_called"],
               d["_forward_hooks_with_kwargs"], "module forward hook"))
    for hooks, always, with_kwargs, what in tables:
        for key, hook in hooks.items():
            if key not in always or key in called:
                continue
            try:
                new = (hook(module, args, kwargs, result) if key in with_kwargs
                       else hook(module, args, result))
                if new is not None:
                    result = new
            except Exception as e:
                warnings.warn(f"{what} with ``always_call=True`` raised an exception that was "
                              f"silenced as another error was raised in forward: {e}")


# --- the full backward hooks ------------------------------------------------------------------

class _Pack(Function):
    """The floating tensors of one side of a call, raveled into one vector: (N,)."""

    @staticmethod
    def forward(ctx, *arrays, dropped):
        ctx.shapes, ctx.dropped = [a.shape for a in arrays], dropped
        dtype = np.result_type(*arrays)
        return np.concatenate([a.ravel().astype(dtype, copy=False) for a in arrays])

    @staticmethod
    def backward(ctx, grad):
        bounds = np.cumsum([0] + [int(np.prod(s)) for s in ctx.shapes])
        # a tensor whose gradient a hook replaced by None gets none, as in PyTorch
        return tuple(None if k in ctx.dropped else grad[a:b].reshape(s)
                     for k, (a, b, s) in enumerate(zip(bounds, bounds[1:], ctx.shapes)))


class _JointIdentity(Function):
    """The vector of `_Pack` passed on unchanged; its backward hands the whole gradient of the
    side to `on_grad`, which may replace it (the hooks run there)."""

    @staticmethod
    def forward(ctx, flat, on_grad):
        ctx.on_grad = on_grad
        return flat.copy()

    @staticmethod
    def backward(ctx, grad):
        return ctx.on_grad(grad)


class _Unpack(Function):
    """Tensor `index` of the side, out of the joint vector: a new tensor, not a view. Its
    backward notes that this tensor received a gradient (None is passed on for the others)."""

    @staticmethod
    def forward(ctx, flat, start, shape, dtype, index, reached):
        ctx.size, ctx.start, ctx.index, ctx.reached = flat.size, start, index, reached
        stop = start + int(np.prod(shape))
        return flat[start:stop].reshape(shape).astype(dtype)

    @staticmethod
    def backward(ctx, grad):
        ctx.reached.add(ctx.index)
        full = np.zeros(ctx.size, grad.dtype)
        full[ctx.start:ctx.start + grad.size] = grad.ravel()
        return full


# the same three backward passes on tensors, for create_graph=True (gradient penalties through
# hooked modules). The hooks see the gradients' values; what they change is added as a
# constant, so a gradient the hooks leave alone stays differentiable.

@rule(_Pack)
def _pack_rule(ctx, g):
    bounds = np.cumsum([0] + [int(np.prod(s)) for s in ctx.shapes])
    return tuple(None if k in ctx.dropped else g[a:b].reshape(s)
                 for k, (a, b, s) in enumerate(zip(bounds, bounds[1:], ctx.shapes)))


@rule(_JointIdentity)
def _joint_rule(ctx, g):
    new = ctx.on_grad(g._array)
    return g if new is g._array else g + Tensor._wrap(new - g._array)


@rule(_Unpack)
def _unpack_rule(ctx, g):
    ctx.reached.add(ctx.index)
    flat = g.reshape(-1)
    before = minigrad.zeros(ctx.start, dtype=flat.dtype)
    after = minigrad.zeros(ctx.size - ctx.start - flat.numel(), dtype=flat.dtype)
    return minigrad.cat([before, flat, after])


class _Side:
    """One side (inputs or outputs) of a hooked call: which positions are floating tensors
    that pass through the joint node, and where each lies in the joint vector."""

    def __init__(self, values, on_grad):
        self.n = len(values)
        self.index = [i for i, v in enumerate(values) if isinstance(v, Tensor)
                      and v._array.dtype.kind == "f"]
        self.wrapped = is_grad_enabled() and any(values[i].requires_grad for i in self.index)
        self.reached, self.dropped = set(), set()
        if not self.wrapped:
            self.values = tuple(values)
            return
        tensors = [values[i] for i in self.index]
        joint = _JointIdentity.apply(_Pack.apply(*tensors, dropped=self.dropped),
                                     on_grad=on_grad)
        self.starts = np.cumsum([0] + [t.numel() for t in tensors])
        out = list(values)
        for k, (i, t) in enumerate(zip(self.index, tensors)):
            out[i] = _Unpack.apply(joint, start=int(self.starts[k]), shape=t.shape,
                                   dtype=t._array.dtype, index=k, reached=self.reached)
        self.shapes = [t.shape for t in tensors]
        self.requires_grad = [t.requires_grad for t in tensors]
        self.values = tuple(out)

    def split(self, flat, zeros):
        """The side's gradients as a tuple in positional order, None where none arrived
        (zeros instead, with `zeros`, for a tensor that requires grad: PyTorch's
        grad_input)."""
        res = [None] * self.n
        for k, i in enumerate(self.index):
            if k in self.reached or (zeros and self.requires_grad[k]):
                a = self.starts[k]
                res[i] = Tensor._wrap(flat[a:a + int(np.prod(self.shapes[k]))]
                                      .reshape(self.shapes[k]).copy())
        self.reached.clear()
        return tuple(res)

    def join(self, grads, flat):
        """The joint gradient with the side's tensors' gradients replaced by `grads`."""
        flat = flat.copy()
        self.dropped.clear()
        for k, i in enumerate(self.index):
            a, shape = self.starts[k], self.shapes[k]
            g = grads[i]
            if g is None:
                self.dropped.add(k)
            flat[a:a + int(np.prod(shape))] = 0 if g is None else np.broadcast_to(
                np.asarray(g._array if isinstance(g, Tensor) else g), shape).ravel()
        return flat


class _BackwardHooks:
    """The full backward hooks and pre-hooks of one call of `module` (PyTorch's BackwardHook)."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.inputs = self.outputs = self.grad_outputs = None

    def wrap_inputs(self, args):
        self.inputs = _Side(args, self._on_grad_input)
        return self.inputs.values

    def wrap_outputs(self, result):
        single = not isinstance(result, tuple)
        self.outputs = _Side((result,) if single else result, self._on_grad_output)
        return self.outputs.values[0] if single else self.outputs.values

    def _on_grad_output(self, flat):
        self.grad_outputs = self.outputs.split(flat, zeros=False)
        for hook in self.pre_hooks:
            new = hook(self.module, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected "
                                   f"{len(self.grad_outputs)}")
            self.grad_outputs = tuple(new)
        if not self.inputs.wrapped and self.hooks:
            # nothing reaches the inputs' node: the hooks run now, with no gradient to return
            warnings.warn("Full backward hook is firing when gradients are computed with "
                          "respect to module outputs since no inputs require gradients. See "
                          "https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.register_full_backward_hook for more details.")
            grad_inputs = (None,) * self.inputs.n
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        return self.outputs.join(self.grad_outputs, flat)

    def _on_grad_input(self, flat):
        if self.grad_outputs is None:
            return flat  # a gradient that reached the inputs without passing the outputs
        res = self.inputs.split(flat, zeros=True)
        for hook in self.hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(out)}, but expected {len(res)}")
            res = tuple(out)
        self.grad_outputs = None
        return self.inputs.join(res, flat)
