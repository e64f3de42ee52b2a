"""`torch.autograd.profiler`: the older profiler, `profile` and `record_function` (both live in
minigrad.profiler, where `torch.profiler` builds on them)."""
from ..profiler.events import EventList, FunctionEvent, FunctionEventAvg
from ..profiler.legacy import profile
from ..profiler.recorder import record_function

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]
