"""PyTorch's storages: the memory behind a tensor, as `Tensor.untyped_storage()` (bytes) and
`Tensor.storage()` (elements of the tensor's dtype) return it.

A tensor's memory is that of the NumPy array that owns it (`ops.strided.memory_owner`), so
every view of one tensor (a slice, a transpose, `view`, `as_strided`) has the same storage:
the same `data_ptr()`, the same bytes, and a write through the storage is seen by each. A
storage object is made on each call, as in PyTorch (compare `data_ptr()`, not identity).
"""
from __future__ import annotations

import warnings

import numpy as np

from . import dtypes
from .ops.strided import memory_owner, strided_view
from .platform.device import check_device
from .platform.device import device as _device
from .shared_memory import is_shared_array

_warned = [False]


def _bytes_of(owner):
    """owner's memory as a flat uint8 array (a view)."""
    return strided_view(owner, np.uint8, (owner.nbytes,), (1,), 0)


def _new_elements(args, dtype, device, what):
    """A new storage's memory: `(n)` n zeros (PyTorch leaves them uninitialised), `(values)`
    those values, `()` none."""
    check_device(device, what)
    if not args:
        return np.zeros(0, dtype)
    if len(args) == 1 and isinstance(args[0], (int, np.integer)):
        return np.zeros(int(args[0]), dtype)
    if len(args) == 1:
        return np.array(list(args[0]), dtype=dtype).reshape(-1)
    raise TypeError(f"{what}(): expected a size or a sequence, got {len(args)} arguments")


def _item_index(i, n, what):
    if not isinstance(i, (int, np.integer)):
        raise RuntimeError(f"can't index a {what} with {type(i).__name__}")
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for storage of size {n}")
    return int(i) % n if n else int(i)


class _StorageBase:
    _elements = None  # the storage's memory as a flat array of its element type

    def size(self):
        return self._elements.shape[0]

    __len__ = size

    def nbytes(self):
        return self._elements.nbytes

    def element_size(self):
        return self._elements.itemsize

    def data_ptr(self):
        """The address of the memory (0 for an empty storage, as PyTorch's)."""
        return self._elements.__array_interface__["data"][0] if self.nbytes() else 0

    device = property(lambda self: _cpu())
    is_cuda = False

    def __getitem__(self, i):
        if isinstance(i, slice):
            if not isinstance(self, UntypedStorage):
                raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
            return self._new(self._elements[i])
        return self._elements[_item_index(i, len(self), type(self).__name__)].item()

    def __setitem__(self, i, value):
        if not isinstance(i, slice):
            i = _item_index(i, len(self), type(self).__name__)
        self._elements[i] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return self._elements.tolist()

    def fill_(self, value):
        self._elements[...] = value
        return self

    def copy_(self, source, non_blocking=None):
        """Write source's bytes (a storage of the same size) into this one."""
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch: cannot copy a storage of {source.nbytes()} "
                               f"bytes into one of {self.nbytes()}")
        _bytes_of(self._elements)[...] = _bytes_of(source._elements)
        return self

    def is_shared(self):
        return is_shared_array(memory_owner(self._elements))

    def is_pinned(self, device="cuda"):
        return False

    def cpu(self):
        return self

    def clone(self):
        return self._new(self._elements.copy())


class UntypedStorage(_StorageBase):
    """A tensor's memory as bytes: `size()` and `nbytes()` count bytes, `s[i]` is a byte.
    `UntypedStorage(n)` is n new bytes (zeros), `UntypedStorage([1, 2, 3])` those bytes."""

    def __init__(self, *args, device=None):
        self._elements = _new_elements(args, np.uint8, device, "UntypedStorage")

    @classmethod
    def _new(cls, elements):
        s = cls.__new__(cls)
        s._elements = elements if elements.dtype == np.uint8 else _bytes_of(elements)
        return s

    @classmethod
    def _of_owner(cls, owner):
        return cls._new(_bytes_of(owner))

    def untyped(self):
        return self

    def __repr__(self):
        values = "".join(f" {v}\n" for v in self.tolist())
        return f"{values}[minigrad.storage.UntypedStorage(device=cpu) of size {len(self)}]"

    def share_memory_(self):
        raise RuntimeError("share_memory_: share the tensor (Tensor.share_memory_()), whose "
                           "memory then moves with it; a storage alone cannot move")


class TypedStorage(_StorageBase):
    """A tensor's memory as elements of its dtype (`storage()`, deprecated in PyTorch, which
    warns once): `size()` counts elements, `s[i]` is a Python number."""

    def __init__(self, *args, dtype=None, device=None):
        dtype = dtypes.get_default_dtype() if dtype is None else dtype
        self._elements = _new_elements(args, np.dtype(dtype), device, "TypedStorage")

    @classmethod
    def _new(cls, elements):
        s = cls.__new__(cls)
        s._elements = elements
        return s

    @classmethod
    def _of_owner(cls, owner, dtype):
        if not _warned[0]:
            _warned[0] = True
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                          "UntypedStorage will be the only storage class. This should only "
                          "matter to you if you are using storages directly.  To access "
                          "UntypedStorage directly, use tensor.untyped_storage() instead of "
                          "tensor.storage()", UserWarning, stacklevel=3)
        dtype = np.dtype(dtype)
        return cls._new(strided_view(owner, dtype, (owner.nbytes // dtype.itemsize,),
                                     (1,), 0))

    dtype = property(lambda self: self._elements.dtype)

    def untyped(self):
        return UntypedStorage._new(self._elements)

    _untyped_storage = property(untyped)

    def __repr__(self):
        values = "".join(f" {v}\n" for v in self.tolist())
        return (f"{values}[minigrad.storage.TypedStorage(dtype={self.dtype}, device=cpu) of "
                f"size {len(self)}]")

    def share_memory_(self):
        return self.untyped().share_memory_()


def _cpu():
    return _device("cpu")
