"""Tensor methods of ordering and selection, under PyTorch's names: sort, argsort, topk,
nonzero, unique, multinomial and masked_select.

`sort` and `topk` return their values as a `gather` at the positions found, so their gradient
comes from an op that is already tested; the positions, like nonzero's and unique's, are int64
tensors without gradient. `Tensor` inherits these through tensor_math's `MathMethods`.
"""
from __future__ import annotations

import numpy as np

from . import ops, return_types
from . import tensor as _t
from .errors import broadcast_error


def _wrap(arr):
    return _t.Tensor._wrap(np.asarray(arr))


class OrderMethods:
    def sort(self, dim=-1, descending=False, stable=False):
        """(values, indices) ordered along dim; equal elements keep their order."""
        idx = _wrap(ops.sort.sort_indices(self._array, dim, descending))
        return return_types.sort(self.gather(dim, idx) if self.ndim else self.clone(), idx)

    def argsort(self, dim=-1, descending=False, stable=False):
        return _wrap(ops.sort.sort_indices(self._array, dim, descending))

    def topk(self, k, dim=-1, largest=True, sorted=True):
        """(values, indices) of the k largest (or smallest) elements along dim, best first."""
        idx = _wrap(ops.sort.topk_indices(self._array, k, dim, largest))
        return return_types.topk(self.gather(dim, idx) if self.ndim else self.clone(), idx)

    def nonzero(self, as_tuple=False):
        """Positions of the nonzero elements: an (n, ndim) int64 tensor, or one per dim."""
        if as_tuple:
            return tuple(_wrap(i.astype(np.int64)) for i in np.nonzero(self._array))
        return _wrap(np.argwhere(self._array).astype(np.int64))

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """The distinct elements (sorted), optionally with inverse indices and counts."""
        out = np.unique(self._array, return_inverse=return_inverse,
                        return_counts=return_counts, axis=dim)
        if not (return_inverse or return_counts):
            return _wrap(out)
        values, *rest = out
        if return_inverse:  # NumPy may flatten the inverse; PyTorch keeps the input's shape
            rest[0] = rest[0].reshape(self.shape if dim is None else -1)
        return (_wrap(values),) + tuple(_wrap(r.astype(np.int64)) for r in rest)

    def multinomial(self, num_samples, replacement=False, generator=None):
        from .sampling import multinomial
        return multinomial(self, num_samples, replacement, generator=generator)

    def masked_select(self, mask):
        """The elements where mask (broadcast to this shape) is True, as a 1-D tensor."""
        m = np.asarray(_t.array_of(mask))
        try:
            shape = np.broadcast_shapes(m.shape, self.shape)
        except ValueError:
            raise broadcast_error("masked_select", m.shape, self.shape) from None
        x = self if self.shape == shape else self.expand(shape)
        return x[np.broadcast_to(m, shape)]
