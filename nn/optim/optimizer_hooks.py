"""Hooks on an optimizer's `step` and state dicts, as `torch.optim.Optimizer`'s.

    handle = optimizer.register_step_post_hook(lambda opt, args, kwargs: ema.update(...))
    handle.remove()

A step pre-hook is called as hook(optimizer, args, kwargs), where `args` starts with the
optimizer itself, as in PyTorch, and may return (new_args, new_kwargs) to replace them; a
post-hook gets the same arguments after the step. `register_optimizer_step_pre_hook` and
`..._post_hook` (in `minigrad.optim.optimizer`, as in `torch.optim.optimizer`) register hooks
for every optimizer: global pre-hooks run before an optimizer's own, global post-hooks after.
The state-dict hooks: pre(optimizer) and post(optimizer, state_dict) -> state_dict or None
around `state_dict()`; pre(optimizer, state_dict) -> state_dict or None and post(optimizer)
around `load_state_dict()`.

A subclass's own `step` (a custom optimizer) is wrapped when the class is defined, so its
hooks run too, once per call even when it calls `super().step()`.
"""
from __future__ import annotations

import functools
import itertools
from collections import OrderedDict

from minigrad.autograd import RemovableHandle

_global_step_pre_hooks = OrderedDict()
_global_step_post_hooks = OrderedDict()
_ids = itertools.count()


def _register(table, hook, prepend=False):
    key = next(_ids)
    table[key] = hook
    if prepend:
        table.move_to_end(key, last=False)
    return RemovableHandle(lambda: table.pop(key, None))


def register_optimizer_step_pre_hook(hook):
    """Call hook(optimizer, args, kwargs) before every optimizer's step."""
    return _register(_global_step_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Call hook(optimizer, args, kwargs) after every optimizer's step."""
    return _register(_global_step_post_hooks, hook)


def hooked(step):
    """`step` running the step hooks around it (not again inside an outer hooked step)."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        own = self.__dict__
        if own.get("_in_hooked_step") or not (
                _global_step_pre_hooks or _global_step_post_hooks
                or own.get("_optimizer_step_pre_hooks") or own.get("_optimizer_step_post_hooks")):
            return step(*args, **kwargs)  # the usual case, kept cheap: no hooks at all
        for hook in itertools.chain(_global_step_pre_hooks.values(),
                                    self._hooks("_optimizer_step_pre_hooks").values()):
            result = hook(self, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(f"{step} must return None or a tuple of (new_args, "
                                       f"new_kwargs), but got {result}.")
                args, kwargs = result
        self._in_hooked_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            del self._in_hooked_step
        for hook in itertools.chain(self._hooks("_optimizer_step_post_hooks").values(),
                                    _global_step_post_hooks.values()):
            hook(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


class OptimizerHooks:
    """The registration methods and the state-dict hook runners `Optimizer` inherits."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "hooked", False):
            cls.step = hooked(step)

    def _hooks(self, name):
        table = self.__dict__.get(name)
        if table is None:
            table = self.__dict__[name] = OrderedDict()
        return table

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs), before `step`."""
        return _register(self._hooks("_optimizer_step_pre_hooks"), hook)

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) -> None, after `step`."""
        return _register(self._hooks("_optimizer_step_post_hooks"), hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, before `state_dict` builds the dict."""
        return _register(self._hooks("_optimizer_state_dict_pre_hooks"), hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, on `state_dict`'s result."""
        return _register(self._hooks("_optimizer_state_dict_post_hooks"), hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) -> state_dict or None, before loading."""
        return _register(self._hooks("_optimizer_load_state_dict_pre_hooks"), hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) -> None, after loading."""
        return _register(self._hooks("_optimizer_load_state_dict_post_hooks"), hook, prepend)

    def _state_dict_hooks(self, when, state_dict=None):
        """Run the state_dict ('pre', 'post') or load_state_dict ('load_pre', 'load_post')
        hooks; returns the state dict, as the post or load_pre hooks may replace it."""
        name = {"pre": "_optimizer_state_dict_pre_hooks",
                "post": "_optimizer_state_dict_post_hooks",
                "load_pre": "_optimizer_load_state_dict_pre_hooks",
                "load_post": "_optimizer_load_state_dict_post_hooks"}[when]
        for hook in self._hooks(name).values():
            if when in ("pre", "load_post"):
                hook(self)
            else:
                result = hook(self, state_dict)
                if result is not None:
                    state_dict = result
        return state_dict


__all__ = ["OptimizerHooks", "hooked", "register_optimizer_step_post_hook",
           "register_optimizer_step_pre_hook"]
