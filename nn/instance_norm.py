"""The instance norm layers InstanceNorm1d, InstanceNorm2d and InstanceNorm3d: each example's
channels normalised over their own positions (`F.instance_norm`), the normalisation of style
transfer and CycleGAN generators.

They share batch norm's arguments and buffers (`_NormBase`) with other defaults: no affine
weight and no running statistics unless asked for. With track_running_stats, training still
uses each example's statistics and moves the running ones; evaluation uses the running ones.
"""
from __future__ import annotations

import warnings

from .functional_batch_norm import instance_norm
from .normalization import _NormBase


class _InstanceNorm(_NormBase):
    spatial = None  # the number of dims after the channel

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):
        unbatched = self.spatial + 1
        if input.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"expected {unbatched}D or {unbatched + 1}D input (got "
                             f"{input.ndim}D input)")
        feature_dim = input.ndim - unbatched
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        x = input.unsqueeze(0) if input.ndim == unbatched else input
        out = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            0.0 if self.momentum is None else self.momentum, self.eps)
        return out.squeeze(0) if input.ndim == unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or (C, L): each example's channel over L."""
    spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of images (N, C, H, W) or (C, H, W): each example's channel over H, W."""
    spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance norm of volumes (N, C, D, H, W) or (C, D, H, W): each example's channel over
    D, H and W."""
    spatial = 3
