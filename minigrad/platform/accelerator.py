"""`minigrad.accelerator`: PyTorch's device-generic accelerator API, on a machine without one.

Scripts write `device = accelerator.current_accelerator() or device("cpu")`; here there is no
accelerator, so `is_available()` is False, `current_accelerator()` is None and
`device_count()` is 0, and anything that needs the device raises PyTorch's error.
"""
from __future__ import annotations


def _none(op):
    return RuntimeError(f"accelerator.{op}: Cannot access accelerator device when none is "
                        f"available (minigrad runs on the CPU only)")


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, or None: there is none."""
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise _none("current_device_index")


def set_device_index(device) -> None:
    raise _none("set_device_index")


def synchronize(device=None) -> None:
    raise _none("synchronize")
