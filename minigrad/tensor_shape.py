"""Tensor methods that rearrange elements, under PyTorch's names.

The views (reshape/view, permute, transpose, t, unsqueeze, squeeze, flatten, expand) and
split/chunk each call one op of `minigrad.ops.shape` (or indexing). The others (repeat,
repeat_interleave, unbind, select, narrow, flip, roll, movedim, unflatten, swapaxes) are
compositions of those views and of the gathers the core already has (indexing,
index_select), so none needs a backward of its own: `repeat`, for example, puts a size-1
dim before every dim, expands those to the repeat counts and merges each pair (that is
tiling, and expand's gradient sums the copies back).
"""
from __future__ import annotations

import numpy as np

from . import ops
from . import tensor as _t
from .autograd.views import mark_split_outputs
from .errors import IndexRangeError, InvalidValueError, ShapeError
from .tensor_convert import _size


_normalize_dim = ops.shape.normalize_dim


def _dim(d, t, op):
    return _normalize_dim(d, t.ndim, op)


class ShapeMethods:
    def reshape(self, *shape):
        """The elements in a new shape: a view where the strides allow one, else a copy."""
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        for i, n in enumerate(shape):
            if n < -1:  # NumPy would read it as -1
                raise RuntimeError(f"invalid shape dimension {n} at index {i} of shape "
                                   f"{[int(m) for m in shape]}")
        return ops.Reshape.apply(self, shape=tuple(shape))

    def view(self, *shape, size=None, dtype=None):
        """reshape's (the elements in a new shape); or, given a dtype, the same bytes read as
        that dtype: the last dim's length scales by the ratio of the element sizes. That view is
        not differentiable (as PyTorch's)."""
        if len(shape) == 1 and isinstance(shape[0], (type, np.dtype)):
            dtype, shape = shape[0], ()
        if dtype is not None:
            return _view_as_dtype(self, np.dtype(dtype))
        shape = _size(shape if size is None else (size,))
        out = self.reshape(shape)
        if not self._array.flags.c_contiguous and not _viewable(self._array, out.shape):
            raise RuntimeError(f"view size is not compatible with input tensor's size and "
                               f"stride (at least one dimension spans across two contiguous "
                               f"subspaces). Use .reshape(...) instead. (view of a tensor of "
                               f"shape {self.shape} and strides {self.stride()} as "
                               f"{tuple(out.shape)})")
        return out

    def view_as(self, other):
        return self.view(other.shape)

    def permute(self, *dims):
        dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return ops.Permute.apply(self, dims=tuple(dims))

    def transpose(self, dim0, dim1):
        n = self._array.ndim
        d0 = _normalize_dim(dim0, n, "transpose")
        d1 = _normalize_dim(dim1, n, "transpose")
        dims = list(range(n))
        dims[d0], dims[d1] = d1, d0
        return ops.Permute.apply(self, dims=tuple(dims))

    def t(self):
        if self.ndim > 2:
            raise ShapeError(f"t: expects a tensor with <= 2 dimensions, got shape {self.shape} "
                             f"(t() expects a tensor with <= 2 dimensions, but self is "
                             f"{self.ndim}D)")
        return self.transpose(0, 1) if self.ndim == 2 else self.reshape(self.shape)  # a view

    def unsqueeze(self, dim):
        d = _normalize_dim(dim, self.ndim + 1, "unsqueeze")
        return self.reshape(self.shape[:d] + (1,) + self.shape[d:])

    def squeeze(self, dim=None):
        if dim is None:
            return self.reshape(tuple(n for n in self.shape if n != 1))
        dims = ops.reduce.normalize_dims(dim, self.ndim, "squeeze")
        return self.reshape(tuple(n for i, n in enumerate(self.shape) if i not in dims or n != 1))

    def flatten(self, start_dim=0, end_dim=-1):
        if self.ndim == 0:
            return self.reshape(1)
        s = _normalize_dim(start_dim, self.ndim, "flatten")
        e = _normalize_dim(end_dim, self.ndim, "flatten")
        return self.reshape(self.shape[:s] + (-1,) + self.shape[e + 1:])

    def expand(self, *sizes, size=None):
        shape = size if size is not None else (
            sizes[0] if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else sizes)
        return ops.Expand.apply(self, shape=tuple(shape))

    def expand_as(self, other): return self.expand(other.shape)

    def split(self, split_size, dim=0):
        """Pieces of `split_size` along dim (the last may be smaller), or of the given sizes."""
        d = _normalize_dim(dim, self.ndim, "split")
        n = self.shape[d]
        sizes = ([split_size] * (n // split_size) + ([n % split_size] if n % split_size else [])
                 if isinstance(split_size, int) else list(split_size))
        if sum(sizes) != n:
            raise ShapeError(f"split: sizes {sizes} do not add up to {n}, the size of dim {d}")
        bounds = np.cumsum([0] + sizes)
        pre = (slice(None),) * d
        return mark_split_outputs(
            tuple(self[pre + (slice(int(a), int(b)),)] for a, b in zip(bounds[:-1], bounds[1:])),
            "Split" if isinstance(split_size, int) else "SplitWithSizes")

    def chunk(self, chunks, dim=0):
        n = self.shape[_normalize_dim(dim, self.ndim, "chunk")]
        if chunks <= 0:
            raise InvalidValueError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        return self.split(-(-n // chunks), dim)

    def repeat(self, *sizes, repeats=None):
        """Tile the tensor sizes[i] times along dim i (new leading dims if sizes is longer)."""
        sizes = _size(sizes if repeats is None else (repeats,))
        if len(sizes) < self.ndim:
            raise ShapeError(f"repeat: {len(sizes)} repeat counts for a tensor with "
                             f"{self.ndim} dims (give at least one per dim)")
        shape = (1,) * (len(sizes) - self.ndim) + self.shape
        x = self.reshape([v for n in shape for v in (1, n)])
        x = x.expand([v for r, n in zip(sizes, shape) for v in (r, n)])
        return x.reshape([r * n for r, n in zip(sizes, shape)])

    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        """Each element (each slice along dim) repeated `repeats` times, in place of itself.
        `output_size`, the result's length along dim, is checked when given."""
        x, d = (self.reshape(-1), 0) if dim is None else (self, _dim(dim, self,
                                                                     "repeat_interleave"))
        counts = np.broadcast_to(np.asarray(_t.array_of(repeats)), (x.shape[d],))
        if output_size is not None and int(counts.sum()) != output_size:
            raise RuntimeError(f"repeat_interleave: allocated size does not match required "
                               f"size (output_size={output_size}, the repeats add up to "
                               f"{int(counts.sum())})")
        return x.index_select(d, np.repeat(np.arange(x.shape[d]), counts))

    def select(self, dim, index):
        return self[(slice(None),) * _dim(dim, self, "select") + (index,)]

    def unbind(self, dim=0):
        d = _dim(dim, self, "unbind")
        return mark_split_outputs(tuple(self.select(d, i) for i in range(self.shape[d])),
                                  "Unbind")

    def narrow(self, dim, start, length):
        d = _dim(dim, self, "narrow")
        start = start + self.shape[d] if start < 0 else start
        if not 0 <= start <= start + length <= self.shape[d]:
            raise IndexRangeError(f"narrow: start {start} and length {length} do not fit dim {d} "
                                  f"of size {self.shape[d]}")
        return self[(slice(None),) * d + (slice(start, start + length),)]

    def flip(self, *dims):
        dims = ops.reduce.normalize_dims(_size(dims), self.ndim, "flip")
        return self[tuple(slice(None, None, -1) if i in dims else slice(None)
                          for i in range(self.ndim))]

    def roll(self, shifts, dims=None):
        """Shift elements along dims, wrapping around (flattened first when dims is None)."""
        if dims is None:
            return self.reshape(-1).roll(shifts, 0).reshape(self.shape)
        shifts, dims = np.atleast_1d(shifts), np.atleast_1d(dims)
        if len(shifts) != len(dims):
            raise ShapeError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
        x = self
        for s, d in zip(shifts, dims):
            d = _dim(int(d), self, "roll")
            n = self.shape[d]
            x = x.index_select(d, (np.arange(n) - int(s)) % n)
        return x

    def movedim(self, source, destination):
        src = [_dim(int(d), self, "movedim") for d in np.atleast_1d(source)]
        dst = [_dim(int(d), self, "movedim") for d in np.atleast_1d(destination)]
        order = [d for d in range(self.ndim) if d not in src]
        for d, s in sorted(zip(dst, src)):
            order.insert(d, s)
        return self.permute(*order)

    def unflatten(self, dim, sizes):
        d = _dim(dim, self, "unflatten")
        return self.reshape(self.shape[:d] + tuple(sizes) + self.shape[d + 1:])

    def swapaxes(self, axis0, axis1):
        return self.transpose(axis0, axis1)

    def swapdims(self, dim0, dim1):
        return self.transpose(dim0, dim1)


def _viewable(a, shape):
    """Whether array `a` can be shown in `shape` (of a's size) without copying, by PyTorch's
    rule (`computeStride`): each run of dims whose memory is one block may be re-cut."""
    if a.ndim == 0 or a.size == 0:
        return True
    strides = [s // a.itemsize for s in a.strides]
    view_d, base, tensor_n, view_n = len(shape) - 1, strides[-1], 1, 1
    for d in range(a.ndim - 1, -1, -1):
        tensor_n *= a.shape[d]
        if d == 0 or (a.shape[d - 1] != 1 and strides[d - 1] != tensor_n * base):
            while view_d >= 0 and (view_n < tensor_n or shape[view_d] == 1):
                view_n *= shape[view_d]
                view_d -= 1
            if view_n != tensor_n:
                return False
            if d > 0:
                base, tensor_n, view_n = strides[d - 1], 1, 1
    return view_d == -1


def _view_as_dtype(t, dtype):
    """`t.view(dtype)`: t's bytes as `dtype`, a new tensor sharing t's memory."""
    from .linalg_checks import torch_dtype_name
    a, old = t._array, t._array.dtype
    if dtype.itemsize != old.itemsize:
        what = (f"to view {torch_dtype_name(old)} as {torch_dtype_name(dtype)} (different "
                f"element sizes)")
        if a.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        if a.shape[-1] != 1 and a.strides[-1] != old.itemsize:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                               f"{a.strides[-1] // old.itemsize}")
        if (a.shape[-1] * old.itemsize) % dtype.itemsize:
            raise RuntimeError(f"self.size(-1) must be divisible by "
                               f"{dtype.itemsize // old.itemsize} {what}, but got {a.shape[-1]}")
    return _t.Tensor._wrap(a.view(dtype))
