"""The normalisation layers: layer, batch, group and RMS norm, the same formula averaged over
different axes.

Batch norm averages each feature over the batch (axis 0), so it needs a batch and keeps running
statistics for evaluation. Layer norm averages each example over its own features (the last
axes), so it works on one example alone: the Transformer's choice. Group norm averages each
example over groups of channels (a CNN's choice for small batches); RMS norm is layer norm
without subtracting the mean.
"""
from __future__ import annotations

import numpy as np

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


class _BatchNorm(Module):
    """Normalise each channel (dim 1) over the batch and every dim after the channel.

    Training uses the batch's mean and biased variance and updates running estimates
    (unbiased variance) with `momentum` (None: a plain average over the batches); evaluation
    uses the running estimates.
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        dtype = factory_dtype(device, dtype, type(self).__name__)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine = affine
        self.weight = Parameter(np.ones(num_features, dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_features, dtype)) if affine and bias else None
        self.track_running_stats = track_running_stats
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._wrap(np.zeros(num_features, dtype)))
            self.register_buffer("running_var", Tensor._wrap(np.ones(num_features, dtype)))
            self.register_buffer("num_batches_tracked", Tensor._wrap(np.zeros((), np.int64)))

    def _check_input_dim(self, x):
        raise NotImplementedError

    def forward(self, x):
        self._check_input_dim(x)
        axes = (0,) + tuple(range(2, x.ndim))
        shape = (1, -1) + (1,) * (x.ndim - 2)
        count = x.numel() // max(x.shape[1], 1)
        if self.training or not self.track_running_stats:
            if self.training and count == 1:
                raise ValueError(f"Expected more than 1 value per channel when training, got "
                                 f"input size {tuple(x.shape)}")
            if count == 0:  # an empty batch: nothing to average, the stats stay (PyTorch's)
                mean = var = Tensor._wrap(np.zeros(shape[:1] + (x.shape[1],) + shape[2:],
                                                   x.dtype))
            else:
                mean = x.mean(axes, keepdim=True)
                var = x.var(axes, keepdim=True, correction=0)
            if self.training and self.track_running_stats:
                with no_grad():
                    self.num_batches_tracked._array[...] += 1
                    if count:
                        # momentum=None: the plain average of every batch so far (PyTorch's)
                        m = (1.0 / int(self.num_batches_tracked._array) if self.momentum is None
                             else self.momentum)
                        unbiased = var._array.reshape(-1) * count / max(count - 1, 1)
                        self.running_mean._array[...] = ((1 - m) * self.running_mean._array
                                                         + m * mean._array.reshape(-1))
                        self.running_var._array[...] = ((1 - m) * self.running_var._array
                                                        + m * unbiased)
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


class BatchNorm1d(_BatchNorm):
    """Batch norm of input (N, C) or (N, C, L), per channel C."""

    def _check_input_dim(self, x):
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm1d: expected input (N, {self.num_features}) or "
                             f"(N, {self.num_features}, L), got shape {x.shape}")


class BatchNorm2d(_BatchNorm):
    """Batch norm of images (N, C, H, W), per channel C (averaged over N, H and W)."""

    def _check_input_dim(self, x):
        if x.ndim != 4 or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm2d: expected 4D input (N, {self.num_features}, H, W), "
                             f"got shape {x.shape}")


class GroupNorm(Module):
    """Normalise each example over groups of channels: input (N, C, *) -> (N, C, *), C split
    into num_groups groups; weight and bias (C,) per channel."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        dtype = factory_dtype(device, dtype, "GroupNorm")
        if num_groups <= 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        self.weight = Parameter(np.ones(num_channels, dtype)) if affine else None
        self.bias = Parameter(np.zeros(num_channels, dtype)) if affine and bias else None

    def forward(self, x):
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last dims `normalized_shape`; eps=None is
    the machine epsilon of the input's dtype (PyTorch's default)."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        dtype = factory_dtype(device, dtype, "RMSNorm")
        self.normalized_shape = ((normalized_shape,) if isinstance(normalized_shape, int)
                                 else tuple(normalized_shape))
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = (Parameter(np.ones(self.normalized_shape, dtype)) if elementwise_affine
                       else None)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")
