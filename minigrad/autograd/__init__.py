"""Reverse-mode automatic differentiation, under `torch.autograd`'s names.

    op.py            graph nodes and `Op.apply`, which runs an op (on arrays) and records its node
    function.py      `Function`, PyTorch's custom function on tensors (forward, backward, ctx)
    function_nodes.py  its graph nodes: how the engine runs a custom Function's backward
    function_jvp.py  its forward mode: the `jvp` staticmethod inside `forward_ad.dual_level()`
    engine.py        the first-order backward pass (`run_backward`)
    graph_engine.py  the engine's general form: several outputs, chosen inputs, and
                     `create_graph` (each node's tensor-level rule, `minigrad.graph_rules`)
    gradients.py     `grad` and `backward`, PyTorch's two entry points to it
    versions.py      version counters: in-place changes to saved tensors and indices are caught
    views.py         views and in-place writes: a write rebases views and passes through them
    hooks.py         tensor hooks and `retain_grad`
    anomaly_mode.py  `detect_anomaly` and `set_detect_anomaly`
    adoption.py      whether a gradient array is the engine's alone: a leaf keeps it without a
                     copy, later gradients are added into it
    gradcheck.py     `gradcheck` and `gradgradcheck`, against central differences
    functional.py    `jacobian`, `hessian`, `vjp`, `jvp`, `hvp`, `vhp`
    variable.py      `Variable`, older scripts' wrapper: every tensor is one
    forward_ad.py    forward mode with dual numbers (its rules: `minigrad.jvp_rules`)
    profiler.py      the older profiler's names (`minigrad.profiler` has it), loaded on use

The core's modules import the submodules they need, never a name from this file, so
`gradcheck` (which needs `Tensor`) is exported here without an import cycle.
"""
from ..grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                         set_grad_enabled)
from . import forward_ad, functional
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .op import AccumulateGrad, Node, Op, RemovableHandle, add_record_hook
from .function import Function
from .gradcheck import gradcheck, gradgradcheck
from .gradients import backward, grad
from .variable import Variable
from .versions import bump_version

__all__ = ["AccumulateGrad", "Function", "Node", "Op", "RemovableHandle", "Variable",
           "add_record_hook", "backward", "bump_version", "detect_anomaly", "enable_grad", "forward_ad",
           "functional", "grad", "gradcheck", "gradgradcheck", "inference_mode",
           "is_grad_enabled", "no_grad", "set_detect_anomaly",
           "set_grad_enabled"]


def __getattr__(name):
    # `autograd.profiler` is loaded on first use: it imports minigrad.profiler, which imports
    # this package's modules
    if name == "profiler":
        import importlib
        return importlib.import_module(f"{__name__}.profiler")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
