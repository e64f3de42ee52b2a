"""`torch.nn.utils.prune`: zero parts of a parameter through a mask, as PyTorch does it.

Pruning `module.weight` moves the parameter to `weight_orig`, adds the buffer `weight_mask`,
and makes `weight` a plain attribute equal to `weight_orig * weight_mask`, recomputed by a
forward pre-hook before every call (so gradients reach `weight_orig` through the mask). A
second pruning of the same tensor acts on the entries the first left (a `PruningContainer`);
`remove` makes the pruned values permanent. The state-dict keys are PyTorch's. The methods
themselves are in prune_methods.py; here are the functions that apply them to a module's
tensor by name, pruning several tensors at once (`global_unstructured`), `remove` and
`is_pruned`.
"""
from __future__ import annotations

import minigrad

from .convert_parameters import parameters_to_vector
from .prune_methods import (BasePruningMethod, CustomFromMask, Identity, L1Unstructured,
                            LnStructured, PruningContainer, RandomStructured,
                            RandomUnstructured)

__all__ = ["BasePruningMethod", "CustomFromMask", "Identity", "L1Unstructured", "LnStructured",
           "PruningContainer", "RandomStructured", "RandomUnstructured", "custom_from_mask",
           "global_unstructured", "identity", "is_pruned", "l1_unstructured", "ln_structured",
           "random_structured", "random_unstructured", "remove"]


def identity(module, name):
    """Attach a mask of ones (weight_orig, weight_mask) without pruning anything."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs of `parameters` together: `pruning_method` (an
    unstructured method's class) ranks all their entries at once."""
    if isinstance(parameters, minigrad.Tensor) or not hasattr(parameters, "__iter__"):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)).detach()
                                   for m, n in parameters])
    default_mask = parameters_to_vector([
        getattr(m, n + "_mask", None) if hasattr(m, n + "_mask")
        else minigrad.ones_like(getattr(m, n)) for m, n in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    with minigrad.no_grad():
        final = container.compute_mask(scores, default_mask)
    start = 0
    for m, n in parameters:
        param = getattr(m, n)
        custom_from_mask(m, n, mask=final[start:start + param.numel()].view_as(param))
        start += param.numel()


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of `module.<name>` permanent and take its hook off."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     f"can be removed")


def is_pruned(module):
    """Whether any sub-module of `module` has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod) for _, m in module.named_modules()
               for hook in m._forward_pre_hooks.values())
