"""Channel dropout: `dropout1d`, `dropout2d` and `dropout3d` of `torch.nn.functional` and the
Dropout1d, Dropout2d and Dropout3d layers. Neighbouring pixels of a feature map are strongly
correlated, so dropping single elements regularises a CNN little; these drop whole channels
(N, C) at once, scaling the kept ones by 1 / (1 - p), from minigrad's seeded stream."""
from __future__ import annotations

import warnings

import numpy as np

from minigrad.creation import from_numpy
from minigrad.random import engine, generator, pytorch_dropout_enabled
from minigrad.random_draws import dropout_mask

from .module import Module


def _check_p(p, op):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")


def _feature_dropout(input, p, training, inplace, lead=2):
    """input times a mask that is 0 or 1 / (1 - p) per entry of its first `lead` dims
    ((n, c), or c alone for an unbatched input)."""
    if not training or p == 0.0:
        return input
    channels = tuple(input.shape[:lead])
    if pytorch_dropout_enabled():  # PyTorch's: nothing drawn for p == 1 or no elements
        if p == 1.0 or input.numel() == 0:
            return input.mul_(0.0) if inplace else input * 0.0
        scale = dropout_mask(engine(), channels, p, np.dtype(input.dtype))
    else:
        keep = generator().random(channels) >= p
        scale = np.where(keep, 1.0 / (1.0 - p) if p < 1.0 else 0.0, 0.0).astype(input.dtype)
    mask = from_numpy(scale.reshape(channels + (1,) * (input.ndim - lead)))
    return input.mul_(mask) if inplace else input * mask


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) with probability p, scaling the rest."""
    _check_p(p, "dropout1d")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a "
                           f"{input.ndim}D input of size {list(input.shape)}")
    return _feature_dropout(input, p, training, inplace, lead=input.ndim - 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) with probability p, scaling the rest. A 3-d input
    is taken as (N, C, L), with PyTorch's warning."""
    _check_p(p, "dropout2d")
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      f"deprecated; dropout2d drops channels of (N, C, H, W) inputs",
                      stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) with probability p, scaling the
    rest; other inputs are taken as unbatched, with PyTorch's warning."""
    _check_p(p, "dropout3d")
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      f"deprecated and will result in an error in a future release; dropout3d "
                      f"drops channels of (N, C, D, H, W) or (C, D, H, W) inputs", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, lead=2 if input.ndim == 5 else 1)


class _DropoutNd(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _check_p(p, type(self).__name__)
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_DropoutNd):
    """Channel dropout of (N, C, L) or (C, L) while training."""

    def forward(self, input):
        return dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Channel dropout of (N, C, H, W) while training."""

    def forward(self, input):
        return dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """Channel dropout of (N, C, D, H, W) or (C, D, H, W) while training."""

    def forward(self, input):
        return dropout3d(input, self.p, self.training, self.inplace)
