"""`Module` and `Parameter`: how layers keep their weights and find each other's.

Assigning a `Parameter` or a `Module` to an attribute registers it, so `named_parameters()`
can walk the tree and produce PyTorch's dotted names (`encoder.layers.0.linear1.weight`), which
are also the keys of `state_dict()` (saving and loading that state is `module_state.py`;
walking the tree and finding a member by its dotted name, `module_tree.py`).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from minigrad.grad_mode import thread_switches
from minigrad.platform.device import check_device, parse_to
from minigrad.dtypes import get_default_dtype
from minigrad.platform.tensortypes import dtype_of
from minigrad.tensor import Tensor

from . import module_hooks, module_state
from .module_tree import TreeMethods

_any_global_hook = module_hooks.any_global  # [True] while a global module hook is set
_registration_hooks = module_hooks.registration_hooks  # {kind: {id: hook}}, never replaced


class Parameter(Tensor):
    """A tensor that is a module's weight: it requires grad and is found by `parameters()`."""

    _prints_as_tensor = True

    def __init__(self, data, requires_grad=True):
        arr = data._array if isinstance(data, Tensor) else np.asarray(data)
        if not np.issubdtype(arr.dtype, np.floating):
            arr = arr.astype(np.float32)
        self._init(arr, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module(TreeMethods, module_hooks.HookMethods, module_state.StateHookMethods):
    """Base class of every layer and model: subclasses set attributes and define `forward`."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        for table in module_hooks.TABLES:
            object.__setattr__(self, table, OrderedDict())
        object.__setattr__(self, "training", True)

    # --- registration -----------------------------------------------------------------------
    def __setattr__(self, name, value):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                 f"assigning attribute {name!r}")
        params, modules, buffers = d["_parameters"], d["_modules"], d["_buffers"]
        if isinstance(value, (Parameter, Module)):
            table = params if isinstance(value, Parameter) else modules
            if _registration_hooks:
                value = module_hooks.run_registration_hooks(
                    self, name, value, "parameter" if table is params else "module")
            if name not in table:
                _unregister(self, name)
            # a parameter or module replaced under its own name keeps its place, so the
            # order of parameters() and of state_dict()'s keys stays PyTorch's
            table[name] = value
            _tree_changed()
        elif name in params or name in modules:
            if value is not None:
                # PyTorch's rule: silently turning a weight into a plain attribute would drop
                # it from parameters(), the optimizer and every checkpoint
                kind, want = (("parameter", "nn.Parameter") if name in params
                              else ("child module", "nn.Module"))
                raise TypeError(f"{type(self).__name__}: cannot assign "
                                f"'{type(value).__name__}' as {kind} '{name}' ({want} or None "
                                f"expected)")
            (params if name in params else modules)[name] = None
            _tree_changed()
        elif getattr(value, "_is_buffer", False) and isinstance(value, Tensor):
            # an nn.Buffer (parameter.py): registered as register_buffer would
            return self.register_buffer(name, value, getattr(value, "persistent", True))
        elif name in buffers:
            # a new value for a buffer stays a buffer (`self.ema = self.ema * 0.9 + x`), as in
            # PyTorch: dropping it would drop it from every checkpoint without a word
            value = buffers[name] = _buffer_value(self, name, value)
        object.__setattr__(self, name, value)

    def __getstate__(self):
        # the names `_name_tree` caches are not state: `_tree_root` would carry the whole
        # model the module was last called in into a pickle or deepcopy of the module alone
        return {k: v for k, v in self.__dict__.items() if k not in _TREE_NAMES}

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
        tensor = self._buffers[name] = _buffer_value(self, name, tensor)
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)
        object.__setattr__(self, name, tensor)

    def add_module(self, name, module):
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if "." in name or name == "":
            raise KeyError(f"add_module: module name can't contain \".\" or be empty, got: "
                           f"{name!r}")
        setattr(self, name, module)

    def register_module(self, name, module):
        """The same as `add_module` (PyTorch's alias)."""
        self.add_module(name, module)

    # --- calling ----------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        # ops created inside are tagged with this module's path; `outer` is the module calling
        # this one (None at the outermost call)
        scope = thread_switches.module
        outer = scope.path
        scope.path = d.get("_path") or type(self).__name__
        if outer is None and d.get("_named_at") != _tree_version[0] \
                and d.get("_tree_root") in (None, self):
            # the outermost call names every module (for graph rendering), unless a larger
            # model that contains this one already named it; a model called again with the
            # same modules keeps its names, so it is not walked on every call
            _name_tree(self)
        try:
            # the checks inlined: every layer of every step passes here
            if d["_forward_hooks"] or d["_forward_pre_hooks"] or d["_backward_hooks"] \
                    or d["_backward_pre_hooks"] or _any_global_hook[0]:
                return module_hooks.call_with_hooks(self, args, kwargs)
            return self.forward(*args, **kwargs)
        finally:
            scope.path = outer

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    # --- modes and gradients ----------------------------------------------------------------
    def train(self, mode=True):
        # PyTorch's recursion, so that a child's own train() runs (a subclass may override it
        # to keep a part frozen). A training loop calls this every step: on the small GPT's
        # 73 modules it is also 3x faster than walking `modules()` with its set of visited ids
        object.__setattr__(self, "training", mode)
        for m in self._modules.values():
            if m is not None:
                m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad._array.fill(0)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad = requires_grad
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

    def share_memory(self):
        """Move the parameters, buffers and gradients into memory other processes share."""
        for t in list(self.parameters()) + list(self.buffers()):
            for x in (t, t.grad):
                if x is not None:
                    x.share_memory_()
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
    def state_dict(self, destination=None, prefix="", keep_vars=False):
        """Parameters and persistent buffers by dotted name, detached but sharing memory with
        the module as in PyTorch (copy them for a snapshot); `keep_vars` keeps the tensors."""
        return module_state.state_dict(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values into parameters and buffers, all or nothing: every key, shape and dtype is
        checked first and the error lists each problem; only then is anything overwritten."""
        return module_state.load_state_dict(self, state_dict, strict, assign)

    # state beyond the tensors: override both to save and load it under `_extra_state`
    get_extra_state = module_state.get_extra_state
    set_extra_state = module_state.set_extra_state

    # --- description ------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        """PyTorch's layout: `Name(extra)` on one line for a leaf with one line of extra_repr,
        else the extra lines and then each child `(name): repr`, indented, one a line."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({name}): {indent(repr(m))}" for name, m in self._modules.items()]
        return framed(type(self).__name__, extra_lines, child_lines)

    def num_parameters(self):
        return sum(p._array.size for p in self.parameters())

    def summary(self, depth=None, print_fn=print):
        """A table of every parameter (shape, count) with totals per sub-module; returns it."""
        from .summary import summary_table
        text = summary_table(self, depth)
        if print_fn is not None:
            print_fn(text)
        return text


def indent(text, spaces=2):
    """Every line of `text` but the first shifted right (a child's repr inside its parent's)."""
    return text.replace("\n", "\n" + " " * spaces)


def framed(name, extra_lines, child_lines):
    """`name(...)` around the lines of a module's repr, as PyTorch lays them out."""
    if len(extra_lines) == 1 and not child_lines:
        return f"{name}({extra_lines[0]})"
    lines = extra_lines + child_lines
    return f"{name}(\n  " + "\n  ".join(lines) + "\n)" if lines else f"{name}()"


def factory_dtype(device, dtype, op):
    """The dtype a layer's constructor makes its weights in (PyTorch's factory kwargs
    `device=`, `dtype=`): the default float dtype unless given; the device must be the CPU."""
    check_device(device, op)
    dtype = np.dtype(get_default_dtype() if dtype is None else dtype)
    if dtype.kind != "f":
        raise TypeError(f"{op}: weights need a floating dtype, got {dtype}")
    return dtype


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
    """What a buffer may hold: a tensor or None (PyTorch's rule and message), as the global
    buffer registration hooks leave it."""
    if value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{type(module).__name__}: cannot assign '{type(value).__name__}' as "
                        f"buffer '{name}' (a Tensor or None expected)")
    if _registration_hooks:
        value = module_hooks.run_registration_hooks(module, name, value, "buffer")
    return value


_TREE_NAMES = ("_path", "_tree_root", "_named_at")


def _name_tree(root):
    """Store each sub-module's dotted path on it, so ops can be grouped by module when drawn."""
    for name, m in root.named_modules():
        object.__setattr__(m, "_path", name or type(root).__name__)
        object.__setattr__(m, "_tree_root", root)
    for name, p in root.named_parameters():
        p._name = name
    _tree_changed()
    object.__setattr__(root, "_named_at", _tree_version[0])
