"""`minigrad.amp`: mixed precision (`autocast` and the loss scaler) as far as a CPU library
that computes in each tensor's own dtype needs it.

`autocast(device_type)` is accepted as a context manager and a decorator with PyTorch's
arguments and checks, but it casts nothing: inside it minigrad computes in the tensors' own
dtypes (float32), where PyTorch on the CPU runs matmuls and linear layers in bfloat16 (which
NumPy, and so minigrad, cannot hold). The results are float32 and a little more precise than
PyTorch's; the first autocast of a process warns once. A GPU device type warns and disables
itself, as PyTorch does when CUDA is missing.

`is_autocast_enabled(device_type)` and `get_autocast_dtype(device_type)` answer what
PyTorch's do: whether an `autocast` of that device type is active in this thread (never for a
GPU type, which disabled itself), and the dtype it was given (PyTorch's default outside).

The loss scaler, `GradScaler`, is in `grad_scaler.py`: it scales on the CPU as PyTorch's does,
and `GradScaler("cuda")` disables itself.
"""
from __future__ import annotations

import contextlib
import threading
import warnings

from .device import device as _device
from .grad_scaler import GradScaler


_state = threading.local()  # .active: this thread's entered autocasts, innermost last


def _active():
    if not hasattr(_state, "active"):
        _state.active = []
    return _state.active


def _default_dtype(device_type):
    from .. import dtypes  # PyTorch's defaults: bfloat16 on the CPU, float16 on GPUs
    return dtypes.bfloat16 if device_type == "cpu" else dtypes.float16


def is_autocast_enabled(device_type=None):
    """Whether an enabled `autocast` of `device_type` (PyTorch's default: "cuda") is active
    in this thread."""
    kind = _device("cuda" if device_type is None else device_type).type
    for entered in reversed(_active()):
        if entered.device == kind:
            return entered._enabled
    return False


def get_autocast_dtype(device_type):
    """The dtype of the innermost active `autocast` of `device_type`, else its default."""
    kind = _device(device_type).type
    for entered in reversed(_active()):
        if entered.device == kind:
            return entered.fast_dtype
    return _default_dtype(kind)


class autocast(contextlib.ContextDecorator):
    """PyTorch's `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`:
    computes in the tensors' own dtypes (see the module's docstring)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device = _device(device_type).type  # an unknown type is device()'s error
        self.fast_dtype = _default_dtype(self.device) if dtype is None else dtype
        self._enabled = bool(enabled)
        if self._enabled and self.device != "cpu":
            warnings.warn(f"autocast: device_type {self.device!r} is not available (minigrad "
                          f"runs on the CPU only); disabling autocast", stacklevel=2)
            self._enabled = False
        elif self._enabled:
            warnings.warn("autocast: minigrad computes in the tensors' own dtypes inside "
                          "autocast, where PyTorch on the CPU computes matmuls and linear "
                          "layers in bfloat16", stacklevel=2)

    def __enter__(self):
        _active().append(self)
        return self

    def __exit__(self, *exc):
        _active().remove(self)
        return False


__all__ = ["GradScaler", "autocast", "get_autocast_dtype", "is_autocast_enabled"]
