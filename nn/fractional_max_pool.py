"""Fractional max pooling (Graham, 2014): `fractional_max_pool2d/3d` of `torch.nn.functional`
and the FractionalMaxPool2d/3d layers. Each output position takes the max of a kernel-sized
window whose starts step through the input by a fractional stride alpha = (n - k) / (o - 1),
shifted per (sample, channel) by a random offset u in [0, 1): window i starts at
int((i + u) alpha) - int(u alpha), the last one at n - k (PyTorch's rule, computed in the
input's dtype so that the same u gives the same windows).

The offsets are `_random_samples` (N, C, nd), drawn with `torch.rand` in the input's dtype when
not given, as PyTorch draws them: after the same seed, the same windows. In 2-D the first
offset moves the windows along W and the second along H; in 3-D they are T, H, W in order.
The positions of the maxima are found in NumPy, then the values are gathered from the input:
the gradient goes to those positions only, and the indices are the flat positions in the
input's spatial dims, as MaxUnpool reads them.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.creation import from_numpy, rand
from minigrad.linalg_checks import torch_dtype_name

from .adaptive_max_pool import _block_argmax
from .functional_conv import batched
from .module import Module

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value, nd):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,) * nd


def _window_starts(samples, n, o, k):
    """The start of each of the o windows of size k over n positions, for offsets `samples`
    (N, C) in [0, 1): (N, C, o) int64. A plain loop: start[i] = int((i + u) * alpha) -
    int(u * alpha) with alpha = (n - k) / (o - 1), in the samples' dtype; start[o-1] = n - k."""
    starts = np.zeros(samples.shape + (o,), np.int64)
    if o > 1:
        kind = samples.dtype.type
        alpha = kind(n - k) / kind(o - 1)
        steps = np.arange(o, dtype=samples.dtype)
        u = samples[..., None]
        starts[...] = ((steps + u) * alpha).astype(np.int64) - (u * alpha).astype(np.int64)
    if o > 0:
        starts[..., -1] = n - k
    return starts


def _max_positions(arr, starts, kernel):
    """The flat spatial position (int64) of the max of every window: arr (N, C, *S), starts one
    (N, C, o_d) per spatial dim -> (N, C, prod(o)). Ties go to the first position in the
    window's row-major order, a NaN to the last NaN (PyTorch's loop: greater or NaN wins)."""
    n, c, *spatial = arr.shape
    nd = len(spatial)
    out = [s.shape[-1] for s in starts]
    flat = np.zeros((n, c) + (1,) * (2 * nd), np.int64)
    for d, (s, k) in enumerate(zip(starts, kernel)):
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = out[d], k
        coords = (s[..., None] + np.arange(k)).reshape(shape)
        flat = flat * spatial[d] + coords
    windows = np.broadcast_to(flat, (n, c, *out, *kernel)).reshape(n, c, math.prod(out),
                                                                  math.prod(kernel))
    values = arr.reshape(n, c, -1)[np.arange(n)[:, None, None, None],
                                   np.arange(c)[None, :, None, None], windows]
    local = _block_argmax(values)
    return np.take_along_axis(windows, local[..., None], -1)[..., 0]


def _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                         samples, nd):
    op = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an output_ratio")
    if input.ndim < nd + 1 and samples is None:  # PyTorch reads the channels to draw offsets
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.ndim, 1)}, {max(input.ndim, 1) - 1}], but got {-nd - 1})")
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{op}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    kernel = _tuple(kernel_size, nd)
    if output_size is None:
        ratios = _tuple(output_ratio, nd)
        if len(ratios) != nd:
            raise ValueError(f"{op} requires output_ratio to either be a single Int or tuple of "
                             f"Ints.")
        output_size = [int(input.shape[input.ndim - nd + d] * ratios[d]) for d in range(nd)]
    out = _tuple(output_size, nd)
    if len(kernel) != nd or len(out) != nd:
        raise RuntimeError(f"{op}: kernel_size and output_size must each be a single int or "
                           f"{nd} ints, got {kernel_size} and {output_size}")
    if input.dtype.kind != "f":
        raise NotImplementedError(f"\"{op}_out_frame\" not implemented for "
                                  f"'{torch_dtype_name(input.dtype)}'")
    x, lifted = batched(input, nd, op)
    n, c, *spatial = x.shape
    # PyTorch's 3-D check is strict: there a window may not end on the input's last position
    where, strict = ("_out", 1) if nd == 3 else ("", 0)
    for name, o, k, size in zip(_DIM_NAMES[nd], out, kernel, spatial):
        if o + k - 1 + strict > size:
            raise RuntimeError(f"{op}{where}(): pool {name} {k} too large relative to input "
                               f"{name} {size}")
    if samples is None:
        samples = rand(n, c, nd, dtype=x.dtype)
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3 or samples.shape[0] < n or samples.shape[1] != c or \
            samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples of shape ({n}, {c}, {nd}) for an input of "
                           f"shape {list(input.shape)}; got {list(samples.shape)}")
    u = samples.detach().numpy()[:n]
    # 2-D: PyTorch moves W by the first offset and H by the second; 3-D: T, H, W in order
    order = (1, 0) if nd == 2 else (0, 1, 2)
    starts = [_window_starts(u[:, :, order[d]], spatial[d], out[d], kernel[d])
              for d in range(nd)]
    positions = from_numpy(_max_positions(x.detach().numpy(), starts, kernel))
    y = x.reshape(n, c, math.prod(spatial)).gather(2, positions).reshape(n, c, *out)
    positions = positions.reshape(n, c, *out)
    if lifted:
        y, positions = y.squeeze(0), positions.squeeze(0)
    return (y, positions) if return_indices else y


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """The max of kernel_size windows at fractional strides: (N, C, H, W) or (C, H, W) ->
    (..., *output_size), or the sizes int(H * ratio), int(W * ratio); with return_indices
    also the flat position h * W + w of each max (int64)."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """The max of kernel_size windows at fractional strides: (N, C, T, H, W) or (C, T, H, W)
    -> (..., *output_size); indices are flat positions (t * H + h) * W + w."""
    return _fractional_max_pool(input, kernel_size, output_size, output_ratio, return_indices,
                                _random_samples, 3)


class _FractionalMaxPoolNd(Module):
    _fn = None
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        name = type(self).__name__
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if output_ratio is not None and not all(0 < r < 1 for r in _tuple(output_ratio, self._nd)):
            raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")
        self.kernel_size = _tuple(kernel_size, self._nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _tuple(output_size, self._nd)
        self.output_ratio = None if output_ratio is None else _tuple(output_ratio, self._nd)

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.output_size, self.output_ratio,
                              self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """(N, C, H, W) or (C, H, W) -> (..., *output_size), the max of each window, the windows'
    offsets drawn anew on every call unless `_random_samples` (N, C, 2) is given."""
    _fn = fractional_max_pool2d
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """(N, C, T, H, W) or (C, T, H, W) -> (..., *output_size), the max of each window."""
    _fn = fractional_max_pool3d
    _nd = 3
