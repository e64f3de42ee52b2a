"""Containers that hold sub-modules (Sequential, ModuleList, ModuleDict) or parameters
(ParameterList, ParameterDict), registered so that parameters() and state_dict() find them."""
from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from minigrad.tensor import Tensor

from .module import Module, Parameter, framed, indent


class _Positional(Module):
    """What Sequential and ModuleList share: modules at positions "0", "1", ..., replaced,
    deleted and popped by integer position (negative counts from the end)."""

    def __setitem__(self, idx, module):
        setattr(self, _key_at(self, idx), module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [_key_at(self, idx)]):
            delattr(self, key)
        _renumber(self)  # as PyTorch: the names left become "0", "1", ... even if they were not

    def pop(self, key):
        module = self[key]
        del self[key]
        return module

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class Sequential(_Positional):
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

    def __getitem__(self, idx):
        """A module, or for a slice a Sequential of the same class that keeps the names
        (`model[:i + 1]` cuts a named model after its i-th layer)."""
        if isinstance(idx, slice):
            return self.__class__(OrderedDict(list(self._modules.items())[idx]))
        return self._modules[_key_at(self, idx)]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential):
        for layer in sequential:
            self.append(layer)
        return self

    def insert(self, index, module):
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        index = index + n if index < 0 else index
        modules = list(self._modules.values())
        _replace(self, [(str(i), m) for i, m in
                        enumerate(modules[:index] + [module] + modules[index:])])
        return self

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        return Sequential(*self, *other)

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but "
                             f"{type(other)} is given.")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def __mul__(self, other):
        _check_factor(self, other)
        return Sequential(*(list(self) * other))  # the same modules, shared, `other` times

    def __rmul__(self, other):
        return self.__mul__(other)

    def __imul__(self, other):
        _check_factor(self, other)
        modules = list(self)
        for i, module in enumerate(modules * (other - 1)):
            self.add_module(str(i + len(modules)), module)
        return self


class ModuleList(_Positional):
    """A list of modules whose parameters are registered (names "0", "1", ...)."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleList.extend should be called with an iterable, but got "
                            f"{type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[_key_at(self, idx)]

    def insert(self, index, module):
        """Before position `index`; as `list.insert`, an index past either end inserts at
        that end."""
        modules = list(self._modules.values())
        modules.insert(index, module)
        _replace(self, [(str(i), m) for i, m in enumerate(modules)])

    def __add__(self, other):
        return ModuleList([*self, *other])

    def __iadd__(self, modules):
        return self.extend(modules)

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
        if modules is not None:
            self.update(modules)

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

    def clear(self):
        for key in list(self._modules):
            delattr(self, key)

    def update(self, modules):
        """From a mapping (in its order) or an iterable of (name, module) pairs."""
        if not isinstance(modules, Iterable):
            raise TypeError(f"ModuleDict.update should be called with an iterable of key/value "
                            f"pairs, but got {type(modules).__name__}")
        if isinstance(modules, (Mapping, ModuleDict)):
            for key, module in modules.items():
                self[key] = module
            return
        for j, m in enumerate(modules):
            if not isinstance(m, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; "
                                f"is {type(m).__name__}")
            if len(m) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length "
                                 f"{len(m)}; 2 is required")
            self[m[0]] = m[1]

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()

    def forward(self, *args):
        raise TypeError("ModuleDict is a container; call its modules, not the dict")


def _key_at(container, idx):
    """The name of the module at integer position `idx` (negative counts from the end)."""
    idx = operator.index(idx)
    n = len(container._modules)
    if not -n <= idx < n:
        raise IndexError(f"index {idx} is out of range")
    return list(container._modules)[idx % n]


def _replace(container, named):
    """Make `named` (name, module) pairs the container's modules, in that order; through
    delattr and add_module, so that the attributes and the cached names follow."""
    for key in list(container._modules):
        delattr(container, key)
    for key, module in named:
        container.add_module(key, module)


def _renumber(container):
    _replace(container, [(str(i), m) for i, m in enumerate(container._modules.values())])


def _check_factor(container, other):
    if not isinstance(other, int):
        raise TypeError(f"unsupported operand type(s) for *: {type(container)} and "
                        f"{type(other)}")
    if other <= 0:
        raise ValueError(f"Non-positive multiplication factor {other} for {type(container)}")


def _as_parameter(value):
    """A tensor stored in a parameter container becomes a Parameter, as in PyTorch."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _described(p, type_name):
    """PyTorch's line for a container's parameter: `Parameter containing: [minigrad.float32 of
    size 2x3]` (the list names the dtype, the dict the tensor type `minigrad.FloatTensor`)."""
    return f"Parameter containing: [{type_name} of size {'x'.join(map(str, p.shape))}]"


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
        return "\n".join(f"  ({i}): {_described(p, f'minigrad.{p.dtype.name}')}"
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

    def extra_repr(self):
        return "\n".join(f"  ({k}): {_described(p, p.type())}" for k, p in self.items())

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
