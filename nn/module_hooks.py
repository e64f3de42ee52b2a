"""A module's forward and backward hooks, and the global ones every module runs.

`hook(module, args)` runs before forward and may replace the arguments (with `with_kwargs=True`,
`hook(module, args, kwargs)` returns `(args, kwargs)`); `hook(module, args, output)` runs after
it and may replace the output: a non-None return replaces, as in PyTorch. Global hooks
(`register_module_forward_hook`, ...) run before a module's own. The full backward hooks see
the gradients of a call's tensor outputs (`grad_output`) and of its tensor inputs
(`grad_input`), both tuples with None where there is none, and may return replacements:
module_backward_hooks.py passes the tensors of each side through one joint identity node.
"""
from __future__ import annotations

import itertools
import warnings
from collections import OrderedDict

from minigrad.tensor import Tensor

from .module_backward_hooks import BackwardHooks

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
            backward = BackwardHooks(module, full, pre)
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
