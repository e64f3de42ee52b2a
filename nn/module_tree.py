"""The module tree: walking a `Module`'s sub-modules, parameters and buffers, and finding one
by its dotted path.

The names are PyTorch's (`encoder.layers.0.linear1.weight`), built while walking the
`_modules`, `_parameters` and `_buffers` tables that `Module.__setattr__` fills (module.py);
they are the keys of `state_dict()` too. `Module` inherits these methods.
"""
from __future__ import annotations


class TreeMethods:
    """The traversals of `Module`: depth first, parents before children, in registration
    order, each module, parameter or buffer once unless `remove_duplicate=False`."""

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(dotted name, module) depth-first; a module reached twice is yielded once unless
        `remove_duplicate=False`. `memo` is a set of modules to skip (PyTorch's argument)."""
        return self._walk(prefix, True, remove_duplicate, memo)

    def modules(self, remove_duplicate=True):
        return (m for _, m in self._walk("", False, remove_duplicate))

    def _walk(self, prefix, named, remove_duplicate=True, memo=None):
        """(dotted name, module) depth-first; without `named` the names are None and not
        built (`train()` walks every module on every step)."""
        seen = set() if memo is None else {id(m) for m in memo}
        stack = [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if remove_duplicate:
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
        """Each child once, under its first name (`Sequential(a, b) * 2` holds a and b twice)."""
        seen = set()
        for k, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield k, m

    def children(self):
        return (m for _, m in self.named_children())

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def _named_members(self, table, prefix, recurse, remove_duplicate):
        """(dotted name, tensor) from each module's `table`; a tensor shared by two modules
        (tied weights) comes once unless `remove_duplicate=False`, as in PyTorch."""
        seen = set()
        mods = self._walk(prefix, True, remove_duplicate) if recurse else [(prefix, self)]
        for name, m in mods:
            for k, t in m.__dict__[table].items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{name}.{k}" if name else k), t

    def get_submodule(self, target):
        """The module at a dotted path ("encoder.layers.0"); "" is the module itself."""
        m = self
        for i, part in enumerate(target.split(".") if target else ()):
            child = m._modules.get(part) if isinstance(m, TreeMethods) else None
            if child is None:
                where = ".".join(target.split(".")[:i]) or type(self).__name__
                raise AttributeError(f"{type(self).__name__}.get_submodule: {where} has no "
                                     f"submodule {part!r} (looking up {target!r})")
            m = child
        return m

    def get_parameter(self, target):
        """The parameter at a dotted path ("encoder.layers.0.linear1.weight")."""
        return self._get_member(target, "_parameters", "parameter", "get_parameter")

    def get_buffer(self, target):
        """The buffer at a dotted path ("norm.running_mean")."""
        return self._get_member(target, "_buffers", "buffer", "get_buffer")

    def _get_member(self, target, table, kind, op):
        path, _, name = target.rpartition(".")
        owner = self.get_submodule(path)
        if name not in owner.__dict__[table]:
            raise AttributeError(f"{type(self).__name__}.{op}: {type(owner).__name__} "
                                 f"{path or '(the module itself)'} has no {kind} {name!r}")
        return owner.__dict__[table][name]
