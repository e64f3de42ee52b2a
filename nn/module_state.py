"""A module's state: `Module.state_dict()` and `Module.load_state_dict()`.

The state is every parameter and persistent buffer under its dotted name
(`encoder.layers.0.linear1.weight`), in PyTorch's order, so a checkpoint's keys are PyTorch's,
plus the `get_extra_state()` of modules that define one. Loading is all or nothing: a
checkpoint with one wrong key, shape or dtype changes nothing.
"""
from __future__ import annotations

import functools
from collections import OrderedDict

import numpy as np

from minigrad.autograd import bump_version
from minigrad.tensor import Tensor

from . import module_hooks


EXTRA_STATE_KEY = "_extra_state"


def get_extra_state(module):
    """`Module.get_extra_state`'s default: a module saves no state beyond its tensors."""
    raise RuntimeError(f"{type(module).__name__}.get_extra_state: override it to save extra "
                       f"state in state_dict() (and set_extra_state to load it)")


def set_extra_state(module, state):
    """`Module.set_extra_state`'s default."""
    raise RuntimeError(f"{type(module).__name__}.set_extra_state: override it to load the "
                       f"extra state that get_extra_state saved")


def _entries(module, prefix, recurse=True):
    """(key, owner, local name, tensor or None for extra state) in PyTorch's order: each
    module's parameters, persistent buffers and extra state, then its children's; a tensor
    shared by two modules (tied weights) appears under both names."""
    for k, p in module._parameters.items():
        if p is not None:
            yield prefix + k, module, k, p
    non_persistent = module.__dict__.get("_non_persistent_buffers_set", ())
    for k, b in module._buffers.items():
        if b is not None and k not in non_persistent:
            yield prefix + k, module, k, b
    if type(module).get_extra_state is not get_extra_state \
            or type(module).set_extra_state is not set_extra_state:
        yield prefix + EXTRA_STATE_KEY, module, EXTRA_STATE_KEY, None
    for k, m in module._modules.items() if recurse else ():
        if m is not None:
            yield from _entries(m, prefix + k + ".")


def state_dict(module, destination=None, prefix="", keep_vars=False):
    """Parameters and persistent buffers by dotted name, detached (they share memory with the
    module, as PyTorch's do: copy them to keep a snapshot), plus each module's
    `get_extra_state()` under `<prefix>_extra_state` where its class defines one. Each
    module's state-dict pre-hooks run before its entries are taken, its post-hooks after its
    children's, as in PyTorch."""
    out = OrderedDict() if destination is None else destination
    return _save(module, out, prefix, keep_vars)


def _save(module, out, prefix, keep_vars):
    d = module.__dict__
    for hook in d["_state_dict_pre_hooks"].values():
        hook(module, prefix, keep_vars)
    for key, owner, _, t in _entries(module, prefix, recurse=False):
        if t is None:
            if type(owner).get_extra_state is not get_extra_state:
                out[key] = owner.get_extra_state()
        else:
            out[key] = t if keep_vars else t.detach()
    for k, m in module._modules.items():
        if m is not None:  # a child's hook may return a new dict: only its own call sees it
            _save(m, out, prefix + k + ".", keep_vars)
    for hook in d["_state_dict_hooks"].values():
        result = hook(module, out, prefix, _metadata(module))
        if getattr(hook, "_from_public_api", False):
            if result is not None:
                raise RuntimeError("state_dict post-hook must return None")
        elif result is not None:  # the private form may return a new state dict
            out = result
    return out


def _metadata(module):
    return {"version": getattr(type(module), "_version", 1)}


def load_state_dict(module, state_dict, strict=True, assign=False):
    """Copy values into the module's parameters and buffers, all or nothing: every key, shape
    and dtype is checked first and the error lists each problem; only then is anything
    overwritten. With `assign=True` the module keeps the given tensors instead (in their
    dtype; parameters stay parameters). Returns (missing_keys, unexpected_keys) as PyTorch.

    The load pre-hooks of each module see (a copy of) `state_dict` first and may change it;
    the post-hooks see the incompatible keys after loading and may remove some: with post
    hooks, a strict load checks the keys after them (and so after loading the rest)."""
    state_dict, missing, unexpected, errors = _run_load_pre_hooks(module, state_dict, strict)
    entries = {key: (owner, name, t) for key, owner, name, t in _entries(module, "")
               if t is not None or type(owner).set_extra_state is not set_extra_state}
    missing += [k for k in entries if k not in state_dict]
    unexpected += [k for k in state_dict if k not in entries]
    post_hooks = [(m, h) for _, m in module._walk("", False, False)
                  for h in m.__dict__["_load_state_dict_post_hooks"].values()]
    problems, values = [], {}
    if strict and not post_hooks:
        problems += _key_problems(missing, unexpected)
    bad = []
    for k, (_, _, t) in entries.items():
        if k in state_dict and t is not None:
            value, problem = (_assignable if assign else _castable)(state_dict[k], t._array)
            if problem:
                # PyTorch's words for a wrong shape, which scripts look for in the message
                bad.append(f"size mismatch for {k}: {problem}" if problem.startswith("copying")
                           else f"{k}: {problem}")
            values[k] = value
    if bad:
        problems.append("bad values: " + "; ".join(bad))
    problems += errors
    keys = _IncompatibleKeys(missing, unexpected)
    if not problems:
        _store(entries, state_dict, values, assign)
    for owner, hook in post_hooks:  # as in PyTorch, also before a failed load's error
        if hook(owner, keys) is not None:
            raise RuntimeError("load_state_dict post-hook must return None")
    if problems:
        raise RuntimeError(f"load_state_dict for {type(module).__name__} (nothing was "
                           f"loaded): " + " | ".join(problems))
    if strict and post_hooks and _key_problems(missing, unexpected):
        raise RuntimeError(f"load_state_dict for {type(module).__name__} (the other keys were "
                           f"loaded): " + " | ".join(_key_problems(missing, unexpected)))
    return keys


def _key_problems(missing, unexpected):
    return ((["missing keys: " + ", ".join(missing)] if missing else [])
            + (["unexpected keys: " + ", ".join(unexpected)] if unexpected else []))


def _run_load_pre_hooks(module, state_dict, strict):
    """Each module's load pre-hooks, on a copy of `state_dict` (PyTorch's arguments); returns
    the copy and the missing keys, unexpected keys and error messages the hooks added."""
    state_dict, missing, unexpected, errors = OrderedDict(state_dict), [], [], []
    for path, m in module._walk("", True, False):  # parents first, as PyTorch's recursion
        hooks = m.__dict__["_load_state_dict_pre_hooks"].values()
        if not hooks:
            continue
        prefix = path + "." if path else ""
        # a sub-module's hooks see the keys under its prefix only (PyTorch's), and what they
        # change there replaces those keys
        local = OrderedDict((k, v) for k, v in state_dict.items() if k.startswith(prefix))
        for hook in hooks:
            hook(m, local, prefix, _metadata(m), strict, missing, unexpected, errors)
        for k in [k for k in state_dict if k.startswith(prefix)]:
            del state_dict[k]
        state_dict.update(local)
    return state_dict, missing, unexpected, errors


def _store(entries, state_dict, values, assign):
    for k, (owner, name, t) in entries.items():
        if k not in state_dict:
            continue
        if t is None:
            owner.set_extra_state(state_dict[k])
        elif assign:
            value = values[k]
            if name in owner._parameters and not isinstance(value, type(t)):
                value = type(t)(value, requires_grad=t.requires_grad)  # still a Parameter
            setattr(owner, name, value)
        else:
            np.copyto(t._array, values[k])  # in place, as PyTorch's copy_: views stay views
            bump_version(t)


class StateHookMethods:
    """The state-dict hook registrations of `Module` (each returns a removable handle)."""

    def register_state_dict_pre_hook(self, hook):
        """`hook(module, prefix, keep_vars)` before `state_dict()` takes this module's state."""
        return module_hooks.register(self._state_dict_pre_hooks, hook)

    def register_state_dict_post_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata)` after this module's state (and its
        children's) is in `state_dict`; it may change it in place and must return None."""
        hook._from_public_api = True
        return module_hooks.register(self._state_dict_hooks, hook)

    def _register_state_dict_hook(self, hook):
        """The older form of `register_state_dict_post_hook`: a non-None return replaces the
        state dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return module_hooks.register(self._state_dict_hooks, hook)

    def register_load_state_dict_pre_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before loading; it may change `state_dict` in place."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """As `register_load_state_dict_pre_hook`, the hook taking no module unless
        `with_module`."""
        if with_module:
            hook = functools.partial(hook, self)
        return module_hooks.register(self._load_state_dict_pre_hooks, _drop_module(hook))

    def register_load_state_dict_post_hook(self, hook):
        """`hook(module, incompatible_keys)` after loading; it may remove keys from
        `incompatible_keys.missing_keys` and `.unexpected_keys` in place (then a strict load
        does not fail on them); it must return None."""
        return module_hooks.register(self._load_state_dict_post_hooks, hook)


def _drop_module(hook):
    """The stored form of a load pre-hook: called with the module first, which it drops."""
    return lambda module, *args: hook(*args)


class _IncompatibleKeys(tuple):
    """(missing_keys, unexpected_keys), printed as PyTorch prints it."""

    def __new__(cls, missing, unexpected):
        t = super().__new__(cls, (missing, unexpected))
        t.missing_keys, t.unexpected_keys = missing, unexpected
        return t

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")

    __str__ = __repr__


def _shape_problem(have, want):
    return (f"copying a param with shape {tuple(have)} from checkpoint, the shape in current "
            f"model is {tuple(want)}")


def _assignable(value, like):
    """(value as a tensor to keep, None) or (None, what is wrong with it), for assign=True:
    the shape must fit; the dtype is the value's own."""
    if not isinstance(value, Tensor):
        try:
            value = Tensor._wrap(np.asarray(value))
        except (TypeError, ValueError) as e:
            return None, f"not an array ({type(value).__name__}: {e})"
    if value.shape != like.shape:
        return None, _shape_problem(value.shape, like.shape)
    return value, None


def _castable(value, like):
    """(value as an array of like's dtype, None) or (None, what is wrong with it)."""
    arr = value._array if isinstance(value, Tensor) else value
    try:
        arr = np.asarray(arr)
    except (TypeError, ValueError) as e:
        return None, f"not an array ({type(value).__name__}: {e})"
    if arr.shape != like.shape:
        return None, _shape_problem(arr.shape, like.shape)
    if not like.flags.writeable:
        return None, "the model's array is read-only"
    kind, want = arr.dtype.kind, like.dtype.kind
    if kind not in "biuf" or (want in "biu" and kind == "f"):
        # strings, objects and complex numbers have no faithful cast; floats would be truncated
        return None, f"checkpoint dtype {arr.dtype} cannot be stored in {like.dtype}"
    with np.errstate(over="ignore", invalid="ignore"):
        out = arr.astype(like.dtype)
    if want == "f" and kind == "f" and not np.array_equal(np.isfinite(out), np.isfinite(arr)):
        return None, f"{arr.dtype} values overflow {like.dtype}"
    if want in "biu" and not np.array_equal(out, arr):
        return None, f"{arr.dtype} values overflow {like.dtype}"
    return out, None
