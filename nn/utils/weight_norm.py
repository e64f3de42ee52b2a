"""The older `torch.nn.utils.weight_norm`: a forward pre-hook recomputes `weight` from the
parameters `weight_g` (the norms) and `weight_v` (the direction) before every call; their
state-dict keys are `weight_g` and `weight_v`, as PyTorch's. PyTorch deprecates it in favour
of `parametrizations.weight_norm` (which loads its state dicts), and so it warns here too."""
from __future__ import annotations

import warnings

from ..module import Parameter
from .parametrizations import norm_except_dim, weight_norm_of

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


class WeightNorm:
    """The pre-hook: `module.<name>` = g * v / ||v||, the norm over every dim but `dim`."""

    def __init__(self, name, dim):
        self.name, self.dim = name, -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_of(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        warnings.warn("torch.nn.utils.weight_norm is deprecated in favor of "
                      "torch.nn.utils.parametrizations.weight_norm.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        delattr(module, name)
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2, fn.dim)
                                                         .detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        weight = self.compute_weight(module)
        delattr(module, self.name)
        delattr(module, self.name + "_g")
        delattr(module, self.name + "_v")
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split `module.<name>` into `<name>_g` and `<name>_v`, recombined before each forward.
    `dim=None` takes the norm over the whole tensor. Returns `module`."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Make `module.<name>` a plain parameter again, holding g * v / ||v||."""
    return remove_hook(module, name, WeightNorm, "weight_norm")


def remove_hook(module, name, kind, what):
    """Undo the pre-hook of class `kind` on `module.<name>` (the legacy weight and spectral
    norm's `remove_*`)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, kind) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"{what} of '{name}' not found in {module}")
