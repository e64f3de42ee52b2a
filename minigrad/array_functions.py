"""PyTorch's versions of four NumPy array functions, composed from existing ops (so their
gradients are those ops'): `take_along_dim` (NumPy's take_along_axis: a gather whose index
broadcasts against the input), `tensor_split` (array_split: pieces of near-equal sizes, or cut
at given indices), `rot90` (a quarter turn in a plane: a flip and a transpose) and `isin`
(membership, a bool tensor without gradient)."""
from __future__ import annotations

import numpy as np

from .errors import ShapeError
from .tensor import Tensor, array_of
from .ops.shape import normalize_dim

__all__ = ["isin", "rot90", "take_along_dim", "tensor_split"]


def take_along_dim(input, indices, dim=None):
    """input's elements at `indices` along dim: input (..., N, ...) and indices (..., K, ...),
    broadcast against each other in every other dim, give (..., K, ...). Without dim both
    are flattened first."""
    index = np.asarray(array_of(indices))
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"take_along_dim: dtype of indices should be Long, got {index.dtype}")
    if dim is None:
        return input.reshape(-1).gather(0, index.reshape(-1))
    if index.ndim != input.ndim:
        raise RuntimeError(f"take_along_dim: input and indices should have the same number of "
                           f"dimensions, but got {input.ndim} for input and {index.ndim} for "
                           f"indices")
    d = normalize_dim(dim, input.ndim, "take_along_dim")
    try:
        shape = np.broadcast_shapes(input.shape[:d] + input.shape[d + 1:],
                                    index.shape[:d] + index.shape[d + 1:])
    except ValueError:
        raise ShapeError(f"take_along_dim: shapes {input.shape} and {index.shape} cannot be "
                         f"broadcast together outside dim {d}") from None
    x = input.expand(shape[:d] + (input.shape[d],) + shape[d:])
    return x.gather(d, np.broadcast_to(index, shape[:d] + (index.shape[d],) + shape[d:]))


def tensor_split(input, indices_or_sections, dim=0):
    """A tuple of views along dim: for an int n, n pieces whose sizes differ by at most one
    (the first ones larger); for a sequence (or 1-d tensor) of indices, the pieces between
    them, taken as Python slices take them (negative from the end, past the end empty)."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split: expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    cut = indices_or_sections
    if isinstance(cut, Tensor):
        if cut.ndim > 1 or cut.dtype.kind not in "iu":
            raise RuntimeError(f"tensor_split: expected a 0-d or 1-d integer tensor of "
                               f"indices or sections, got shape {cut.shape}, dtype {cut.dtype}")
        cut = cut.tolist()
    elif not isinstance(cut, (int, np.integer, tuple, list)):
        raise TypeError(f"tensor_split(): indices_or_sections must be an int or a sequence of "
                        f"ints, not {type(cut).__name__}")
    d = normalize_dim(dim, input.ndim, "tensor_split")
    n = input.shape[d]
    if isinstance(cut, (int, np.integer)):
        if cut <= 0:
            raise RuntimeError(f"tensor_split: number of sections must be larger than 0, "
                               f"got {cut}")
        size, extra = divmod(n, int(cut))
        cut = np.cumsum([size + 1] * extra + [size] * (int(cut) - extra))[:-1].tolist()
    bounds = [0] + [int(c) for c in cut] + [None]  # as Python slices: -2 is n - 2
    pre = (slice(None),) * d
    return tuple(input[pre + (slice(a, b),)] for a, b in zip(bounds[:-1], bounds[1:]))


def rot90(input, k=1, dims=(0, 1)):
    """input turned k quarter turns in the plane of dims, from the first dim towards the
    second (shape (.., A, .., B, ..) -> (.., B, .., A, ..) for odd k)."""
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = "
                           f"{len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = "
                           f"{input.ndim}")
    a, b = (normalize_dim(v, input.ndim, "rot90") for v in dims)
    if a == b:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = "
                           f"{dims[0]} and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return input.flip(b).transpose(a, b)
    if k == 2:
        return input.flip(a, b)
    if k == 3:
        return input.flip(a).transpose(a, b)
    return input.clone()


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each of `elements` (a tensor or a number) is among `test_elements`: a bool
    tensor of elements' shape, without gradient (`invert` negates it)."""
    values, tests = np.asarray(array_of(elements)), np.asarray(array_of(test_elements))
    if np.bool_ in (values.dtype, tests.dtype):
        raise RuntimeError("isin: unsupported input type: bool (compare as integers, "
                           "e.g. with .long())")
    found = np.isin(values, tests, assume_unique=assume_unique, invert=invert)
    return Tensor._wrap(np.asarray(found))
