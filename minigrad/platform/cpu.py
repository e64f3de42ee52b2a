"""`minigrad.cpu`: PyTorch's `torch.cpu`, the device module of the one device minigrad has.

`minigrad.cpu.amp.autocast` and `minigrad.cpu.amp.GradScaler` are PyTorch's older spellings of
`minigrad.autocast("cpu")` and `minigrad.amp.GradScaler("cpu")`.
"""
from __future__ import annotations

from types import SimpleNamespace

from .amp import autocast as _autocast
from .grad_scaler import legacy_grad_scaler


def is_available() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def synchronize(device=None) -> None:
    """CPU work is finished when its call returns, so there is nothing to wait for."""


def _cpu_autocast(enabled=True, dtype=None, cache_enabled=True):
    """`cpu.amp.autocast(...)`: `autocast("cpu", ...)` with PyTorch's older argument order."""
    return _autocast("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


amp = SimpleNamespace(GradScaler=legacy_grad_scaler("cpu"), autocast=_cpu_autocast)
