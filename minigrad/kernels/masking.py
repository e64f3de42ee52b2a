"""masked_fill's selection, out = fill where mask else x, compiled, and its checked entry point.

The plain loop is

    for i in range(x.size):
        out[i] = fill if mask[i] else x[i]

with the mask broadcast to x's shape. The common mask is attention's causal one, (L, S)
over scores (B, H, L, S): the same (L, S) block for every (b, h). So the kernel takes x as
rows (R, N) and the mask as one row of N, which masks every row of x: the causal mask is a
row of N = L * S, read from cache for every row of x, never broadcast to x's size. A mask
that varies along a leading axis (a key-padding mask (B, 1, 1, S)) is broadcast to x's size
first, one bool an element (then R = 1).

Why compiled: NumPy's masked copy (np.copyto with `where`, over a broadcast mask) walks the
elements one at a time behind its broadcasting iterator, 0.5-0.6 ns an element (59 us for
(256, 20, 20) float32, one thread, busy machine), and np.where was slower still. The loop
above is a select that LLVM vectorises: a copy's speed. It runs in the calling thread: it
moves memory at a copy's pace, and waking the pool would cost about as much as the work at
attention's sizes.

The values are the selection's, so the bits are x's or fill's, as the reference's.
"""
import numpy as np
from numba import njit

from . import policy
from . import reference as _ref
from .checks import FLOATS


# Below this many elements the reference's copy is the faster: a compiled call costs about
# 1.3 us more than NumPy's (2.2 against 0.9 us for (4, 8) float32), and the copy's per-element
# cost overtakes it near 2,500 elements ((1, 32, 32): 1.5 against 2.3 us; (16, 32, 32): 10.7
# against 4.2; the small GPT's sampling loop fills masks of up to 32 x 32 per head)
MIN_SIZE = 4096


@njit(cache=True, no_cfunc_wrapper=True, **policy.NO_COUNTING)
def masked_fill_rows(x, mask, fill, out):
    """out[r, j] = fill if mask[j] else x[r, j], for C-contiguous x and out (R, N) of one
    dtype, mask (N,) bool, fill a scalar of the dtype."""
    for r in range(x.shape[0]):
        xr, orow = x[r], out[r]
        for j in range(x.shape[1]):
            orow[j] = fill if mask[j] else xr[j]


def _mask_row(mask, shape):
    """The bool mask broadcast to `shape` (ndim >= 1, no size 0), as one C-contiguous row of
    N that masks every row of an array of `shape` seen as (size // N, N): the trailing axes
    from the first the mask does not repeat along (at least the last axis), copied only where
    the mask does not already lay them out so. Raises ValueError if it does not broadcast."""
    if (mask.ndim and mask.flags.c_contiguous and mask.ndim <= len(shape)
            and mask.shape == shape[len(shape) - mask.ndim:]):
        return mask.reshape(-1)   # already that row (the causal mask): no broadcast to build
    full = np.broadcast_to(mask, shape)
    lead = 0
    while lead < len(shape) - 1 and full.strides[lead] == 0:
        lead += 1
    return np.ascontiguousarray(full[(0,) * lead]).reshape(-1)


def masked_fill(x, mask, fill):
    """A copy of x (an array, or a NumPy scalar) with `fill` (a scalar of x's dtype) where
    the bool `mask`, broadcast to x's shape, is True. Raises ValueError if the mask does not
    broadcast. The kernel takes C-contiguous float32 and float64 arrays of MIN_SIZE elements
    or more on the "numba" backend; other inputs the NumPy reference."""
    mask = np.asarray(mask)
    if mask.dtype != np.bool_:
        raise TypeError(f"masked_fill: mask must be a bool array, got dtype {mask.dtype}")
    if (policy.numpy_backend() or type(x) is not np.ndarray or x.dtype not in FLOATS
            or not x.flags.c_contiguous or x.ndim == 0 or x.size < MIN_SIZE):
        return _ref.masked_fill(x, mask, fill)
    out = np.empty(x.shape, x.dtype)
    if not x.size:
        np.broadcast_to(mask, x.shape)   # the error, if it does not broadcast
        return out
    row = _mask_row(mask, x.shape)
    n = row.size
    # (a 0-d array of x's dtype, as the op passes, is read as its scalar: converting it again
    # cost more than the kernel on attention's masks)
    fill = fill[()] if type(fill) is np.ndarray and fill.dtype == x.dtype else x.dtype.type(fill)
    masked_fill_rows(x.reshape(-1, n), row, fill, out.reshape(-1, n))
    return out
