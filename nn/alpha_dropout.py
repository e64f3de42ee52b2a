"""Alpha dropout: `alpha_dropout` and `feature_alpha_dropout` of `torch.nn.functional` and the
AlphaDropout and FeatureAlphaDropout layers, the dropout of self-normalising networks (SELU).

A dropped unit takes SELU's negative saturation value -alpha * scale instead of 0, and the
result is moved by an affine map chosen so that an input of mean 0 and variance 1 keeps them
(Klambauer et al., 2017). The masks come from minigrad's seeded stream: one draw per element,
or per channel (N, C) for the feature form.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.creation import from_numpy
from minigrad.random import engine, generator, pytorch_dropout_enabled
from minigrad.random_draws import bernoulli

from .channel_dropout import _check_p
from .channel_dropout import _DropoutNd

# SELU's scale * alpha: the value a dropped unit is given (before the affine correction)
_ALPHA = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, mask_shape, op):
    _check_p(p, op)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:  # PyTorch multiplies by zero then
        return input.mul_(0.0) if inplace else input * 0.0
    if pytorch_dropout_enabled():  # PyTorch's draws: bernoulli_(1 - p) of the mask's shape
        dtype = np.dtype(input.dtype)
        keep = bernoulli(engine(), np.array([1.0 - p]), math.prod(mask_shape)).reshape(
            mask_shape).astype(dtype)
    else:
        keep = (generator().random(mask_shape) >= p).astype(input.dtype)
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    scale = from_numpy(keep * a)
    shift = from_numpy(((keep - 1) * (_ALPHA * a) + _ALPHA * a * p).astype(input.dtype))
    if inplace:
        return input.mul_(scale).add_(shift)
    return input * scale + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of each element of input (any shape) with probability p while training."""
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape), "alpha_dropout")


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels: one draw per entry of input's first two dims (N, C)."""
    if training and 0.0 < p and input.ndim < 2:
        raise RuntimeError(f"Feature dropout requires at least 2 dimensions in the input "
                           f"(feature_alpha_dropout: input of shape {list(input.shape)})")
    shape = tuple(input.shape[:2]) + (1,) * max(input.ndim - 2, 0)
    return _alpha_dropout(input, p, training, inplace, shape, "feature_alpha_dropout")


class AlphaDropout(_DropoutNd):
    """Alpha dropout of every element while training (keeps SELU's mean 0 and variance 1)."""

    def forward(self, input):
        return alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels of (N, C, *) while training."""

    def forward(self, input):
        return feature_alpha_dropout(input, self.p, self.training, self.inplace)
