"""`minigrad.distributed`: PyTorch's distributed API where no process group can exist.

minigrad trains in one process, so `is_available()` is False and `init_process_group` raises
an error naming the backend asked for. Everything that needs a process group raises PyTorch's
"not initialized" error, so scripts that branch on `is_initialized()` (or on the RANK
variable torchrun sets) take their single-process path unchanged.
"""
from __future__ import annotations

import enum

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class ReduceOp(enum.Enum):
    """The reductions of `all_reduce` (PyTorch's names)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4


def is_available() -> bool:
    """False: minigrad has no distributed backend (PyTorch's builds usually have one)."""
    return False


def is_initialized() -> bool:
    return False


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    name = backend if backend is not None else "the default backend"
    raise RuntimeError(f"init_process_group: minigrad has no distributed backend, so "
                       f"{name!r} cannot start a process group; minigrad trains in one "
                       f"process (run the script without torchrun, or with one process)")


def _needs_group(op):
    return ValueError(f"{op}: {_NOT_INITIALIZED}")


def destroy_process_group(group=None) -> None:
    raise _needs_group("destroy_process_group")


def get_rank(group=None) -> int:
    raise _needs_group("get_rank")


def get_world_size(group=None) -> int:
    raise _needs_group("get_world_size")


def barrier(group=None, async_op=False, device_ids=None):
    raise _needs_group("barrier")


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    raise _needs_group("all_reduce")
