"""`torch.nn.utils.parametrize`: a module's tensor computed from other tensors on every access.

`register_parametrization(module, "weight", P())` moves the weight to
`module.parametrizations.weight.original` (state-dict key `parametrizations.weight.original`,
as PyTorch names it) and makes `module.weight` a property of a new subclass of the module's
class that returns `P()(original)`: gradients reach `original` through it. Assigning
`module.weight = X` stores `P().right_inverse(X)` in `original`. Several parametrizations of
one tensor chain (the first registered is applied first); a `right_inverse` that returns a
sequence stores `original0`, `original1`, ... (weight_norm's g and v). Inside `cached()`, each
parametrized tensor is computed once.
"""
from __future__ import annotations

import contextlib
import copy
from collections.abc import Sequence

from minigrad.grad_mode import no_grad
from minigrad.tensor import Tensor

from ..container import ModuleDict, ModuleList
from ..module import Module, Parameter

__all__ = ["ParametrizationList", "cached", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "transfer_parametrizations_and_params",
           "type_before_parametrizations"]

_cache_enabled = 0
_cache = {}


@contextlib.contextmanager
def cached():
    """Inside the block, a parametrized tensor is computed on its first access and then reused
    (one computation for a weight used at every step of a recurrent loop, say)."""
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, x):
    if isinstance(x, Parameter):
        module.register_parameter(name, x)
    else:
        module.register_buffer(name, x)


def _set_values(original, value):
    """Make `original` hold `value` (PyTorch's `original.set_(value)`): it stays the same
    object, so optimizers holding it see the change."""
    original.data = value.detach()._array


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor and the unconstrained tensor(s) they act on:
    `original` (or `original0`, `original1`, ... when the first `right_inverse` returns a
    sequence). Calling it computes the parametrized tensor."""

    def __init__(self, modules, original, unsafe=False):
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        with no_grad():
            new = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        new = module.right_inverse(new)
                    except NotImplementedError:
                        pass
        if not isinstance(new, (Tensor, Sequence)):
            raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError(f"When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            _set_values(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(f"'right_inverse' must return a Tensor or a Sequence of "
                                     f"tensors (list, tuple...). Got element {i} of the "
                                     f"sequence with type {type(value).__name__}.")
                value = value.detach().clone()
                if isinstance(original, Parameter):
                    value = Parameter(value, original.requires_grad)
                value.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", value)
        if not self.unsafe:
            z = self()
            _check_same(z, shape, dtype,
                        "Registering a parametrization may not change the {} of the tensor, "
                        "unless `unsafe` flag is enabled.\nunparametrized {}: {}\n"
                        "parametrized {}: {}")

    def right_inverse(self, value):
        """Store `value` through the right inverses, last parametrization first (the
        assignment `module.weight = value`)."""
        with no_grad():
            for module in reversed(list(self)):
                if not hasattr(module, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(module).__name__} does not "
                                       f"implement right_inverse.")
                value = module.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"`right_inverse` should return a tensor. Got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"The tensor returned by `right_inverse` has dtype "
                                     f"{value.dtype} while `original` has dtype "
                                     f"{self.original.dtype}")
                _set_values(self.original, value)
            else:
                if not isinstance(value, Sequence):
                    raise ValueError(f"'right_inverse' must return a sequence of tensors. Got "
                                     f"{type(value).__name__}.")
                if len(value) != self.ntensors:
                    raise ValueError(f"'right_inverse' must return a sequence of tensors of "
                                     f"length {self.ntensors}. Got a sequence of length "
                                     f"{len(value)}.")
                for i, tensor in enumerate(value):
                    original_i = getattr(self, f"original{i}")
                    if not isinstance(tensor, Tensor):
                        raise ValueError(f"`right_inverse` must return a sequence of tensors. "
                                         f"Got element {i} of type {type(tensor).__name__}")
                    if original_i.dtype != tensor.dtype:
                        raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                         f"{tensor.dtype} while `original{i}` has dtype "
                                         f"{original_i.dtype}")
                    _set_values(original_i, tensor)

    def forward(self):
        modules = list(self)
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for module in modules[1:]:
            x = module(x)
        return x


def _check_same(z, shape, dtype, template):
    """PyTorch's errors for a parametrization that changes the type, dtype or shape."""
    if not isinstance(z, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
    if z.dtype != dtype:
        raise ValueError(template.format("dtype", "dtype", dtype, "dtype", z.dtype))
    if z.shape != shape:
        raise ValueError(template.format("shape", "shape", shape, "shape", z.shape))


def _inject_new_class(module):
    """Give `module` a class of its own (`ParametrizedLinear` for a Linear) to hold the
    properties; removing the last parametrization restores the original class. Pickling it
    is refused, as in PyTorch, but `copy.deepcopy` copies it (AveragedModel deep-copies the
    model it averages): without a `__deepcopy__` of its class, the plain deep copy of its
    attributes, which deepcopy would otherwise reach through the refused `__getstate__`."""
    cls = module.__class__

    def getstate(self):
        raise RuntimeError("Serialization of parametrized modules is only supported through "
                           "state_dict().")

    def default_deepcopy(self, memo):
        replica = memo.get(id(self))
        if replica is None:
            replica = memo[id(self)] = self.__new__(self.__class__)
            replica.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return replica

    attrs = {"__getstate__": getstate}
    if not hasattr(cls, "__deepcopy__"):
        attrs["__deepcopy__"] = default_deepcopy
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), attrs)


def _inject_property(module, name):
    def get_parametrized(self):
        parametrization = self.parametrizations[name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), name)
        if key not in _cache:
            _cache[key] = parametrization()
        return _cache[key]

    def set_original(self, value):
        self.parametrizations[name].right_inverse(value)

    setattr(module.__class__, name, property(get_parametrized, set_original))


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Parametrize `module.<tensor_name>` (a parameter, a buffer, or an already parametrized
    tensor, to which this one is appended) by the module `parametrization`. Unless `unsafe`,
    the result must keep the tensor's shape and dtype. Returns `module`."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            _check_same(x, y.shape, y.dtype,
                        "Registering a parametrization may not change the {} of the tensor, "
                        "unless the `unsafe` flag is enabled.\nunparametrized {}: {}\n"
                        "parametrized {}: {}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    z = parametrization.right_inverse(x)
                except NotImplementedError:
                    pass
                else:
                    _check_same(z, x.shape, x.dtype,
                                "The tensor returned by parametrization.right_inverse must "
                                "have the same {} as X.\nX.{}: {}\nright_inverse(X).{}: {}")
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = parametrizations
        _inject_property(module, tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether `module` has any parametrization (or one on `tensor_name`)."""
    parametrizations = module.__dict__.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    return len(parametrizations) > 0 if tensor_name is None else tensor_name in parametrizations


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo the parametrizations of `tensor_name`: it becomes a parameter (or buffer) again,
    holding the parametrized values if `leave_parametrized`, else the original ones."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            _set_values(original, t)
    else:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                             "that is parametrized in terms of a sequence of tensors.")
        t = getattr(module, tensor_name)
        original = Parameter(t.detach(), t.requires_grad) if t.requires_grad else t.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module):
    """The module's class as it was before any parametrization."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


def transfer_parametrizations_and_params(from_module, to_module, tensor_name=None):
    """Copy the parametrizations of `from_module` (all, or those of `tensor_name`) and their
    original tensors onto `to_module`. Returns `to_module`."""
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name)))
        for p in from_module.parametrizations[name]:
            register_parametrization(to_module, name, p)
        source, target = from_module.parametrizations[name], to_module.parametrizations[name]
        with no_grad():
            if source.is_tensor:
                _set_values(target.original, source.original)
            else:
                for i in range(source.ntensors):
                    _set_values(getattr(target, f"original{i}"),
                                getattr(source, f"original{i}"))
    return to_module
