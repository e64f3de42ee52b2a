"""Reverse-mode automatic differentiation, under `torch.autograd`'s names.

    function.py      graph nodes and `Function.apply`, which runs an op and records its node
    engine.py        the backward pass (`run_backward`)
    versions.py      version counters: in-place changes to saved tensors are caught
    hooks.py         tensor hooks and `retain_grad`
    anomaly_mode.py  `detect_anomaly`
    adoption.py      whether a leaf may keep a gradient array without copying it
    gradcheck.py     `gradcheck`, autograd's gradients against central differences

The core's modules import the submodules they need, never a name from this file, so
`gradcheck` (which needs `Tensor`) is exported here without an import cycle.
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
