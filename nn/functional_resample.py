"""`interpolate` of `torch.nn.functional` (and `upsample`): resizing (N, C, L),
(N, C, H, W) or (N, C, D, H, W) by nearest, nearest-exact, (bi/tri)linear, bicubic or area
sampling, and the antialiased bilinear and bicubic filters of (N, C, H, W).

Each mode reads every output point as a fixed weighting of input points along each dim, so a
resize is one matrix per spatial dim (`minigrad.ops.pooling.SpatialLinear`), built here with
PyTorch's coordinate rules; its gradient is the same map with the matrices transposed.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.ops.pooling import SpatialLinear, bins

# the interpolating modes name the number of spatial dims they take (0: any)
_MODES = {"nearest": 0, "nearest-exact": 0, "area": 0, "linear": 1, "bilinear": 2,
          "bicubic": 2, "trilinear": 3, "lanczos": 2}
# the antialiased filters and their half-widths (before stretching)
_FILTERS = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}
# Keys's cubic convolution: PyTorch's bicubic kernel uses A = -0.75, its antialiased
# filter A = -0.5 (PIL's)
_A_BICUBIC, _A_ANTIALIAS = -0.75, -0.5
_ALL_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
              "nearest-exact")


def _source(out, size, scale, align_corners):
    """The input coordinate each output index reads (PyTorch's area_pixel_compute_source_index
    for the linear modes)."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        return dst * ((size - 1) / (out - 1) if out > 1 else 0.0)
    return np.maximum((dst + 0.5) * scale - 0.5, 0.0)


def _cubic(x, a):
    """Keys's cubic convolution kernel at distances x (any sign)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _bicubic(m, size, out, scale, align_corners):
    """PyTorch's bicubic rows: four taps around the source point (not clamped at the border,
    unlike the linear modes' source), their indices clamped into the input."""
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = dst * ((size - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = (dst + 0.5) * scale - 0.5
    lo = np.floor(src)
    frac = src - lo
    for k in range(-1, 3):
        idx = np.clip(lo.astype(np.int64) + k, 0, size - 1)
        np.add.at(m, (np.arange(out), idx), _cubic(frac - k, _A_BICUBIC))
    return m


def _filter(x, mode):
    """The antialiasing kernels: triangle, cubic (A = -0.5) and Lanczos-3 (windowed sinc)."""
    if mode == "bicubic":
        return _cubic(x, _A_ANTIALIAS)
    if mode == "lanczos":
        return np.where(np.abs(x) < 3.0, np.sinc(x) * np.sinc(x / 3.0), 0.0)
    return np.maximum(1.0 - np.abs(x), 0.0)


def _antialiased(size, out, scale, mode, align_corners):
    """(out, size): PyTorch's separable antialiased filter (as PIL's), stretched by the scale
    when downsampling so that every input point inside the support counts, each row
    normalised to sum to one."""
    if align_corners:
        scale = (size - 1) / (out - 1) if out > 1 else 0.0
    support = _FILTERS[mode] * max(scale, 1.0)
    stretch = 1.0 / scale if scale >= 1.0 else 1.0
    m = np.zeros((out, size), np.float64)
    for i in range(out):
        center = scale * (i + 0.5)
        # C++'s truncating casts: both bounds are at least -0.5 + 0.5 before the max
        lo = max(int(center - support + 0.5), 0)
        hi = min(int(center + support + 0.5), size)
        x = (np.arange(lo, hi) - center + 0.5) * stretch
        w = _filter(x, mode)
        total = w.sum()
        m[i, lo:hi] = w / total if total != 0.0 else w
    return m


def _matrix(size, out, scale, mode, align_corners, dtype, antialias=False):
    """(out, size): the weights of the input points each output point reads."""
    if mode == "area":
        return bins(size, out, dtype)
    if antialias:
        return _antialiased(size, out, scale, mode, align_corners).astype(dtype)
    m = np.zeros((out, size), np.float64)
    rows = np.arange(out)
    if mode in ("nearest", "nearest-exact"):
        offset = 0.5 if mode == "nearest-exact" else 0.0
        src = np.minimum(np.floor((rows + offset) * scale).astype(np.int64), size - 1)
        m[rows, src] = 1.0
        return m.astype(dtype)
    if mode == "bicubic":
        return _bicubic(m, size, out, scale, align_corners).astype(dtype)
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
    (PyTorch's floor rule), "nearest-exact", "linear" (3-d input), "bilinear" and "bicubic"
    (4-d input), "trilinear" (5-d input), "area" (adaptive average pooling); align_corners as
    PyTorch's for the interpolating modes; antialias=True filters a bilinear, bicubic or
    "lanczos" (4-d input, antialias only) resize as PyTorch (and PIL) do."""
    nd = input.ndim - 2
    if mode not in _MODES or nd not in (1, 2, 3):
        raise NotImplementedError(f"interpolate: Input Error: Only 3D, 4D and 5D input "
                                  f"Tensors supported (got {input.ndim}D) for the modes: "
                                  f"{_ALL_MODES} (got {mode})")
    if antialias and not (mode in _FILTERS and nd == 2):
        raise ValueError("interpolate: Anti-alias option is restricted to bilinear, bicubic, "
                         "and lanczos modes and requires a 4-D tensor as input (got mode "
                         f"{mode!r} and input of size {list(input.shape)})")
    if _MODES[mode] and _MODES[mode] != nd:
        raise NotImplementedError(f"interpolate: Got {nd + 2}D input, but {mode} mode needs "
                                  f"{_MODES[mode] + 2}D input")
    if align_corners is not None and not _MODES[mode]:
        raise ValueError("interpolate: align_corners option can only be set with the "
                         "interpolating modes: linear | bilinear | bicubic | trilinear")
    if mode == "lanczos" and (align_corners or not antialias):
        raise ValueError("interpolate: " + ("Lanczos mode does not support align_corners=True"
                                            if align_corners else
                                            "Lanczos mode requires antialias=True"))
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
    mats = [_matrix(n, o, s, mode, bool(align_corners), input.dtype, antialias)
            for n, o, s in zip(sizes, out, scales)]
    return SpatialLinear.apply(input, mats=mats)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """The older name of `interpolate` (PyTorch warns that it is deprecated)."""
    import warnings
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)
