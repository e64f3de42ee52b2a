"""Adaptive max pooling: `adaptive_max_pool1d/2d/3d` of `torch.nn.functional` and the
AdaptiveMaxPool1d/2d/3d layers. The max over bins that cover the input, whatever its size,
so that a classifier's head sees a fixed size (AlexNet-style networks end with one).

Bin i of a dim of size n split into o bins spans [floor(i n / o), ceil((i + 1) n / o)), so
bins overlap when o does not divide n (PyTorch's rule). The positions of the maxima are found
in NumPy, then the values are gathered from the input: the gradient goes to those positions
only, and the indices are the flat positions in the input's spatial dims, as MaxUnpool reads
them.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from minigrad.creation import from_numpy
from minigrad.linalg_checks import torch_dtype_name
from minigrad.ops import AdaptiveMaxGather

from .functional_conv import batched
from .module import Module


def _bins(n, o):
    """(start, end) of the o bins covering n positions."""
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def _block_argmax(block):
    """The flat position of each row's max in block (..., K): the first of equal values, the
    last NaN (PyTorch's rule: a later element wins if greater or NaN)."""
    nan = np.isnan(block) if block.dtype.kind == "f" else np.zeros(block.shape, bool)
    last_nan = block.shape[-1] - 1 - nan[..., ::-1].argmax(-1)
    return np.where(nan.any(-1), last_nan, block.argmax(-1))


def _argmax_positions(arr, out):
    """The flat spatial position (int64) of the max of every bin: (N, C, *out)."""
    n, c, *spatial = arr.shape
    found = np.zeros((n, c) + tuple(out), np.int64)
    if found.size == 0:
        return found
    bins = [_bins(size, o) for size, o in zip(spatial, out)]
    for where in itertools.product(*(range(o) for o in out)):
        spans = [b[i] for b, i in zip(bins, where)]
        block = arr[(slice(None), slice(None)) + tuple(slice(s, e) for s, e in spans)]
        local = _block_argmax(block.reshape(n, c, block[0, 0].size))
        coords = np.unravel_index(local, tuple(e - s for s, e in spans))
        found[(slice(None), slice(None)) + where] = np.ravel_multi_index(
            tuple(k + s for k, (s, _) in zip(coords, spans)), spatial)
    return found


def _adaptive_max_pool(input, output_size, return_indices, nd, op):
    if input.ndim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"{op})")
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    sizes = (tuple(output_size) if isinstance(output_size, (tuple, list))
             else (output_size,) * nd)
    if len(sizes) != nd:
        raise RuntimeError(f"{op}(): internal error: output_size.size() must be {nd}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"{op}\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    for d in range(input.ndim - nd, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{op}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with "
                               f"dimension {d} being empty")
    x, lifted = batched(input, nd, op)
    out = tuple(n if o is None else int(o) for o, n in zip(sizes, x.shape[2:]))
    if any(o < 0 for o in out):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(out)}: {list(x.shape[:2] + out)}")
    n, c = x.shape[:2]
    positions = _argmax_positions(x.detach().numpy(), out)
    flat = x.reshape(n, c, math.prod(x.shape[2:]))
    y = AdaptiveMaxGather.apply(flat, dim=2, index=positions.reshape(n, c, math.prod(out)),
                                spatial=tuple(x.shape[2:]), bins=out).reshape(n, c, *out)
    positions = from_numpy(positions)
    if lifted:
        y, positions = y.squeeze(0), positions.squeeze(0)
    return (y, positions) if return_indices else y


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The max over output_size bins covering L: (N, C, L) or (C, L) -> (..., output_size);
    with return_indices also the position in L of each max (int64)."""
    return _adaptive_max_pool(input, output_size, return_indices, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """The max over bins covering H and W: (N, C, H, W) or (C, H, W) -> (..., *output_size),
    an int for both sizes, None keeping the input's; with return_indices also the flat
    position h * W + w of each max (int64)."""
    return _adaptive_max_pool(input, output_size, return_indices, 2, "adaptive_max_pool2d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """The max over bins covering D, H and W: (N, C, D, H, W) or (C, D, H, W) ->
    (..., *output_size); indices are flat positions (d * H + h) * W + w."""
    return _adaptive_max_pool(input, output_size, return_indices, 3, "adaptive_max_pool3d")


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """(N, C, L) or (C, L) -> (..., output_size), the max of each bin."""
    _fn = adaptive_max_pool1d


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """(N, C, H, W) or (C, H, W) -> (..., *output_size), the max of each bin."""
    _fn = adaptive_max_pool2d


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """(N, C, D, H, W) or (C, D, H, W) -> (..., *output_size), the max of each bin."""
    _fn = adaptive_max_pool3d
