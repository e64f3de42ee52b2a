"""`minigrad.multiprocessing`, PyTorch's `torch.multiprocessing`: Python's `multiprocessing`
(every name of it: `Process`, `Queue`, `get_context`, `set_start_method`, ...) with tensors
sent by reference to shared memory (`reductions.py`), and `spawn` (`spawn.py`).

A tensor put in a queue, or passed to a new process as an argument, moves into shared memory
(`Tensor.share_memory_()`; `nn.Module.share_memory()` moves a model's) and the receiver maps
the same memory, so in-place updates in one process are seen by the others: Hogwild
training (several processes updating one shared model) works as in PyTorch. Memory is shared
by PyTorch's two strategies, "file_descriptor" (the default) and "file_system"
(`shared_memory.py`). Importing it starts nothing; it registers the tensors' reductions with
multiprocessing's pickler (as importing `torch.multiprocessing` does): a program that imports
it asks for tensors to travel by reference. `import minigrad` alone leaves the pickler as it is.
"""

import multiprocessing as _multiprocessing

from .. import shared_memory as _shared
from .reductions import init_reductions
from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException,
                    spawn, start_processes)

init_reductions()

__all__ = [
    "Array", "Barrier", "BoundedSemaphore", "Condition", "Event", "JoinableQueue", "Lock",
    "Manager", "Pipe", "Pool", "Process", "ProcessContext", "ProcessExitedException",
    "ProcessRaisedException", "Queue", "RLock", "RawArray", "RawValue", "Semaphore",
    "SimpleQueue", "Value", "active_children", "cpu_count", "current_process",
    "get_all_sharing_strategies", "get_all_start_methods", "get_context",
    "get_sharing_strategy", "get_start_method", "init_reductions", "parent_process",
    "set_executable", "set_forkserver_preload", "set_sharing_strategy", "set_start_method",
    "spawn", "start_processes",
]


def get_all_sharing_strategies():
    """The ways tensors can be shared: {'file_descriptor', 'file_system'} (shared_memory.py)."""
    return set(_shared.STRATEGIES)


def get_sharing_strategy():
    return _shared.strategy[0]


def set_sharing_strategy(new_strategy):
    """Choose how the tensors shared from now on are shared (see shared_memory.py)."""
    assert new_strategy in _shared.STRATEGIES
    _shared.strategy[0] = new_strategy


def __getattr__(name):
    """Python's multiprocessing names, with tensors sent by reference from their first use."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        value = getattr(_multiprocessing, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    init_reductions()
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
