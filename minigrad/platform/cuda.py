"""`minigrad.cuda`: what PyTorch code asks about the GPU before deciding to use the CPU.

minigrad has no GPU backend, so `is_available()` is False and `device_count()` is 0. Seeding
the GPU is a no-op (there is no GPU stream to seed), so a seed-everything helper that calls
`torch.cuda.manual_seed_all(s)` next to `torch.manual_seed(s)` runs unchanged.
`minigrad.cuda.amp.GradScaler` and `minigrad.cuda.amp.autocast` are PyTorch's older spellings of
`minigrad.amp.GradScaler("cuda")` and `minigrad.autocast("cuda")`. What needs a GPU (`synchronize`,
`set_device` with a GPU index, `current_device`) raises, as PyTorch built without CUDA does.
"""
from types import SimpleNamespace

from .amp import autocast as _autocast
from .device import device as _device
from .grad_scaler import legacy_grad_scaler


def _no_gpu(op):
    return RuntimeError(f"cuda.{op}: minigrad runs on the CPU only, so there is no GPU "
                        f"(cuda.is_available() is False)")


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


def synchronize(device=None) -> None:
    raise _no_gpu("synchronize")


def current_device() -> int:
    raise _no_gpu("current_device")


def set_device(device) -> None:
    """A negative index selects no device (allowed, as in PyTorch); anything else needs a GPU."""
    if isinstance(device, int) and not isinstance(device, bool) and device < 0:
        return
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"cuda.set_device: expected a cuda device, but got: {d}")
    if d.index is not None and d.index < 0:
        return
    raise _no_gpu("set_device")


def empty_cache() -> None:
    """No GPU memory is cached, so there is nothing to free."""


def _cuda_autocast(enabled=True, dtype="float16", cache_enabled=True):
    """`cuda.amp.autocast(...)`: `autocast("cuda", ...)`, which disables itself here."""
    return _autocast("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


amp = SimpleNamespace(GradScaler=legacy_grad_scaler("cuda"), autocast=_cuda_autocast)
