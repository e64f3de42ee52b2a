"""The process-wide numeric switches PyTorch scripts set: float32 matmul precision,
deterministic algorithms and the number of CPU threads.

minigrad always multiplies float32 in float32 and its kernels give the same bits on every run
(for a given thread count), so precision and determinism are permissions it never needs:
the settings are kept and read back as in PyTorch, and the computation is the "highest",
deterministic one whatever they say. The thread count is real: it is Numba's, which the
parallel kernels use.
"""
from __future__ import annotations

import threading
import warnings

_PRECISIONS = ("highest", "high", "medium")
_state = {"precision": "highest", "deterministic": False, "warn_only": False}
_lock = threading.Lock()


def set_float32_matmul_precision(precision: str) -> None:
    """"highest" (float32 products in float32), "high" or "medium" (which allow TF32 or
    bfloat16 products where hardware has them; minigrad's CPU kernels keep float32)."""
    if precision not in _PRECISIONS:  # PyTorch warns and keeps the old setting
        warnings.warn(f"set_float32_matmul_precision: {precision!r} is not one of "
                      f"{', '.join(map(repr, _PRECISIONS))}; the call has no effect",
                      stacklevel=2)
        return
    with _lock:
        _state["precision"] = precision


def get_float32_matmul_precision() -> str:
    return _state["precision"]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ask for deterministic algorithms; minigrad has no other kind, so this is recorded only."""
    if not isinstance(mode, bool) or not isinstance(warn_only, bool):
        raise TypeError(f"use_deterministic_algorithms: expected bools, got "
                        f"mode={mode!r}, warn_only={warn_only!r}")
    with _lock:
        _state["deterministic"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_num_threads(n: int) -> None:
    """Run Numba's parallel kernels on `n` threads (at most the cores Numba started with;
    Numba keeps the setting per calling thread)."""
    import numba
    if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
        raise RuntimeError(f"set_num_threads: expected a positive integer, got {n!r}")
    numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))


def get_num_threads() -> int:
    """The number of threads Numba's parallel kernels use."""
    import numba
    return numba.get_num_threads()
