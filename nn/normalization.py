"""The normalisation layers: layer, batch, group and RMS norm, the same formula averaged over
different axes (instance norm, batch norm's statistics per example, is in `instance_norm.py`).

Batch norm averages each feature over the batch (axis 0), so it needs a batch and keeps running
statistics for evaluation. Layer norm averages each example over its own features (the last
axes), so it works on one example alone: the Transformer's choice. Group norm averages each
example over groups of channels (a CNN's choice for small batches); RMS norm is layer norm
without subtracting the mean.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd import no_grad
from minigrad.errors import ShapeError
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

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _NormBase(Module):
    """What batch and instance norm share: num_features C, the affine weight and bias (C,)
    and, with track_running_stats, the running estimates running_mean and running_var (C,)
    with num_batches_tracked (PyTorch's buffers, in its state-dict order)."""

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
        else:  # None buffers, as PyTorch's: present as attributes, absent from state_dict
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def reset_running_stats(self):
        """Running mean 0, variance 1 and no batches counted, in place."""
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """reset_running_stats, and weight 1 and bias 0, in place."""
        self.reset_running_stats()
        with no_grad():
            if self.weight is not None:
                self.weight.fill_(1)
            if self.bias is not None:
                self.bias.zero_()

    def _check_input_dim(self, x):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """Normalise each channel (dim 1) over the batch and every dim after the channel.

    Training uses the batch's mean and biased variance and updates running estimates
    (unbiased variance) with `momentum` (None: a plain average over the batches); evaluation
    uses the running estimates.
    """

    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked._array[...] += 1
            if self.momentum is None:  # the plain average of every batch so far (PyTorch's)
                factor = 1.0 / int(self.num_batches_tracked._array)
        use_batch = self.training or self.running_mean is None
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            use_batch, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch norm of input (N, C) or (N, C, L), per channel C."""

    def _check_input_dim(self, x):
        if x.ndim not in (2, 3) or x.shape[1] != self.num_features:
            raise ShapeError(f"BatchNorm1d: expected input (N, {self.num_features}) or "
                             f"(N, {self.num_features}, L), got shape {x.shape}")


class BatchNorm2d(_BatchNorm):
    """Batch norm of images (N, C, H, W), per channel C (averaged over N, H and W)."""

    def _check_input_dim(self, x):
        if x.ndim != 4 or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm2d: expected 4D input (N, {self.num_features}, H, W), "
                             f"got shape {x.shape}")


class BatchNorm3d(_BatchNorm):
    """Batch norm of volumes (N, C, D, H, W), per channel C (averaged over N, D, H and W)."""

    def _check_input_dim(self, x):
        if x.ndim != 5 or x.shape[1] != self.num_features:
            raise ValueError(f"BatchNorm3d: expected 5D input (N, {self.num_features}, D, H, "
                             f"W), got shape {x.shape}")


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

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

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
