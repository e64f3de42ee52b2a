"""Ops that move elements without changing them: reshape, permute, expand, cat, stack.

Their gradients move the incoming gradient back the opposite way.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..autograd.op import Op
from ._util import normalize_dim
from ..errors import ShapeError


class Reshape(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, shape=None):
        ctx.shape = a.shape
        try:
            return a.reshape(shape)
        except ValueError:
            raise ShapeError(f"reshape: cannot reshape a tensor of shape {a.shape} "
                             f"({a.size} elements) into {tuple(shape)}: "
                             f"{_reshape_words(shape, a.size)}") from None

    @staticmethod
    def backward(ctx, g):
        return g.reshape(ctx.shape)


def _reshape_words(shape, size):
    """PyTorch's message for a reshape that does not fit, which scripts search for."""
    shape = [int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,))]
    if shape.count(-1) > 1:
        return "only one dimension can be inferred"
    return f"shape '{shape}' is invalid for input of size {size}"


class Permute(Op):
    complex_aware = True
    @staticmethod
    def forward(ctx, a, dims=None):
        n = a.ndim
        # one pass builds the inverse (where each axis went) and checks the usual call
        # (transpose's: non-negative int dims, each once); anything else is normalised below
        inverse, i = [-1] * n, 0
        for d in dims:
            if d.__class__ is not int or not 0 <= d < n or inverse[d] >= 0:
                break
            inverse[d] = i
            i += 1
        if i != n or len(dims) != n:
            dims = tuple(normalize_dim(d, n, "permute") for d in dims)
            if sorted(dims) != list(range(n)):
                raise ShapeError(f"permute: dims {dims} are not a permutation of the "
                                 f"{n} dims of a tensor of shape {a.shape}")
            for i, d in enumerate(dims):
                inverse[d] = i
        ctx.inverse = tuple(inverse)
        return a.transpose(dims)

    @staticmethod
    def backward(ctx, g):
        return g.transpose(ctx.inverse)


class Expand(Op):
    """Broadcast to a larger shape without copying; the engine sums the copies' gradients."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, shape=None):
        shape = _expanded_shape(a.shape, tuple(shape))
        try:
            return np.broadcast_to(a, shape)
        except ValueError:
            raise ShapeError(f"expand: cannot expand shape {a.shape} to {shape}: "
                             f"{_expand_words(a.shape, shape)}") from None

    @staticmethod
    def backward(ctx, g):
        return g


def _expand_words(shape, sizes):
    """PyTorch's message for the last dim of `shape` that cannot be expanded to `sizes`."""
    for back in range(1, len(shape) + 1):
        if shape[-back] not in (1, sizes[-back]):
            return (f"The expanded size of the tensor ({sizes[-back]}) must match the existing "
                    f"size ({shape[-back]}) at non-singleton dimension {len(sizes) - back}")
    return ""


def _expanded_shape(shape, sizes):
    """`sizes` with each -1 replaced by the size it keeps from `shape`. New dims come first
    (broadcasting's rule), and a new dim has no size to keep, so -1 there is an error."""
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise ShapeError(f"expand: {len(sizes)} sizes {sizes} given for a tensor of shape "
                         f"{shape}; give at least one per dim (the number of sizes provided "
                         f"({len(sizes)}) must be greater or equal to the number of dimensions "
                         f"in the tensor ({len(shape)}))")
    if -1 in sizes[:lead]:
        raise ShapeError(f"expand: size -1 is not allowed for a new leading dim (expanding "
                         f"shape {shape} to {sizes})")
    return sizes[:lead] + tuple(n if s == -1 else s for n, s in zip(shape, sizes[lead:]))


class Cat(Op):
    """Join tensors along an existing dim."""
    complex_aware = True

    @staticmethod
    def forward(ctx, *arrays, dim=0):
        if not arrays:
            raise ShapeError("cat: expected a non-empty sequence of tensors")
        d = normalize_dim(dim, arrays[0].ndim, "cat")
        try:
            out = np.concatenate(arrays, axis=d)
        except ValueError:  # NumPy checks the shapes itself; its message does not say which op
            _check_cat_shapes(arrays, d)
            raise
        ctx.dim = d
        ctx.bounds = list(itertools.accumulate(x.shape[d] for x in arrays[:-1]))
        return out

    @staticmethod
    def backward(ctx, g):
        return tuple(np.split(g, ctx.bounds, axis=ctx.dim))


def _check_cat_shapes(arrays, d):
    """Raise naming the first array whose shape differs from the first's outside dim d."""
    for i, x in enumerate(arrays):
        if x.ndim != arrays[0].ndim or any(
                x.shape[k] != arrays[0].shape[k] for k in range(x.ndim) if k != d):
            raise ShapeError(f"cat: tensor {i} has shape {x.shape}, which does not match "
                             f"{arrays[0].shape} except in dim {d}: Sizes of tensors must "
                             f"match except in dimension {d}")


class Stack(Op):
    """Join same-shaped tensors along a new dim."""
    complex_aware = True

    @staticmethod
    def forward(ctx, *arrays, dim=0):
        if not arrays:
            raise ShapeError("stack: expected a non-empty sequence of tensors")
        for i, x in enumerate(arrays):
            if x.shape != arrays[0].shape:
                raise ShapeError(f"stack: tensor {i} has shape {x.shape} but tensor 0 has "
                                 f"{arrays[0].shape}; all must be equal (stack expects each "
                                 f"tensor to be equal size)")
        ctx.dim = normalize_dim(dim, arrays[0].ndim + 1, "stack")
        return np.stack(arrays, axis=ctx.dim)

    @staticmethod
    def backward(ctx, g):
        return tuple(np.moveaxis(g, ctx.dim, 0))



class Contiguous(Op):
    """A row-major copy of a tensor whose elements are stored in another order (transposed,
    strided); `Tensor.contiguous` returns a row-major tensor itself."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a):
        return np.array(a, order="C")

    @staticmethod
    def backward(ctx, g):
        return g
