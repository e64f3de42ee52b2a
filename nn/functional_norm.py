"""`group_norm` and `rms_norm` of `torch.nn.functional`: layer norm's per-example statistics
over other sets of features, composed from differentiable tensor ops.

Group norm normalises each example over groups of channels (and every position), so it does
not depend on the batch as batch norm does; RMS norm divides by the root mean square of the
last dims without subtracting their mean.
"""
from __future__ import annotations

import numpy as np


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """input (N, C, *) normalised over each group of C / num_groups channels and all of *,
    then scaled and shifted per channel by weight (C,) and bias (C,)."""
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected at least 2 dimensions for input tensor but "
                           f"received {input.ndim}")
    n, c = input.shape[:2]
    if num_groups <= 0 or c % num_groups:
        raise RuntimeError(f"group_norm: expected number of channels in input to be divisible "
                           f"by num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and tuple(t.shape) != (c,):
            raise RuntimeError(f"group_norm: expected {name} to be a vector of size equal to "
                               f"the number of channels in input, but got {name} of shape "
                               f"{list(t.shape)} and input of shape {list(input.shape)}")
    if input.numel() == 0:
        out = input * 1.0
    else:
        groups = input.reshape(n, num_groups, -1)
        mean = groups.mean(2, keepdim=True)
        var = groups.var(2, keepdim=True, correction=0)
        out = ((groups - mean) / (var + eps).sqrt()).reshape(input.shape)
    shape = (1, c) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """input (..., *normalized_shape) / sqrt(mean(input^2 over normalized_shape) + eps) *
    weight (normalized_shape); eps=None is the machine epsilon of input's dtype (PyTorch's)."""
    shape = ((normalized_shape,) if isinstance(normalized_shape, int)
             else tuple(normalized_shape))
    if tuple(input.shape[input.ndim - len(shape):]) != shape or len(shape) > input.ndim:
        raise RuntimeError(f"rms_norm: given normalized_shape={list(shape)}, expected input "
                           f"with shape [*, {', '.join(map(str, shape))}], but got input of "
                           f"size {list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"rms_norm: expected weight to be of same shape as normalized_shape, "
                           f"but got weight of shape {list(weight.shape)} and normalized_shape "
                           f"= {list(shape)}")
    if eps is None:
        eps = float(np.finfo(input.dtype).eps)
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    out = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight
