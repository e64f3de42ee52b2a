"""The sampling points of grid_sample shared by its ops (`functional_grid.GridSample2d`,
`grid_sample_taps.GridSampleTaps`): grid coordinates in [-1, 1] as pixel indices under
PyTorch's padding rules, and the reads and writes of an image (N, C, *S) flattened to
(N, C, prod(S)) at a point's pixel."""
from __future__ import annotations

import numpy as np

__all__ = ["gather", "reflect", "scatter", "scatter_tensor", "source_index"]


def source_index(coord, size, padding_mode, align_corners):
    """Grid coordinates in [-1, 1] as pixel indices of an axis of `size` pixels, after the
    padding rule, and the derivative of the index by the coordinate (PyTorch's formulas)."""
    dt = coord.dtype.type
    if align_corners:
        scale = dt(size - 1) / dt(2)
        index = (coord + dt(1)) * scale
    else:
        scale = dt(size) / dt(2)
        index = (coord + dt(1)) * scale - dt(0.5)
    slope = np.full(coord.shape, scale, dtype=coord.dtype)
    if padding_mode == "reflection":
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        index, flip = reflect(index, low, high)
        slope = slope * flip
    if padding_mode in ("border", "reflection"):
        inside = (index > 0) & (index < size - 1)
        slope = np.where(inside, slope, dt(0))
        index = np.clip(index, dt(0), dt(size - 1))
    return index, slope


def reflect(index, twice_low, twice_high):
    """Reflect indices into [twice_low / 2, twice_high / 2] about its ends, as often as
    needed; the second value is +-1, the derivative of the reflection."""
    dt = index.dtype.type
    if twice_low == twice_high:
        return np.zeros_like(index), np.zeros_like(index)
    low, span = dt(twice_low) / dt(2), dt(twice_high - twice_low) / dt(2)
    shifted = index - low
    sign = np.where(shifted < 0, dt(-1), dt(1))
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    odd = np.floor(shifted / span).astype(np.int64) % 2 == 1
    return (np.where(odd, span - extra + low, extra + low).astype(index.dtype),
            np.where(odd, -sign, sign).astype(index.dtype))


def gather(flat, index, ok):
    """flat (N, C, H*W) at index (N, P) -> (N, C, P), 0 where not ok."""
    vals = np.take_along_axis(flat, index[:, None, :], axis=2)
    return np.where(ok[:, None, :], vals, flat.dtype.type(0))  # not 0 * an inf read in place


def scatter(values, index, ok, shape):
    """The transpose of gather: values (N, C, P) added into (N, C, H*W) at index (N, P)."""
    n, c, hw = shape
    base = (np.arange(n)[:, None, None] * c + np.arange(c)[None, :, None]) * hw
    where = (base + index[:, None, :]).reshape(-1)
    return np.bincount(where, weights=(values * ok[:, None, :]).reshape(-1),
                       minlength=n * c * hw).reshape(shape)


def scatter_tensor(values, index, shape):
    """scatter on Tensors: values (N, C, P) added into zeros (N, C, H*W) at index (N, P)."""
    from minigrad.creation import zeros
    spread = np.ascontiguousarray(np.broadcast_to(index[:, None, :], values.shape))
    return zeros(*shape, dtype=values.dtype).scatter_add(2, spread, values)
