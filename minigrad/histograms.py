"""`histc` and `histogram`. `histc`: the counts of a tensor's elements in `bins` equal bins over [min, max] (by
default the elements' own range, which a NaN or inf among them makes an error), as PyTorch's.
An element equal to max counts in the last bin; elements outside a given range (and NaN) are
left out. The counts have the input's float dtype and no gradient, as PyTorch's. `histogram` also
returns the bins' edges, takes the edges themselves instead of a count, weights and
`density` (counts divided by their total and the bins' widths).
"""
from __future__ import annotations

import numpy as np

from .autograd import op as autograd_op
from .linalg_checks import torch_dtype_name

__all__ = ["histc", "histogram"]


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
    return autograd_op.Tensor._wrap(counts.astype(a.dtype))


def _edges(a, bins, range):  # noqa: A002
    """The bin edges: bins + 1 equal steps over range (the elements' own, widened by 0.5 each
    way when it is one point, [0, 1] when there are none), in a's dtype."""
    if range is not None:
        lo, hi = (float(v) for v in range)
        if lo > hi:
            raise ValueError(f"torch.histogramdd: min should not exceed max, but got min {lo} "
                             f"max {hi} for dimension 0")
    elif a.size:
        lo, hi = float(a.min()), float(a.max())
    else:
        lo, hi = 0.0, 1.0
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo}, {hi}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return np.linspace(lo, hi, bins + 1).astype(a.dtype)


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of input's elements: `bins` equal bins over `range` (or a 1-D tensor
    of increasing edges); an element on an inner edge counts in the bin to its right, one on
    the last edge in the last bin. Weights (input's shape and dtype) add instead of 1."""
    from . import return_types
    a = input._array
    if a.dtype.kind != "f":
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{torch_dtype_name(a.dtype)}'")
    if isinstance(bins, autograd_op.Tensor):
        edges = bins._array.astype(a.dtype)
        if edges.ndim != 1 or edges.size < 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension and "
                               f"at least 1 element, got shape {edges.shape}")
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogramdd(): bins must be > 0, but got {bins} for "
                               f"dimension 0")
        edges = _edges(a, int(bins), range)
    w = None
    if weight is not None:
        w = weight._array
        if w.dtype != a.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({torch_dtype_name(a.dtype)}), and "
                               f"weight({torch_dtype_name(w.dtype)})")
        if w.shape != a.shape:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should "
                               f"have the same shape as the input tensor excluding its "
                               f"innermost dimension, got {w.shape} and {a.shape}")
        w = w.ravel()
    n = edges.size - 1
    x = a.ravel()
    inside = (x >= edges[0]) & (x <= edges[-1]) if n > 0 else np.zeros(x.shape, bool)
    pos = np.minimum(np.searchsorted(edges, x[inside], side="right") - 1, n - 1)
    hist = np.bincount(pos, None if w is None else w[inside], minlength=n).astype(a.dtype)
    if density and n:
        total = hist.sum()
        hist = (hist / (total * np.diff(edges))).astype(a.dtype)
    return return_types.histogram(autograd_op.Tensor._wrap(hist), autograd_op.Tensor._wrap(edges))
