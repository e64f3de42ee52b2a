"""`Module` and `Parameter`: how layers keep their weights and find each other's.

Assigning a `Parameter` or a `Module` to an attribute registers it, so `named_parameters()`
can walk the tree and produce PyTorch's dotted names (`encoder.layers.0.linear1.weight`), which
are also the keys of `state_dict()` (saving and loading that state is `module_state.py`).
"""
from __future__ import annotations

import itertools
from collections import OrderedDict

import numpy as np

from minigrad.grad_mode import swap_module_path
from minigrad.platform.device import check_device, parse_to
from minigrad.dtypes import get_default_dtype
from minigrad.platform.tensortypes import dtype_of
from minigrad.tensor import Tensor

from . import module_state


class Parameter(Tensor):
    """A tensor that is a module's weight: it requires grad and is found by `parameters()`."""

    def __init__(self, data, requires_grad=True):
        arr = data._array if isinstance(data, Tensor) else np.asarray(data)
        if not np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(np.float32)
        self._init(arr, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer and model: subclasses set attributes and define `forward`."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "training", True)

    # --- registration -----------------------------------------------------------------------
    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                 f"assigning attribute {name!r}")
        buffers = self.__dict__["_buffers"]
        if name in buffers and not isinstance(value, (Parameter, Module)):
            # a new value for a buffer stays a buffer (`self.ema = self.ema * 0.9 + x`), as in
            # PyTorch: dropping it would drop it from every checkpoint without a word
            buffers[name] = _buffer_value(self, name, value)
            object.__setattr__(self, name, value)
            return
        if _unregister(self, name) or isinstance(value, (Parameter, Module)):
            _tree_changed()
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if _unregister(self, name):
            _tree_changed()
        object.__delattr__(self, name)

    def register_parameter(self, name, param):
        setattr(self, name, param)
        if param is None:
            self._parameters[name] = None

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a parameter (BatchNorm's running mean): found by
        `buffers()`, moved by `to()`, and saved by `state_dict()` unless `persistent=False`.
        Assigning a tensor (or None) to its name later keeps it registered."""
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"{type(self).__name__}.register_buffer: a buffer name must be a "
                           f"non-empty string without '.', got {name!r}")
        if name in self.__dict__ and name not in self._buffers:
            raise KeyError(f"{type(self).__name__}.register_buffer: attribute {name!r} already "
                           f"exists")
        self._buffers[name] = _buffer_value(self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name, module):
        setattr(self, name, module)

    # --- calling ----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if d["_forward_pre_hooks"]:
            args = _run_forward_pre_hooks(self, args)
        # ops created inside are tagged with this module's path; `outer` is the module calling
        # this one (None at the outermost call)
        outer = swap_module_path(d.get("_path") or type(self).__name__)
        if outer is None and d.get("_named_at") != _tree_version[0] \
                and d.get("_tree_root") in (None, self):
            # the outermost call names every module (for graph rendering), unless a larger
            # model that contains this one already named it; a model called again with the
            # same modules keeps its names, so it is not walked on every call
            _name_tree(self)
        try:
            out = self.forward(*args, **kwargs)
        finally:
            swap_module_path(outer)
        if d["_forward_hooks"]:
            out = _run_forward_hooks(self, args, out)
        return out

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def register_forward_hook(self, hook):
        """`hook(module, args, output)` runs after forward; a non-None return replaces output."""
        return _register(self._forward_hooks, hook)

    def register_forward_pre_hook(self, hook):
        return _register(self._forward_pre_hooks, hook)

    # --- traversal --------------------------------------------------------------------------
    def named_modules(self, prefix=""):
        return self._walk(prefix, True)

    def modules(self):
        return (m for _, m in self._walk("", False))

    def _walk(self, prefix, named):
        """(dotted name, module) depth-first, each module once; without `named` the names
        are None and not built (`train()` walks every module on every step)."""
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            if named:
                children = [((f"{name}.{k}" if name else k), c) for k, c in m._modules.items()
                            if c is not None]
            else:
                children = [(None, c) for c in m._modules.values() if c is not None]
            stack.extend(reversed(children))

    def named_children(self):
        return ((k, m) for k, m in self._modules.items() if m is not None)

    def children(self):
        return (m for _, m in self.named_children())

    def named_parameters(self, prefix="", recurse=True):
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for name, m in mods:
            for k, p in m._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{name}.{k}" if name else k), p

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self):
        for name, m in self.named_modules():
            for k, b in m._buffers.items():
                if b is not None:
                    yield (f"{name}.{k}" if name else k), b

    def buffers(self):
        return (b for _, b in self.named_buffers())

    # --- modes and gradients ----------------------------------------------------------------
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad._array.fill(0)

    def requires_grad_(self, flag=True):
        for p in self.parameters():
            p.requires_grad = flag
        return self

    def apply(self, fn):
        """Call `fn(module)` on every sub-module (children first) and on self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Convert every floating parameter and buffer in place: to(dtype), to(device),
        to(device, dtype) or to(tensor), as PyTorch; the device must be the CPU."""
        dtype, _ = parse_to(args, kwargs, f"{type(self).__name__}.to")
        if dtype is None:
            return self
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise TypeError(f"{type(self).__name__}.to: only floating dtypes are allowed, "
                            f"got {dtype}")
        for t in list(self.parameters()) + list(self.buffers()):
            if t._array.dtype.kind == "f" and t._array.dtype != dtype:
                t.data = t._array.astype(dtype)  # .data keeps a leaf's gradient node in step
                if t.grad is not None:
                    t.grad = Tensor._wrap(t.grad._array.astype(dtype))
        return self

    def cpu(self):
        return self

    def cuda(self, device=None):
        check_device("cuda" if device is None else device, f"{type(self).__name__}.cuda")
        return self

    def type(self, dst_type):
        return self.to(dtype_of(dst_type))

    def double(self):
        return self.to(np.float64)

    def float(self):
        return self.to(np.float32)

    def half(self):
        return self.to(np.float16)

    # --- state: saving and loading, in module_state.py -------------------------------------
    def state_dict(self):
        """Parameters and persistent buffers by dotted name, as detached tensors (copies)."""
        return module_state.state_dict(self)

    def load_state_dict(self, state_dict, strict=True):
        """Copy values into parameters and buffers, all or nothing: every key, shape and dtype is
        checked first and the error lists each problem; only then is anything overwritten."""
        return module_state.load_state_dict(self, state_dict, strict)

    # --- description ------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append(f"  ({name}): {sub}")
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"

    def num_parameters(self):
        return sum(p._array.size for p in self.parameters())

    def summary(self, depth=None, print_fn=print):
        """A table of every parameter (shape, count) with totals per sub-module; returns it."""
        from .summary import summary_table
        text = summary_table(self, depth)
        if print_fn is not None:
            print_fn(text)
        return text


def factory_dtype(device, dtype, op):
    """The dtype a layer's constructor makes its weights in (PyTorch's factory kwargs
    `device=`, `dtype=`): the default float dtype unless given; the device must be the CPU."""
    check_device(device, op)
    dtype = np.dtype(get_default_dtype() if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"{op}: weights need a floating dtype, got {dtype}")
    return dtype


_hook_ids = itertools.count()


def _register(table, hook):
    key = next(_hook_ids)  # not id(hook): the same function may be registered twice
    table[key] = hook

    class Handle:
        def remove(self):
            table.pop(key, None)
    return Handle()


# Bumped whenever a module or parameter is added to or removed from any module, and whenever
# a tree is named (a module shared by two models takes the names of the last one named), so a
# root knows whether the names it stored are still right.
_tree_version = [0]


def _tree_changed():
    _tree_version[0] += 1


def _unregister(module, name):
    """Remove `name` from the module's tables; True if it was a parameter or a sub-module."""
    removed = [table.pop(name, None) for table in
               (module._parameters, module._modules, module._buffers)]
    module.__dict__.get("_non_persistent_buffers_set", set()).discard(name)
    return removed[0] is not None or removed[1] is not None


def _buffer_value(module, name, value):
    """What a buffer may hold: a tensor or None (PyTorch's rule and message)."""
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{type(module).__name__}: cannot assign '{type(value).__name__}' as "
                        f"buffer '{name}' (a Tensor or None expected)")
    return value


def _name_tree(root):
    """Store each sub-module's dotted path on it, so ops can be grouped by module when drawn."""
    for name, m in root.named_modules():
        object.__setattr__(m, "_path", name or type(root).__name__)
        object.__setattr__(m, "_tree_root", root)
    for name, p in root.named_parameters():
        p._name = name
    _tree_changed()
    object.__setattr__(root, "_named_at", _tree_version[0])


def _run_forward_pre_hooks(module, args):
    for hook in module._forward_pre_hooks.values():
        result = hook(module, args)
        if result is not None:
            args = result if isinstance(result, tuple) else (result,)
    return args


def _run_forward_hooks(module, args, out):
    for hook in module._forward_hooks.values():
        result = hook(module, args, out)
        if result is not None:
            out = result
    return out
