"""PyTorch's further ways of cutting a tensor into views: `split_with_sizes` (pieces of the
given sizes, which must add up to the dim's) and NumPy's `hsplit`, `vsplit`, `dsplit` (along
dim 1 (dim 0 of a 1-d tensor), 0 and 2: into equal sections, or at the given indices). Each
piece is a slice of the input, so its gradient is indexing's.
"""
from __future__ import annotations

from .array_functions import tensor_split
from .ops.shape import normalize_dim

__all__ = ["dsplit", "hsplit", "split_with_sizes", "vsplit"]


def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of sizes split_sizes along dim (they must sum to its size)."""
    d = normalize_dim(dim, input.ndim, "split_with_sizes")
    sizes = [int(s) for s in split_sizes]
    n = input.shape[d]
    if sum(sizes) != n or any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes={sizes}")
    return input.split(sizes, d)


def _numpy_split(op, input, sections, dim, need):
    if input.ndim < need:
        raise RuntimeError(f"torch.{op} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {input.ndim} dimensions!")
    if isinstance(sections, int):
        n = input.shape[dim]
        if sections <= 0 or n % sections:
            raise RuntimeError(f"torch.{op} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {n} is not divisible by the split_size "
                               f"{sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, indices_or_sections):
    """Along dim 1 (dim 0 of a 1-d tensor): equal sections, or cut at the indices."""
    return _numpy_split("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """Along dim 0 of a tensor of 2 dims or more."""
    return _numpy_split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """Along dim 2 of a tensor of 3 dims or more."""
    return _numpy_split("dsplit", input, indices_or_sections, 2, 3)
