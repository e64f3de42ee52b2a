"""A profiler of minigrad's ops, at `torch.profiler`'s path.

    recorder.py  the hooks into `Op.apply` and the backward loop, `record_function`
    events.py    `FunctionEvent`, their per-name sums and `EventList` (key_averages, chrome trace)
    table.py     the text table of `key_averages().table()`
    legacy.py    `torch.autograd.profiler.profile`: everything inside a `with` block
    profiler.py  `profile` with `schedule`, `step()` and `on_trace_ready`, and
                 `tensorboard_trace_handler`

Every op's forward is an event named by its `Op` class (`Add`, `MatMul`, ...), every
backward node one named by its node (`AddBackward0`, `AccumulateGrad`), every
`record_function` a range around what runs inside it. As in PyTorch:

    from minigrad.profiler import ProfilerActivity, profile, record_function
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with record_function("forward"):
            loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # open in chrome://tracing or ui.perfetto.dev

Timing costs a few microseconds per op and node while a profiler runs, so many small ops look
slower than they are; with none running, the hooks cost one falsy check each.
"""
from .profiler import (ProfilerAction, ProfilerActivity, profile, schedule,
                       supported_activities, tensorboard_trace_handler)
from .recorder import record_function

__all__ = ["ProfilerAction", "ProfilerActivity", "profile", "record_function", "schedule",
           "supported_activities", "tensorboard_trace_handler"]
