"""`interpolate` of `torch.nn.functional` (and `upsample`): resizing (N, C, L) or
(N, C, H, W) by nearest, nearest-exact, (bi)linear or area sampling.

Each mode reads every output point as a fixed weighting of input points along each dim, so a
resize is one matrix per spatial dim (`minigrad.ops.pooling.SpatialLinear`), built here with
PyTorch's coordinate rules; its gradient is the same map with the matrices transposed.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.ops.pooling import SpatialLinear, bins

_MODES = {"nearest": 0, "nearest-exact": 0, "area": 0, "linear": 1, "bilinear": 2}
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact"


def _source(out, size, scale, align_corners):
    """The input coordinate each output index reads (PyTorch's area_pixel_compute_source_index
    for the linear modes)."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return dst * ((size - 1) / (out - 1) if out > 1 else 0.0)
    return np.maximum((dst + 0.5) * scale - 0.5, 0.0)


def _matrix(size, out, scale, mode, align_corners, dtype):
    """(out, size): the weights of the input points each output point reads."""
    if mode == "area":
        return bins(size, out, dtype)
    m = np.zeros((out, size), np.float64)
    rows = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        offset = 0.5 if mode == "nearest-exact" else 0.0
        src = np.minimum(np.floor((rows + offset) * scale).astype(np.int64), size - 1)
        m[rows, src] = 1.0
        return m.astype(dtype)
    src = _source(out, size, scale, align_corners)
    lo = np.minimum(np.floor(src).astype(np.int64), size - 1)
    hi = np.minimum(lo + 1, size - 1)
    frac = src - lo
    np.add.at(m, (rows, lo), 1.0 - frac)
    np.add.at(m, (rows, hi), frac)
    return m.astype(dtype)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize input (N, C, *S) to `size`, or to floor(S * scale_factor), by `mode`: "nearest"
    (PyTorch's floor rule), "nearest-exact", "linear" (3-d input), "bilinear" (4-d input),
    "area" (adaptive average pooling); align_corners as PyTorch's for the linear modes."""
    nd = input.ndim - 2
    if mode not in _MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not supported (minigrad has "
                                  f"nearest | nearest-exact | linear | bilinear | area; "
                                  f"PyTorch's are {_ALL_MODES})")
    if nd not in (1, 2):
        raise NotImplementedError(f"interpolate: expected a 3-d (N, C, L) or 4-d (N, C, H, W) "
                                  f"input, got input of size {list(input.shape)}")
    if _MODES[mode] and _MODES[mode] != nd:
        raise NotImplementedError(f"interpolate: got {nd + 2}D input, but {mode} mode needs "
                                  f"{_MODES[mode] + 2}D input")
    if align_corners is not None and not _MODES[mode]:
        raise ValueError("interpolate: align_corners option can only be set with the "
                         "interpolating modes: linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported")
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: " + ("either size or scale_factor should be defined"
                                            if size is None else
                                            "only one of size or scale_factor should be defined"))
    sizes = tuple(input.shape[2:])
    if size is not None:
        out = tuple(size) if isinstance(size, (tuple, list)) else (size,) * nd
        if len(out) != nd:
            raise ValueError(f"interpolate: input and output must have the same number of "
                             f"spatial dimensions, but got input with spatial dimensions of "
                             f"{list(sizes)} and output size of {tuple(out)}")
        out = tuple(int(o) for o in out)
        scales = tuple(n / o if o else 0.0 for n, o in zip(sizes, out))
    else:
        factors = (tuple(scale_factor) if isinstance(scale_factor, (tuple, list))
                   else (scale_factor,) * nd)
        if len(factors) != nd:
            raise ValueError(f"interpolate: scale_factor {scale_factor} must have one value "
                             f"per spatial dimension of the input of size {list(input.shape)}")
        out = tuple(int(math.floor(n * f)) for n, f in zip(sizes, factors))
        # PyTorch maps coordinates by the given factor unless asked to recompute it
        scales = (tuple(n / o if o else 0.0 for n, o in zip(sizes, out))
                  if recompute_scale_factor else tuple(1.0 / f for f in factors))
    if any(o <= 0 for o in out):
        raise ValueError(f"interpolate: the output size {list(out)} must be positive (input "
                         f"of size {list(input.shape)})")
    if input.dtype.kind != "f":
        raise RuntimeError(f"interpolate: expected a floating input, got {input.dtype}")
    if mode == "area":
        scales = (0.0,) * nd
    mats = [_matrix(n, o, s, mode, bool(align_corners), input.dtype)
            for n, o, s in zip(sizes, out, scales)]
    return SpatialLinear.apply(input, mats=mats)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """The older name of `interpolate` (PyTorch warns that it is deprecated)."""
    import warnings
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)
