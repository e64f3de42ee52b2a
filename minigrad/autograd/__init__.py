"""Reverse-mode automatic differentiation, under `torch.autograd`'s names.

    function.py      graph nodes and `Function.apply`, which runs an op and records its node
    engine.py        the backward pass (`run_backward`)
    versions.py      version counters: in-place changes to saved tensors and indices are caught
    views.py         views and in-place writes: a write rebases views and passes through them
    hooks.py         tensor hooks and `retain_grad`
    anomaly_mode.py  `detect_anomaly`
    adoption.py      whether a leaf may keep a gradient array without copying it
    gradcheck.py     `gradcheck`, autograd's gradients against central differences

Nothing in the core imports this package's `__init__`: the engine's modules are imported
directly, so `gradcheck` (which needs `Tensor`) can be exported here without a cycle.
"""
from ..grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                         set_grad_enabled)
from .anomaly_mode import detect_anomaly
from .function import AccumulateGrad, Function, Node, RemovableHandle, add_record_hook
from .gradcheck import gradcheck
from .versions import bump_version

__all__ = ["AccumulateGrad", "Function", "Node", "RemovableHandle", "add_record_hook",
           "bump_version", "detect_anomaly", "enable_grad", "gradcheck", "inference_mode",
           "is_grad_enabled", "no_grad", "set_grad_enabled"]
