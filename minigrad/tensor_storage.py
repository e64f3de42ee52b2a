"""Tensor methods on the memory behind a tensor, under PyTorch's names: `data_ptr()`,
`untyped_storage()`, `storage()`, `_base` and `_is_view()`, `is_set_to()`, `set_()`, `as_strided()` and
`as_strided_()`, `resize_()` and `resize_as_()`, `share_memory_()` and `is_shared()`.

A tensor's memory (its storage) is the memory of the NumPy array that owns its array
(`ops/strided.py`); `storage_offset()` and `stride()` (tensor_layout.py) place the tensor in
it. Two differences from PyTorch, both because one storage is not one object here: `resize_`
that needs more memory than the storage has moves this tensor to new memory (the old bytes
copied, the rest zeros where PyTorch leaves them uninitialised), and other tensors that
shared the old memory keep it (in PyTorch the storage grows under all of them); likewise
`share_memory_()` moves this tensor, the tensor it is a view of and their views made in grad
mode into shared memory, not every tensor that shares its memory (`detach()`, `.data`, views
made under `no_grad()` keep the old memory).

`Tensor` inherits these methods (see tensor.py).
"""
from __future__ import annotations

import numpy as np

from . import ops
from .autograd.versions import bump_version
from .autograd.views import view_chain
from .grad_mode import is_grad_enabled
from .ops.strided import (check_geometry, element_offset, element_strides, memory_owner,
                          strided_view)
from .platform.memory_format import check_memory_format, contiguous_format
from .shared_memory import is_shared_array, new_shared_bytes
from .storage import TypedStorage, UntypedStorage, _bytes_of
from .tensor_shape_inplace import _change_shape


def _sizes(args, op):
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        args = tuple(args[0])
    if any(not isinstance(n, (int, np.integer)) for n in args):
        raise TypeError(f"{op}(): argument 'size' must be a tuple of ints, got {args}")
    return tuple(int(n) for n in args)


def _row_major_strides(size):
    strides, n = [], 1
    for s in reversed(size):
        strides.insert(0, n)
        n *= max(s, 1)
    return tuple(strides)


def _geometry(t):
    a = t._array
    return tuple(a.shape), tuple(t.stride()), t.storage_offset()


def _take_array(t, arr):
    """t shows arr from now on (an in-place change of what t is, outside the graph)."""
    t._array = arr
    if t._acc is not None:
        t._acc.out_shape = arr.shape


def _refuse_recorded(t, op):
    if t._requires_grad and is_grad_enabled():
        what = "a leaf Variable" if t.grad_fn is None else "a tensor"
        raise RuntimeError(f"{op}: {what} that requires grad is being used in an in-place "
                           f"operation that autograd cannot record; wrap it in "
                           f"minigrad.no_grad() or call it on detach()")


class StorageMethods:
    def data_ptr(self):
        """The address of this tensor's first element (0 when its memory is empty)."""
        a = self._array
        return a.__array_interface__["data"][0] if memory_owner(a).nbytes else 0

    def untyped_storage(self):
        """This tensor's memory as bytes (shared with every view of it)."""
        return UntypedStorage._of_owner(memory_owner(self._array))

    def storage(self):
        """This tensor's memory as elements of its dtype (PyTorch's deprecated TypedStorage)."""
        return TypedStorage._of_owner(memory_owner(self._array), self.dtype)

    @property
    def _base(self):
        """The tensor whose memory this view shows (the first one, for a view of a view), as
        PyTorch's; None if this tensor is not a view made by a view op."""
        link = self._view
        return link[0] if link is not None else self._plain_base

    def _is_view(self):
        """Whether this tensor is a view made by a view op (`_base` is not None)."""
        return self._base is not None

    def is_set_to(self, tensor):
        """Whether both tensors show the same elements of the same memory in the same way."""
        a, b = memory_owner(self._array), memory_owner(tensor._array)
        same_memory = (a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
                       and a.nbytes == b.nbytes)
        return same_memory and self.dtype == tensor.dtype and _geometry(self) == _geometry(tensor)

    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        """In place: show source's memory: `set_(tensor)` as that tensor does, `set_(storage,
        offset, size, stride)` with that geometry (a 1-d view of all of it by default),
        `set_()` no memory at all (shape (0,))."""
        _refuse_recorded(self, "set_")
        if source is None:
            arr = np.zeros(0, self.dtype)
        elif isinstance(source, StorageMethods):
            if source.dtype != self.dtype:  # PyTorch's words, with NumPy's dtype names
                raise RuntimeError(f"Could not set tensor of type {source.dtype} to a tensor "
                                   f"of type {self.dtype}")
            arr = source._array
        elif isinstance(source, (UntypedStorage, TypedStorage)):
            if isinstance(source, TypedStorage) and source.dtype != self.dtype:
                raise RuntimeError(f"set_: expected a storage of dtype {self.dtype}, got "
                                   f"{source.dtype}")
            owner = memory_owner(source._elements)
            start = 0  # a storage sliced from another starts into the owner's memory
            if source.nbytes():
                start = (source._elements.__array_interface__["data"][0]
                         - owner.__array_interface__["data"][0]) // self._array.itemsize
            if size is None:
                size = (source.nbytes() // self._array.itemsize,)
            size = tuple(size)
            stride = _row_major_strides(size) if stride is None else tuple(stride)
            offset = start + int(storage_offset)
            size, stride = check_geometry("set_", owner, self._array.itemsize, size, stride,
                                          offset)
            arr = strided_view(owner, self.dtype, size, stride, offset)
        else:
            raise TypeError(f"set_(): expected a Tensor or a storage, got "
                            f"{type(source).__name__}")
        _take_array(self, arr)
        bump_version(self)
        return self

    def as_strided(self, size, stride, storage_offset=None):
        """A view of this tensor's memory: element i is memory[offset + sum(i_d * stride_d)]
        (offset defaults to this tensor's `storage_offset()`); differentiable."""
        return ops.strided.AsStrided.apply(self, size=tuple(size), stride=tuple(stride),
                                           storage_offset=storage_offset)

    def as_strided_(self, size, stride, storage_offset=None):
        """In place: this tensor becomes `as_strided(size, stride, storage_offset)`."""
        offset = self.storage_offset() if storage_offset is None else int(storage_offset)
        shape, strides, start = _geometry(self)
        step = (ops.strided.AsStrided,
                {"size": tuple(size), "stride": tuple(stride), "storage_offset": offset})
        undo = (ops.strided.AsStrided,
                {"size": shape, "stride": strides, "storage_offset": start})
        return _change_shape(self, "as_strided_", step, undo)

    def resize_(self, *sizes, memory_format=None):
        """In place: this tensor takes shape `sizes`, row-major from its storage offset. It
        keeps its memory's leading elements; memory it needs beyond them is new (zeros)."""
        size = _sizes(sizes, "resize_")
        check_memory_format(memory_format, "resize_", len(size))
        if memory_format not in (None, contiguous_format):
            raise NotImplementedError("resize_: only the contiguous memory format")
        if any(n < 0 for n in size):
            raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
        if self._requires_grad:
            raise RuntimeError("cannot resize variables that require grad")
        a = self._array
        if size == a.shape:
            return self
        owner, offset = memory_owner(a), self.storage_offset()
        need = (offset + int(np.prod(size))) * a.itemsize
        if need > owner.nbytes or not owner.flags.writeable:
            if is_shared_array(owner):
                raise RuntimeError("Trying to resize storage that is not resizable")
            grown = np.zeros(need, np.uint8)
            kept = min(owner.nbytes, need)
            grown[:kept] = _bytes_of(owner)[:kept]
            owner = grown
        _take_array(self, strided_view(owner, a.dtype, size, _row_major_strides(size), offset))
        return self

    def resize_as_(self, other, memory_format=None):
        """In place: `resize_(other.shape)`."""
        return self.resize_(tuple(other.shape), memory_format=memory_format)

    def share_memory_(self):
        """Move this tensor's memory (with its live views) into memory other processes can
        map, so that their in-place changes are seen here (a no-op if it is there already)."""
        from .multiprocessing.reductions import init_reductions
        init_reductions()
        old = memory_owner(self._array)
        if is_shared_array(old):
            return self
        new = new_shared_bytes(old.nbytes)
        new[...] = _bytes_of(old)
        root = view_chain(self)[0]  # a view moves the tensor it shows, and that one's views
        family = [self, root] + [r() for r in (root._views or ())]
        for t in family + [r() for r in (self._views or ())]:
            if t is not None and memory_owner(t._array) is old:
                a = t._array
                t._array = strided_view(new, a.dtype, a.shape, element_strides(a),
                                        element_offset(a, old))
        return self

    def is_shared(self):
        """Whether this tensor's memory is shared between processes (`share_memory_()`)."""
        return is_shared_array(memory_owner(self._array))


def as_strided(input, size, stride, storage_offset=None):
    """`input.as_strided(size, stride, storage_offset)`."""
    return input.as_strided(size, stride, storage_offset)
