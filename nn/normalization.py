"""Layer norm and batch norm: the same formula, averaged over different axes.

Batch norm averages each feature over the batch (axis 0), so it needs a batch and keeps running
statistics for evaluation. Layer norm averages each example over its own features (the last
axes), so it works on one example alone: the Transformer's choice.
"""
from __future__ import annotations

import numpy as np

from minigrad import ops
from minigrad.autograd import no_grad
from minigrad.tensor import Tensor

from . import functional as F
from .module import Module, Parameter, factory_dtype


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last dims `normalized_shape`."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "LayerNorm")
        self.normalized_shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                                 else tuple(normalized_shape))
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine else None
        self.bias = (Parameter(np.zeros(self.normalized_shape, dtype))
                     if elementwise_affine and bias else None)

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class BatchNorm1d(Module):
    """Normalise each feature over the batch: input (N, C) or (N, C, L).

    Training uses the batch's mean and biased variance and updates running estimates
    (unbiased variance) with `momentum`; evaluation uses the running estimates.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        dtype = factory_dtype(device, dtype, "BatchNorm1d")
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine = affine
        self.weight = Parameter(np.ones(num_features, dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype)) if affine and bias else None
        self.track_running_stats = track_running_stats
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._wrap(np.zeros(num_features, dtype)))
            self.register_buffer("running_var", Tensor._wrap(np.ones(num_features, dtype)))
            self.register_buffer("num_batches_tracked", Tensor._wrap(np.zeros((), np.int64)))

    def forward(self, x):
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm1d: expected input (N, {self.num_features}) or "
                             f"(N, {self.num_features}, L), got shape {x.shape}")
        axes = (0,) if x.ndim == 2 else (0, 2)
        shape = (1, -1) if x.ndim == 2 else (1, -1, 1)
        count = x.shape[0] * (x.shape[2] if x.ndim == 3 else 1)
        if self.training or not self.track_running_stats:
            if self.training and count <= 1:
                raise ValueError(f"Expected more than 1 value per channel when training, got "
                                 f"input size {tuple(x.shape)}")
            mean = x.mean(axes, keepdim=True)
            var = x.var(axes, keepdim=True, correction=0)
            if self.training and self.track_running_stats:
                with no_grad():
                    m = self.momentum
                    unbiased = var._array.reshape(-1) * count / max(count - 1, 1)
                    self.running_mean._array[...] = (1 - m) * self.running_mean._array + m * mean._array.reshape(-1)
                    self.running_var._array[...] = (1 - m) * self.running_var._array + m * unbiased
                    self.num_batches_tracked._array[...] += 1
        else:
            mean = self.running_mean.reshape(shape)
            var = self.running_var.reshape(shape)
        out = (x - mean) / (var + self.eps).sqrt()
        if self.weight is not None:
            out = out * self.weight.reshape(shape)
        if self.bias is not None:
            out = out + self.bias.reshape(shape)
        return out

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")
