"""Orderings along a dim: the index arrays behind `sort`, `argsort` and `topk`.

They return integer positions only (no gradient of their own). The Tensor methods then read the
values with `gather`, so the values' gradient flows back to the positions they came from, as
in PyTorch, and there is no separate backward to get wrong.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidValueError
from ._util import normalize_dim


def refuse_complex(a, op):
    """Complex numbers have no order: PyTorch refuses to sort or rank them, and so do these
    (NumPy would order them by real, then imaginary part)."""
    if a.dtype.kind == "c":
        raise RuntimeError(f"{op}: does not support complex input (got {a.dtype})")


def sort_indices(a, dim=-1, descending=False):
    """Positions that order `a` along dim; ties keep their original order (a stable sort)."""
    refuse_complex(a, "sort")
    d = normalize_dim(dim, a.ndim, "sort")
    if a.ndim == 0:
        return np.zeros((), np.int64)
    # a stable descending order is the stable ascending order of the negated keys; for bool
    # and unsigned keys (which cannot be negated) the rank of each value is negated instead
    keys = a
    if descending:
        keys = -a if np.issubdtype(a.dtype, np.signedinteger) or np.issubdtype(
            a.dtype, np.floating) else -a.astype(np.int64)
        if np.issubdtype(a.dtype, np.floating):  # NaN sorts last ascending, first descending
            keys = np.where(np.isnan(a), -np.inf, keys)
    return np.argsort(keys, axis=d, kind="stable").astype(np.int64)


def topk_indices(a, k, dim=-1, largest=True, sorted=True):
    """Positions of the k largest (or smallest) elements along dim, best first."""
    refuse_complex(a, "topk")
    d = normalize_dim(dim, a.ndim, "topk")
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise InvalidValueError(f"topk: k ({k}) must be in [0, {n}], the size of dim {d} of a "
                                f"tensor of shape {a.shape} (selected index k out of range)")
    order = sort_indices(a, d, descending=largest)
    return np.take(order, np.arange(k), axis=d) if a.ndim else order
