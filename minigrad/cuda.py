"""`minigrad.cuda`: what PyTorch code asks about the GPU before deciding to use the CPU.

minigrad has no GPU backend, so `is_available()` is False and `device_count()` is 0. Seeding
the GPU is a no-op (there is no GPU stream to seed), so a seed-everything helper that calls
`torch.cuda.manual_seed_all(s)` next to `torch.manual_seed(s)` runs unchanged.
`minigrad.cuda.amp.GradScaler` is PyTorch's older spelling of `minigrad.amp.GradScaler`.
"""
from . import amp  # noqa: F401


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_bf16_supported() -> bool:
    return False


def manual_seed(seed) -> None:
    """No GPU, so nothing to seed."""


def manual_seed_all(seed) -> None:
    """No GPU, so nothing to seed."""
