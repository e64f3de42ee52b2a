"""`stack_module_state`: the parameters and buffers of several models of one class stacked
into one dict each, as `torch.func.stack_module_state`; vmap over `functional_call` with them
runs the whole ensemble as one function.

    params, buffers = stack_module_state(models)       # each tensor gains a leading dim
    vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))
"""
from __future__ import annotations

import minigrad


def _stacked_leaf(tensors, name):
    grads = {t.requires_grad for t in tensors}
    if len(grads) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    with minigrad.no_grad():
        stacked = minigrad.stack([t.detach() for t in tensors])
    return stacked.requires_grad_(True) if grads.pop() else stacked


def stack_module_state(models):
    """(params, buffers): {name: the models' tensors stacked along a new dim 0}. The stacked
    parameters are new leaves (requiring grad where the models' do), not views of the models'."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]
    params = {k: _stacked_leaf([p[k] for p in all_params], k) for k in all_params[0]}
    buffers = {k: _stacked_leaf([b[k] for b in all_buffers], k) for k in all_buffers[0]}
    return params, buffers


__all__ = ["stack_module_state"]
