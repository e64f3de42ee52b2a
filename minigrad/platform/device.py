"""Devices. minigrad computes on the CPU only, but it takes PyTorch's device arguments, so code
that writes `x.to(device)` or `zeros(3, device=device)` runs unchanged with device "cpu"; a GPU
device is one clear error at the place it is used (building `device("cuda")` is allowed, as in
PyTorch, because code often builds it before asking `cuda.is_available()`).
"""
from __future__ import annotations

import builtins

from ..errors import InvalidValueError
from .memory_format import check_memory_format

_KNOWN = ("cpu", "cuda", "mps", "xpu", "xla", "meta", "hip", "npu", "ipu")


class device:
    """Where a tensor lives (PyTorch's `torch.device`): `device("cpu")`, `device("cuda", 0)`."""

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            type, index = "cuda", type  # device(0) is the first GPU in PyTorch
        elif isinstance(type, str):
            name, sep, num = type.partition(":")
            if sep:
                if index is not None or not num.isdigit():
                    raise ValueError(f"device: invalid device string {type!r}")
                index = int(num)
            type = name
        else:
            raise TypeError(f"device: expected a string, an int or a device, got "
                            f"{builtins.type(type).__name__}")
        if type not in _KNOWN:
            raise InvalidValueError(f"device: unknown device type {type!r} (expected one of "
                                    f"{', '.join(_KNOWN)})")
        self.type, self.index = type, index

    def __eq__(self, other):  # a device never equals a string, as in PyTorch
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{idx})"


CPU = device("cpu")


def check_device(where, op):
    """Accept None or any CPU device; anything else is an error naming `op`."""
    if where is None:
        return CPU
    d = device(where)
    if d.type != "cpu":
        raise RuntimeError(f"{op}: minigrad runs on the CPU only, so device '{d}' is not "
                           f"available; use 'cpu' (minigrad.cuda.is_available() is False, so "
                           f"`'cuda' if minigrad.cuda.is_available() else 'cpu'` picks it)")
    return d


def parse_to(args, kwargs, op="to", ndim=None):
    """The dtype that `to(...)` asks for (or None) and whether it asks for a copy.

    PyTorch's three forms: to(dtype), to(device=None, dtype=None), to(other tensor); each also
    takes non_blocking= and copy=. A device must be a CPU one.
    """
    kwargs = dict(kwargs)
    where, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = bool(kwargs.pop("copy", False))
    kwargs.pop("non_blocking", None)
    check_memory_format(kwargs.pop("memory_format", None), op, ndim)
    if kwargs:
        raise TypeError(f"{op}: unexpected keyword argument(s) {', '.join(kwargs)}")
    for a in args:
        if hasattr(a, "_array"):  # another tensor: its dtype (and its device, always the CPU)
            dtype = a._array.dtype
        elif isinstance(a, (str, device)) or (isinstance(a, int) and not isinstance(a, bool)):
            where = a
        elif a is not None:
            dtype = a
    check_device(where, op)
    return dtype, copy
