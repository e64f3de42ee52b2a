"""Tensor methods that describe how a tensor's elements are stored, under PyTorch's names:
`stride()`, `storage_offset()`, `is_contiguous()` and `contiguous()`, `nbytes`, `itemsize`,
and the type questions `is_signed()`, `is_complex()`, `is_nonzero()`; and the matrix
transposes `mT`, `mH`, `H`.

A tensor's elements live in a NumPy array, whose strides are those of the view that made it
(`t.transpose(0, 1).stride()` is `(1, 3)` for a (3, 2) tensor, as in PyTorch), counted here
in elements as PyTorch counts them. Two differences: NumPy can walk memory backwards, so
`flip` (made by a reversed slice) has negative strides where PyTorch copies; and an empty
tensor reports row-major strides (NumPy's for an empty array are arbitrary).

`Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from . import ops
from .ops.strided import element_offset
from .platform.layout import strided
from .platform.memory_format import check_memory_format, contiguous_format


def _row_major(shape, strides):
    """Whether strides (in elements) are row-major for shape, ignoring dims of size 1 (whose
    stride never matters), as PyTorch's `is_contiguous` decides."""
    if 0 in shape:
        return True
    expected = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != expected:
                return False
            expected *= n
    return True


def _matrices(t, op):
    if t.ndim == 0:  # PyTorch's conj (with a deprecation warning there)
        return t if op == "mT" else t.conj()
    if t.ndim < 2:
        raise RuntimeError(f"tensor.{op} is only supported on matrices or batches of matrices. "
                           f"Got {t.ndim}-D tensor.")
    t = t.transpose(-2, -1)
    return t.conj() if op != "mT" else t


class LayoutMethods:
    # every tensor is dense with strides (PyTorch's torch.strided)
    layout = strided
    is_sparse = is_sparse_csr = False

    def stride(self, dim=None):
        """The step in elements between neighbours along each dim (one dim's with `dim`)."""
        a = self._array
        if a.size == 0:  # NumPy's strides of an empty array are arbitrary (often 0)
            steps, n = [], 1
            for size in reversed(a.shape):
                steps.insert(0, n)
                n *= max(size, 1)
            steps = tuple(steps)
        else:
            steps = tuple(s // a.itemsize for s in a.strides)
        if dim is None:
            return steps
        return steps[ops.shape.normalize_dim(dim, a.ndim, "stride")]

    def storage_offset(self):
        """How many elements into its memory this tensor's first element is."""
        return element_offset(self._array)

    def is_contiguous(self, memory_format=None):
        """Whether the elements are stored row-major without gaps (the channels-last formats
        change no layout here, so every tensor answers True for them)."""
        check_memory_format(memory_format, "is_contiguous", self.ndim)
        if memory_format not in (None, contiguous_format):
            return True
        a = self._array
        return _row_major(a.shape, [s // a.itemsize for s in a.strides])

    def contiguous(self, memory_format=None):
        """This tensor if its elements are stored row-major, else a row-major copy (the
        gradient passes through unchanged)."""
        check_memory_format(memory_format, "contiguous", self.ndim)
        return self if self.is_contiguous() else ops.Contiguous.apply(self)

    nbytes = property(lambda self: self._array.nbytes)
    itemsize = property(lambda self: self._array.itemsize)

    def is_signed(self):
        """True for the floating point and signed integer dtypes (not bool or uint8)."""
        return self._array.dtype.kind in "fi"

    def is_complex(self):
        """Whether the dtype is complex64 or complex128."""
        return self._array.dtype.kind == "c"

    def is_nonzero(self):
        """Whether the one element is non-zero (the truth of a one-element tensor)."""
        n = self._array.size
        if n != 1:
            what = "no values" if n == 0 else "more than one value"
            raise RuntimeError(f"is_nonzero: Boolean value of Tensor with {what} is ambiguous")
        return bool(self._array.reshape(()).item())

    mT = property(lambda self: _matrices(self, "mT"))
    mH = property(lambda self: _matrices(self, "mH"))  # conjugated: real tensors are themselves

    def adjoint(self):
        """The conjugate transpose of the matrices in the last two dims: `mH`."""
        return _matrices(self, "adjoint()")

    @property
    def H(self):
        if self.ndim not in (0, 2):
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.ndim}-D tensor.")
        return self.transpose(0, 1) if self.ndim == 2 else self
