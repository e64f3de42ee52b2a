"""Tensor methods that rearrange elements, under PyTorch's names: repeat, repeat_interleave,
unbind, select, narrow, flip, roll, movedim, unflatten, swapaxes.

Each is a composition of the differentiable views and gathers the core already has
(reshape, expand, indexing, index_select, permute), so none needs a backward of its own.
`repeat`, for example, puts a size-1 dim before every dim, expands those to the repeat counts
and merges each pair: that is tiling, and expand's gradient sums the copies back.
"""
from __future__ import annotations

import numpy as np

from . import ops
from . import tensor as _t
from .tensor_convert import _size


def _dim(d, t, op):
    return ops.shape.normalize_dim(d, t.ndim, op)


class ShapeMethods:
    def repeat(self, *sizes):
        """Tile the tensor sizes[i] times along dim i (new leading dims if sizes is longer)."""
        sizes = _size(sizes)
        if len(sizes) < self.ndim:
            raise ValueError(f"repeat: {len(sizes)} repeat counts for a tensor with "
                             f"{self.ndim} dims (give at least one per dim)")
        shape = (1,) * (len(sizes) - self.ndim) + self.shape
        x = self.reshape([v for n in shape for v in (1, n)])
        x = x.expand([v for r, n in zip(sizes, shape) for v in (r, n)])
        return x.reshape([r * n for r, n in zip(sizes, shape)])

    def repeat_interleave(self, repeats, dim=None):
        """Each element (each slice along dim) repeated `repeats` times, in place of itself."""
        x, d = (self.reshape(-1), 0) if dim is None else (self, _dim(dim, self,
                                                                     "repeat_interleave"))
        counts = np.broadcast_to(np.asarray(_t.array_of(repeats)), (x.shape[d],))
        return x.index_select(d, np.repeat(np.arange(x.shape[d]), counts))

    def select(self, dim, index):
        return self[(slice(None),) * _dim(dim, self, "select") + (index,)]

    def unbind(self, dim=0):
        d = _dim(dim, self, "unbind")
        return tuple(self.select(d, i) for i in range(self.shape[d]))

    def narrow(self, dim, start, length):
        d = _dim(dim, self, "narrow")
        start = start + self.shape[d] if start < 0 else start
        if not 0 <= start <= start + length <= self.shape[d]:
            raise IndexError(f"narrow: start {start} and length {length} do not fit dim {d} "
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
            raise ValueError(f"roll: {len(shifts)} shifts for {len(dims)} dims")
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

    swapdims = swapaxes
