"""Containers that hold sub-modules (Sequential, ModuleList, ModuleDict) or parameters
(ParameterList, ParameterDict), registered so that parameters() and state_dict() find them."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

from minigrad.tensor import Tensor

from .module import Module, Parameter, framed, indent


class Sequential(Module):
    """Calls its modules in order, each on the previous one's output."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules whose parameters are registered (names "0", "1", ...)."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        items = list(self._modules.values())
        return ModuleList(items[i]) if isinstance(i, slice) else items[i]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def forward(self, *args):
        raise TypeError("ModuleList is a container; call its modules, not the list")

    def __repr__(self):
        """As PyTorch: a run of equal reprs is printed once, `(0-5): 6 x Block(...)`."""
        if not self._modules:
            return f"{type(self).__name__}()"
        runs = []  # [first index, last index, repr]
        for i, text in enumerate(repr(m) for m in self):
            if runs and runs[-1][2] == text:
                runs[-1][1] = i
            else:
                runs.append([i, i, text])
        lines = [indent(f"({a}): {text}" if a == b else f"({a}-{b}): {b - a + 1} x {text}")
                 for a, b, text in runs]
        return framed(type(self).__name__, [], lines)


class ModuleDict(Module):
    """A dict of modules whose parameters are registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __contains__(self, key):
        return key in self._modules

    def __delitem__(self, key):
        delattr(self, key)

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def forward(self, *args):
        raise TypeError("ModuleDict is a container; call its modules, not the dict")


def _as_parameter(value):
    """A tensor stored in a parameter container becomes a Parameter, as in PyTorch."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters registered under "0", "1", ...; plain tensors are wrapped."""

    def __init__(self, values=None):
        super().__init__()
        for v in values or ():
            self.append(v)

    def append(self, value):
        setattr(self, str(len(self)), _as_parameter(value))
        return self

    def extend(self, values):
        for v in values:
            self.append(v)
        return self

    def _index(self, i):
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"ParameterList: index {i} is out of range for {n} parameters")
        return str(i % n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ParameterList([self[j] for j in range(len(self))[i]])
        return getattr(self, self._index(i))

    def __setitem__(self, i, value):
        setattr(self, self._index(i), _as_parameter(value))

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def extra_repr(self):
        return "\n".join(f"  ({i}): Parameter containing: [{p.dtype} of size {tuple(p.shape)}]"
                         for i, p in enumerate(self))

    def forward(self, *args):
        raise TypeError("ParameterList is a container; use its parameters, not the list")


class ParameterDict(Module):
    """A dict of parameters registered under their (string) keys; plain tensors are wrapped."""

    def __init__(self, parameters=None):
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key):
        return self._parameters[key]

    def __setitem__(self, key, value):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict: keys must be strings, got {type(key).__name__}")
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key):
        delattr(self, key)

    def __contains__(self, key):
        return key in self._parameters

    def __len__(self):
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters)

    def keys(self):
        return self._parameters.keys()

    def values(self):
        return self._parameters.values()

    def items(self):
        return self._parameters.items()

    def get(self, key, default=None):
        return self._parameters.get(key, default)

    def pop(self, key):
        value = self._parameters[key]
        del self[key]
        return value

    def update(self, parameters):
        """Add or replace entries. A plain dict's keys are taken in sorted order, as PyTorch
        does (an OrderedDict, a ParameterDict or a list of pairs keeps its order)."""
        if isinstance(parameters, (OrderedDict, ParameterDict)):
            items = parameters.items()
        elif isinstance(parameters, Mapping):
            items = sorted(parameters.items())
        else:
            items = parameters
        for key, value in items:
            self[key] = value

    def forward(self, *args):
        raise TypeError("ParameterDict is a container; use its parameters, not the dict")
