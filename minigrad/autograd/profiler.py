"""`torch.autograd.profiler`: the older profiler, `profile` and `record_function`, and the event
lists it gives (all live in minigrad.profiler, where `torch.profiler` builds on them)."""
from ..profiler.events import EventList, FunctionEvent
from ..profiler.legacy import profile
from ..profiler.recorder import record_function

__all__ = ["EventList", "FunctionEvent", "profile", "record_function"]
