"""`Size`, PyTorch's `torch.Size`: the type of `Tensor.shape` and `Tensor.size()`.

A tuple of ints, so `x.shape == (2, 3)`, unpacking, indexing and `np.zeros(x.shape)` behave
as with any tuple; as PyTorch's, it also has `numel()`, and slicing it, adding a tuple to it
or repeating it gives a Size again. It prints as `minigrad.Size([2, 3])` (str and repr alike,
as PyTorch's `torch.Size([2, 3])`).
"""
from __future__ import annotations

import operator

__all__ = ["Size", "is_same_size"]


class Size(tuple):
    """The shape of a tensor: Size([2, 3]), Size((2, 3)), or Size() for a 0-d tensor's."""

    __slots__ = ()

    def __new__(cls, sizes=()):
        try:
            return tuple.__new__(cls, [operator.index(n) for n in sizes])
        except TypeError:
            raise TypeError(f"Size: takes an iterable of ints, got {sizes!r}") from None

    def numel(self):
        """The number of elements of a tensor of this shape (1 for the 0-d shape)."""
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, index):
        got = tuple.__getitem__(self, index)
        return tuple.__new__(Size, got) if isinstance(index, slice) else got

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(other, self))

    def __mul__(self, times):
        return tuple.__new__(Size, tuple.__mul__(self, times))

    __rmul__ = __mul__

    def __repr__(self):
        return f"minigrad.Size({list(self)})"

    __str__ = __repr__

    def __reduce__(self):
        return Size, (tuple(self),)


def is_same_size(input, other):
    """Whether two tensors have the same shape (`torch.is_same_size`)."""
    return input.shape == other.shape


def size_of(shape):
    """`shape` (a tuple of ints NumPy gives) as a Size, without checking its elements."""
    return tuple.__new__(Size, shape)
