"""Two factories whose result's memory the caller chooses: `asarray`, a tensor over the memory
of an array or tensor it is given when it can be (NumPy's `asarray`, in PyTorch's terms), and
`empty_strided`, an uninitialised tensor laid out with given strides.

`asarray(a)` of a NumPy array or a tensor shares its memory (a write to one shows in the
other) unless a copy is asked for (`copy=True`) or needed: another dtype. `copy=False` refuses
the copy where one would be needed, as PyTorch does. Anything else (lists, numbers) becomes a
new tensor, as `tensor(obj)`.
"""
from __future__ import annotations

import numpy as np

from .creation import _make, empty, tensor
from .dtypes import resolve
from .linalg_checks import torch_dtype_name
from .platform.device import check_device
from .tensor import Tensor

__all__ = ["asarray", "empty_strided"]


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """`obj` as a tensor, over obj's own memory when obj is an array or tensor of `dtype` (or
    any dtype, if None) and `copy` is not True."""
    check_device(device, "asarray")
    if isinstance(obj, (Tensor, np.ndarray)):
        arr = obj._array if isinstance(obj, Tensor) else obj
        want = arr.dtype if dtype is None else np.dtype(resolve(dtype))
        if want != arr.dtype and copy is False:
            raise ValueError(f"can't alias tensor with dtype '{torch_dtype_name(arr.dtype)}' "
                             f"into dtype '{torch_dtype_name(want)}'.")
        if isinstance(obj, Tensor):   # (a copy of a tensor stays in its graph, as PyTorch's)
            out = obj if not copy and want == arr.dtype else (
                obj.to(want) if want != arr.dtype else obj.clone())
            return out.requires_grad_(True) if requires_grad else out
        if copy or want != arr.dtype:
            return _make(arr.astype(want, copy=True), None, requires_grad, device, "asarray")
        return _make(arr, None, requires_grad, device, "asarray")
    if copy is False:
        raise ValueError(f"asarray: can't alias a {type(obj).__name__} (only arrays and "
                         f"tensors have memory to share); pass copy=None or True")
    return tensor(obj, dtype=dtype, requires_grad=requires_grad)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of shape `size` whose elements are `stride` elements apart
    along each dim (over a buffer just large enough)."""
    size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape (empty_strided of size "
                           f"{list(size)} and stride {list(stride)})")
    span = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    base = empty(span, dtype=dtype, device=device)
    out = base.as_strided(size, stride)
    return out.requires_grad_(True) if requires_grad else out
