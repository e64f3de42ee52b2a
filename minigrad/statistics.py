"""Summary statistics PyTorch has beside sum and mean: `median` (the lower median, with the
index it was found at along a dim), `kthvalue` (the k-th smallest along a dim, with its
index), `quantile` (interpolated between order statistics), `var_mean` and `std_mean`
(both in one call, as a tuple) and `count_nonzero`.

median along a dim is a `gather` at the index found (so the gradient goes to that element, as
PyTorch's); the median of all elements is one small op whose gradient PyTorch spreads evenly
over every element equal to the result, which `MedianAll` does too. A NaN in a row makes its
median NaN, found at the row's first NaN.
"""
from __future__ import annotations

import numpy as np

from . import return_types
from .autograd.op import Op
from .graph_rules import constant, rule
from .jvp_rules import jvp_rule
from .ops._util import normalize_dim, normalize_dims

__all__ = ["count_nonzero", "kthvalue", "median", "quantile", "std_mean", "var_mean"]


def _median_index(a, axis):
    """The index of the lower median along `axis` (the first NaN where a row has one): a stable
    sort's element (n - 1) // 2, so among equal values the first in order counts."""
    order = np.argsort(a, axis=axis, kind="stable")
    n = a.shape[axis]
    index = np.take(order, [(n - 1) // 2], axis=axis)
    if a.dtype.kind == "f":
        nan = np.isnan(a)
        has_nan = nan.any(axis=axis, keepdims=True)
        index = np.where(has_nan, np.argmax(nan, axis=axis, keepdims=True), index)
    return index


class MedianAll(Op):
    """The lower median of all elements, a 0-d result; the gradient is shared evenly by the
    elements equal to it (all NaNs, for a NaN median), as PyTorch's."""

    @staticmethod
    def forward(ctx, a):
        flat = a.reshape(-1)
        if flat.size:
            out = np.asarray(flat[_median_index(flat, 0)[0]])
        else:  # PyTorch's NaN, converted to the dtype (True, 0, the least int64)
            with np.errstate(invalid="ignore"):
                out = np.asarray(np.nan).astype(a.dtype)
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, g):
        return g * MedianAll.share(*ctx.saved, g.dtype)

    @staticmethod
    def share(a, out, dtype):
        equal = (a == out) | (np.isnan(a) & np.isnan(out))
        return (equal / max(int(equal.sum()), 1)).astype(dtype)


@rule(MedianAll)
def _median_all(ctx, g):
    return g * constant(MedianAll.share(*ctx.saved, g.dtype))


@jvp_rule(MedianAll)
def _median_all_jvp(ctx, out, tangents):
    t = np.broadcast_to(tangents[0], ctx.saved[0].shape)
    return np.asarray((t * MedianAll.share(*ctx.saved, out.dtype)).sum(), dtype=out.dtype)


def _orderable(input, op):
    if input.dtype == np.bool_:  # as PyTorch's kernels
        raise NotImplementedError(f"{op}: not implemented for bool tensors")


def median(input, dim=None, keepdim=False):
    """The lower median (element (n - 1) // 2 in sorted order) of all elements, a 0-d tensor
    (NaN for an empty one); or along `dim`, a (values, indices) pair."""
    from .tensor import Tensor
    if dim is None and input.numel() == 0:
        return MedianAll.apply(input)
    _orderable(input, "median")
    if dim is None:
        return MedianAll.apply(input)
    d = normalize_dim(dim, max(input.ndim, 1), "median")
    if input.ndim == 0:
        return return_types.median(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    if input.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size (input "
                         f"of shape {input.shape})")
    index = _median_index(input._array, d).astype(np.int64)
    values = input.gather(d, Tensor._wrap(index))
    if not keepdim:
        values, index = values.squeeze(d), np.squeeze(index, d)
    return return_types.median(values, Tensor._wrap(index))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along `dim` (k from 1) and its index, a (values, indices)
    pair; NaN counts as the largest value. Among equal values the index is the first in a
    stable sort's order, where PyTorch may return another of them."""
    from .tensor import Tensor
    _orderable(input, "kthvalue")
    d = normalize_dim(dim, max(input.ndim, 1), "kthvalue")
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} "
                           f"(k={k}, size {n})")
    if input.ndim == 0:
        return return_types.kthvalue(input.clone(), Tensor._wrap(np.zeros((), np.int64)))
    order = np.argsort(input._array, axis=d, kind="stable")
    index = np.take(order, [k - 1], axis=d).astype(np.int64)
    values = input.gather(d, Tensor._wrap(index))
    if not keepdim:
        values, index = values.squeeze(d), np.squeeze(index, d)
    return return_types.kthvalue(values, Tensor._wrap(index))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_levels(q, input):
    """q (a number or a 1-D tensor of input's dtype) as a float array of levels in [0, 1]."""
    from .tensor import Tensor
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"quantile() q must be a scalar or 1D tensor, got shape {q.shape}")
        if q.dtype != input.dtype:
            raise RuntimeError(f"quantile() q tensor must be same dtype as the input tensor "
                               f"({q.dtype} and {input.dtype})")
    levels = np.asarray(q._array if isinstance(q, Tensor) else q, dtype=input.dtype)
    bad = levels[(levels < 0) | (levels > 1) | np.isnan(levels)]
    if bad.size:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {bad.flat[0]}")
    return levels


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles (q in [0, 1], a number or a 1-D tensor of m levels) of all elements
    or along `dim`: between the sorted values at ranks below and above q (n - 1), by
    `interpolation` ("linear", "lower", "higher", "midpoint" or "nearest"); NaN where a row
    holds a NaN. A tensor q puts its m levels first: (m, ...)."""
    return sorted_quantile(input, q, dim, keepdim, interpolation, skip_nan=False)


def sorted_quantile(input, q, dim, keepdim, interpolation, skip_nan):
    """quantile, or with `skip_nan` nanquantile: the n of each row counts its non-NaN values
    alone (sorted first, NaN last), and a row of NaNs only gives NaN."""
    from .tensor import Tensor
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"quantile() input tensor must be either float or double dtype, got "
                           f"{input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    levels = _quantile_levels(q, input)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    x, d = (input.reshape(-1), 0) if dim is None or input.ndim == 0 else (
        input, normalize_dim(dim, input.ndim, "quantile"))
    rows = x.sort(d).values.movedim(d, -1)                   # (..., n), NaN last
    n = rows.shape[-1]
    nan = np.isnan(rows._array)
    if skip_nan:  # a row of NaNs keeps rank 0, a NaN
        counted = n - nan.sum(-1, keepdims=True)             # (..., 1)
        ranks = levels.reshape(-1) * np.maximum(counted - 1, 0).astype(input.dtype)
    else:
        ranks = np.where(nan.any(-1, keepdims=True), n - 1, levels.reshape(-1) * (n - 1))
    ranks = ranks.astype(input.dtype)
    below, above = np.floor(ranks), np.ceil(ranks)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": below, "higher": above, "nearest": np.round(ranks)}[interpolation]
        out = rows.gather(-1, Tensor._wrap(pick.astype(np.int64)))
    else:
        weight = ranks - below if interpolation == "linear" else np.where(below == above, 0, 0.5)
        out = rows.gather(-1, Tensor._wrap(below.astype(np.int64))).lerp(
            rows.gather(-1, Tensor._wrap(above.astype(np.int64))),
            Tensor._wrap(np.asarray(weight, input.dtype)))
    if keepdim:  # (..., m) with the reduced dims back as size 1
        kept = (1,) * input.ndim if dim is None else input.shape[:d] + (1,) + input.shape[d + 1:]
        out = out.reshape(*kept, -1) if input.ndim else out
    out = out.movedim(-1, 0) if levels.ndim else out.squeeze(-1)
    return out


def _unbiased_or_dim(dim, unbiased):
    """PyTorch's var_mean(x, True) passes `unbiased` where `dim` stands."""
    return (None, dim) if isinstance(dim, bool) else (dim, unbiased)


def var_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(var, mean) over dim (all elements by default), as `var` and `mean` compute them; a
    plain tuple, as PyTorch's."""
    dim, unbiased = _unbiased_or_dim(dim, unbiased)
    return (input.var(dim, keepdim=keepdim, unbiased=unbiased, correction=correction),
            input.mean(dim, keepdim=keepdim))


def std_mean(input, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """(std, mean) over dim (all elements by default), a plain tuple, as PyTorch's."""
    dim, unbiased = _unbiased_or_dim(dim, unbiased)
    return (input.std(dim, keepdim=keepdim, unbiased=unbiased, correction=correction),
            input.mean(dim, keepdim=keepdim))


def count_nonzero(input, dim=None):
    """The number of nonzero elements over dim (an int or a tuple; all by default), int64."""
    from .tensor import Tensor
    dims = normalize_dims(dim, input.ndim, "count_nonzero")
    return Tensor._wrap(np.asarray(np.count_nonzero(input._array, axis=dims), np.int64))
