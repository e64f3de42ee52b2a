"""Sliding windows over the spatial dims of (N, C, *S) arrays, the common ground of convolution
and pooling: padding (and its adjoint), the windows as a strided view, and the adjoint of
reading the windows (adding each window's gradient back where it was read).

Everything works for any number of spatial dims, so a 1-d op is the 2-d op's code; the ops in
conv.py and pooling.py only say what they do with the elements at each kernel position.
"""
from __future__ import annotations

import itertools

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

# torch's padding_mode names, as np.pad's modes (their index maps, see `pad`)
_NP_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def out_size(size, kernel, stride, dilation, lo, hi, ceil_mode=False):
    """Number of window positions along one dim: PyTorch's formula, with ceil_mode's rule
    that the last window must start inside the input or its left padding."""
    span = dilation * (kernel - 1) + 1
    room = size + lo + hi - span
    if room < 0:
        return 0
    n = (-(-room // stride) if ceil_mode else room // stride) + 1
    if ceil_mode and (n - 1) * stride >= size + lo:
        n -= 1
    return n


def pad(x, pads, mode="zeros", value=0.0):
    """x (N, C, *S) padded by pads[i] = (lo, hi) on spatial dim i: with `value` for "zeros",
    else as torch's padding modes "reflect", "replicate", "circular"."""
    if not any(lo or hi for lo, hi in pads):
        return x
    if mode == "zeros":
        return np.pad(x, [(0, 0), (0, 0)] + list(pads), constant_values=value)
    for i, idx in index_maps(x.shape, pads, mode):
        x = x.take(idx, axis=2 + i)
    return x


def unpad(g, shape, pads, mode="zeros"):
    """The adjoint of `pad`: the gradient of the padded array g folded back into `shape`."""
    if not any(lo or hi for lo, hi in pads):
        return g
    if mode == "zeros":
        return g[(Ellipsis,) + tuple(slice(lo, lo + n) for (lo, _), n in zip(pads, shape[2:]))]
    # the padded copies of an element send their gradient back to it, one dim at a time
    for i, idx in reversed(list(index_maps(shape, pads, mode))):
        axis = 2 + i
        out = np.zeros(g.shape[:axis] + (shape[axis],) + g.shape[axis + 1:], g.dtype)
        np.add.at(out, (slice(None),) * axis + (idx,), g)
        g = out
    return g


def index_maps(shape, pads, mode):
    """Per spatial dim, the source index of every padded position."""
    for i, (lo, hi) in enumerate(pads):
        n = shape[2 + i]
        yield i, np.pad(np.arange(n), (lo, hi), mode=_NP_MODES[mode])


def kernel_positions(kernel, stride, dilation, out):
    """Per kernel position (in C order): its index tuple and the slices of the padded spatial
    dims it reads for every output, so that xp[..., *slices] is (N, C, *out). A loop over
    the positions does block copies and elementwise passes, much faster than copying the
    2 + 2d dimensional window view at once."""
    for offset in itertools.product(*(range(k) for k in kernel)):
        yield offset, tuple(slice(o * d, o * d + s * (n - 1) + 1, s)
                            for o, d, s, n in zip(offset, dilation, stride, out))


def windows(xp, kernel, stride, dilation, out):
    """The windows of padded xp (N, C, *S) as a view (N, C, *out, *kernel): no copy."""
    nd = len(kernel)
    spans = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))
    axes = tuple(range(2, 2 + nd))
    if any(s > n for s, n in zip(spans, xp.shape[2:])):  # no window fits (an empty output)
        return np.zeros(xp.shape[:2] + tuple(out) + tuple(kernel), xp.dtype)
    view = sliding_window_view(xp, spans, axis=axes)
    pick = ((slice(None),) * 2 + tuple(slice(0, s * o, s) if o else slice(0, 0)
                                      for s, o in zip(stride, out))
            + tuple(slice(None, None, d) for d in dilation))
    return view[pick]


def scatter_windows(part, padded_shape, kernel, stride, dilation, out, dtype):
    """The adjoint of reading the windows: an array of `padded_shape` (A, B, *S) to which
    every kernel position adds its part. part(i, offset) gives the gradient (A, B, *out) of
    the window elements at kernel position `offset` (flat index i); overlaps add up."""
    g = np.zeros(padded_shape, dtype)
    if not all(out):
        return g
    for i, (offset, where) in enumerate(kernel_positions(kernel, stride, dilation, out)):
        g[(slice(None), slice(None)) + where] += part(i, offset)
    return g
