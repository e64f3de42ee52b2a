"""`nn.parallel`: PyTorch's data-parallel wrappers, on a machine with one CPU and no GPU.

`DataParallel` splits a batch across GPUs; with none, PyTorch runs the wrapped module
directly, and so does minigrad: the wrapper's parameters and state dict are the module's, under
the prefix `module.` (as checkpoints of wrapped models have them). `DistributedDataParallel`
needs a process group, which minigrad cannot start (see `minigrad.distributed`), so building
one raises PyTorch's "not initialized" error; the class exists for imports and for
`isinstance(model, DistributedDataParallel)` checks.
"""
from __future__ import annotations

from minigrad.platform.device import device as _device

from .module import Module


class DataParallel(Module):
    """Runs `module` on the CPU (PyTorch's DataParallel without GPUs). `device_ids` and
    `output_device` may name GPUs, as in PyTorch, which has none to use and ignores them."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: expected a Module, got {type(module).__name__}")
        for d in list(device_ids or []) + ([output_device] if output_device is not None else []):
            _device(d)  # a malformed device is an error even where none is used
        self.module = module
        self.dim = dim
        self.device_ids, self.output_device = [], None

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class DistributedDataParallel(Module):
    """Needs a process group (`distributed.init_process_group`), which minigrad cannot start."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **kwargs):
        raise ValueError("DistributedDataParallel: Default process group has not been "
                         "initialized, please make sure to call init_process_group. (minigrad "
                         "has no distributed backend: use the module itself, in one process)")
