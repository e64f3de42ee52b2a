"""SyncBatchNorm: batch norm whose statistics span every process of a distributed run.

In PyTorch's data-parallel training each process sees a slice of the batch, and SyncBatchNorm
gathers the per-channel sums of all of them, so that the mean and variance are the whole
batch's. minigrad trains in one process (`distributed.is_available()` is False), where the
whole batch is the process's own: the layer computes what BatchNorm computes, over any input
(N, C, ...), as PyTorch's does in a run of one process. Training scripts convert their model
with `SyncBatchNorm.convert_sync_batchnorm(model)` before wrapping it for distributed
training; that conversion works here as in PyTorch, keeping the same parameters and buffers.
"""
from __future__ import annotations

from minigrad.autograd import no_grad

from .module import Module
from .normalization import _BatchNorm


class SyncBatchNorm(_BatchNorm):
    """Batch norm of input (N, C, ...) per channel C, its statistics over the whole batch."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, x):
        if x.ndim < 2:
            raise ValueError(f"expected at least 2D input (got {x.ndim}D input)")
        if x.shape[1] != self.num_features:
            raise ValueError(f"SyncBatchNorm: expected input (N, {self.num_features}, ...), "
                             f"got shape {x.shape}")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group=None) -> Module:
        """`module` with every BatchNorm1d/2d/3d inside it (or itself) replaced by a
        SyncBatchNorm holding the same parameter and buffer tensors and training flag."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, SyncBatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group)
            if module.affine:
                with no_grad():
                    out.weight, out.bias = module.weight, module.bias
            out.running_mean, out.running_var = module.running_mean, module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out
