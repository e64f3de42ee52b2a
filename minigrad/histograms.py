"""`histc`: the counts of a tensor's elements in `bins` equal bins over [min, max] (by
default the elements' own range, which a NaN or inf among them makes an error), as PyTorch's.
An element equal to max counts in the last bin; elements outside a given range (and NaN) are
left out. The counts have the input's float dtype and no gradient, as PyTorch's.
"""
from __future__ import annotations

import numpy as np

from .autograd import function
from .linalg_checks import torch_dtype_name

__all__ = ["histc"]


def histc(input, bins=100, min=0, max=0):  # noqa: A002  (PyTorch's argument names)
    """(bins,) counts of input's elements (any shape) over [min, max]; min == max takes the
    elements' minimum and maximum, widened by 1 each way when those are equal too."""
    a = input._array
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"histogram_cpu" not implemented for '
                                  f"'{torch_dtype_name(a.dtype)}' (histc takes floating-point "
                                  f"tensors)")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0 (histc)")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min (min {min}, max {max})")
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())  # NaN among them: the range is not finite
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    x = a.ravel()
    x = x[(x >= lo) & (x <= hi)]
    # PyTorch's position arithmetic, in the input's dtype: (x - lo) * bins / (hi - lo)
    lo_, hi_ = a.dtype.type(lo), a.dtype.type(hi)
    pos = ((x - lo_) * a.dtype.type(bins) / (hi_ - lo_)).astype(np.int64)
    counts = np.bincount(np.minimum(pos, bins - 1), minlength=bins)
    return function.Tensor._wrap(counts.astype(a.dtype))
