"""`as_strided`: a view of a tensor's memory with any sizes, strides and start, as PyTorch's.

A tensor's memory (PyTorch's storage) is here the memory of the NumPy array that owns it
(`memory_owner`): every view of one tensor has the same owner. `as_strided(size, stride,
offset)` shows that memory from element `offset` with the given steps, counted in elements of
the tensor's dtype, whatever view of it the tensor itself shows.

Its gradient is PyTorch's: the output's gradient is added, element by element of memory, into
a zeroed copy of the memory (an element the output shows twice gets both gradients), and the
input's gradient is read from there through the input's own geometry; where the input shows
one element of memory several times (an `expand`ed input), the sum is divided among them.
"""
from __future__ import annotations

import numpy as np

from ..autograd.op import Op


def memory_owner(a):
    """The array that owns the memory `a` shows (through the wrapper NumPy's `as_strided`
    puts between a strided view and its array, too)."""
    while True:
        base = a.base
        if not isinstance(base, np.ndarray):
            base = getattr(base, "base", None)  # as_strided's DummyArray (an mmap has none)
            if not isinstance(base, np.ndarray):
                return a
        a = base


def element_offset(a, owner=None):
    """How many elements of a's dtype into its owner's memory a's first element is."""
    owner = memory_owner(a) if owner is None else owner
    start = owner.__array_interface__["data"][0]
    return (a.__array_interface__["data"][0] - start) // a.itemsize


def element_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def extent(size, stride, offset):
    """How many elements of memory a view of this geometry reaches (0 when it is empty)."""
    if 0 in size:
        return 0
    return offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1


def strided_view(owner, dtype, size, stride, offset):
    """The array of dtype that shows owner's memory with this geometry (in elements); its
    `base` is owner, so that autograd sees it as a view of the tensors owner is behind."""
    itemsize = np.dtype(dtype).itemsize
    byte_strides = tuple(s * itemsize for s in stride)
    if owner.flags.c_contiguous:
        view = np.ndarray(tuple(size), dtype, buffer=owner, offset=offset * itemsize,
                          strides=byte_strides)
        if not owner.flags.writeable:
            view.flags.writeable = False
        return view
    # an owner that is not one C-ordered block (a Fortran-ordered array): by address
    return np.asarray(_Interface(owner, dtype, size, byte_strides, offset * itemsize))


class _Interface:
    """An array interface of owner's memory from a byte offset (NumPy's DummyArray's way)."""

    def __init__(self, owner, dtype, size, strides, byte_offset):
        face = dict(owner.__array_interface__)
        data, readonly = face["data"]
        typestr = np.dtype(dtype).str
        face.update(data=(data + byte_offset, readonly), shape=tuple(size), strides=strides,
                    typestr=typestr, descr=[("", typestr)])
        self.__array_interface__, self.base = face, owner


def check_geometry(op, owner, itemsize, size, stride, offset):
    """PyTorch's errors for a view that does not fit its memory."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({op}: {len(stride)} "
                           f"strides for {len(size)} sizes)")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    need = extent(size, stride, offset)
    if need * itemsize > owner.nbytes:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {need * itemsize} are out of bounds for storage of size "
                           f"{owner.nbytes}")
    return size, stride


def _indices(size, stride, offset):
    """The memory index of each element of a view of this geometry, in its shape."""
    idx = np.full(tuple(size), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return idx


def plan(geometry):
    """(input's memory indices, output's, memory length, 1 / times the input shows each
    element of memory or None) of an `AsStrided` node's geometry."""
    in_size, in_stride, in_offset, size, stride, offset = geometry
    out_idx = _indices(size, stride, offset)
    in_idx = _indices(in_size, in_stride, in_offset)
    low = min(int(in_idx.min(initial=0)), 0)  # NumPy's flips walk memory backwards
    in_idx, out_idx = in_idx - low, out_idx - low
    n = max(int(out_idx.max(initial=-1)), int(in_idx.max(initial=-1))) + 1
    count = np.bincount(in_idx.ravel(), minlength=n)
    scale = 1.0 / np.maximum(count, 1) if (count > 1).any() else None
    return in_idx, out_idx, n, scale


def transfer(x, src, dst, n, scale):
    """Add x's elements into a zeroed memory of n elements at indices src (x's shape), scale
    the memory, and read it at indices dst: as_strided's gradient (src the output's indices,
    dst the input's) and its transpose, the forward-mode product (the two swapped)."""
    memory = np.zeros(n, dtype=x.dtype)
    np.add.at(memory, src.ravel(), np.asarray(x).ravel())
    if scale is not None:
        memory = memory * scale.astype(memory.real.dtype)
    return memory[dst]


class AsStrided(Op):
    """(size) view of the input's memory: element i is memory[offset + sum(i_d * stride_d)]."""
    complex_aware = True

    @staticmethod
    def forward(ctx, a, size=None, stride=None, storage_offset=None):
        owner = memory_owner(a)
        start = element_offset(a, owner)
        offset = start if storage_offset is None else int(storage_offset)
        size, stride = check_geometry("as_strided", owner, a.itemsize, size, stride, offset)
        ctx.geometry = (a.shape, element_strides(a), start, size, stride, offset)
        return strided_view(owner, a.dtype, size, stride, offset)

    @staticmethod
    def backward(ctx, g):
        in_idx, out_idx, n, scale = plan(ctx.geometry)
        return transfer(g, out_idx, in_idx, n, scale)


class StridedTransfer(Op):
    """`transfer` as an op, so that as_strided's gradient can be differentiated again: its
    backward is the transfer the other way (the two are each other's transpose)."""
    complex_aware = True

    @staticmethod
    def forward(ctx, x, src=None, dst=None, n=0, scale=None):
        ctx.src, ctx.dst, ctx.n, ctx.scale = src, dst, n, scale
        return transfer(x, src, dst, n, scale)

    @staticmethod
    def backward(ctx, g):
        return transfer(g, ctx.dst, ctx.src, ctx.n, ctx.scale)
