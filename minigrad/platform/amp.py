"""`minigrad.amp`: mixed precision (`autocast` and the loss scaler) as far as a CPU library
that computes in each tensor's own dtype needs it.

`autocast(device_type)` is accepted as a context manager and a decorator with PyTorch's
arguments and checks, but it casts nothing: inside it minigrad computes in the tensors' own
dtypes (float32), where PyTorch on the CPU runs matmuls and linear layers in bfloat16 (which
NumPy, and so minigrad, cannot hold). The results are float32 and a little more precise than
PyTorch's; the first autocast of a process warns once. A GPU device type warns and disables
itself, as PyTorch does when CUDA is missing.

GPT training scripts build `GradScaler(enabled=(dtype == "float16"))` whatever the device and
call it every step: `scaler.scale(loss).backward()`, `scaler.unscale_(opt)`, `scaler.step(opt)`,
`scaler.update()`. Loss scaling keeps float16 gradients from underflowing on a GPU; minigrad
trains in float32 on the CPU, so its scaler is always the disabled one: `scale` returns the
loss unchanged and `step` is `optimizer.step()`. Asking for an enabled one warns and disables
it, as PyTorch does when CUDA is missing.
"""
from __future__ import annotations

import contextlib
import warnings

from .device import device as _device


class GradScaler:
    """A disabled loss scaler (PyTorch's `torch.amp.GradScaler`): every method passes through."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        if enabled:
            warnings.warn("GradScaler: loss scaling is for float16 training on a GPU and "
                          "minigrad trains in float32 on the CPU; disabling it", stacklevel=2)

    def is_enabled(self):
        return False

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        """Gradients were never scaled, so there is nothing to undo."""

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """The scale stays 1: there is no overflow to react to."""

    def get_scale(self):
        return 1.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        if state_dict:
            raise ValueError("GradScaler.load_state_dict: this scaler is disabled and keeps no "
                             "state, but the given state is not empty")


class autocast(contextlib.ContextDecorator):
    """PyTorch's `torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)`:
    computes in the tensors' own dtypes (see the module's docstring)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"autocast: expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device = _device(device_type).type  # an unknown type is device()'s error
        from .. import dtypes  # PyTorch's defaults: bfloat16 on the CPU, float16 on GPUs
        default = dtypes.bfloat16 if self.device == "cpu" else dtypes.float16
        self.fast_dtype = default if dtype is None else dtype
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
        return self

    def __exit__(self, *exc):
        return False
