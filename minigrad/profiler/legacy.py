"""`torch.autograd.profiler.profile`, the older profiler: everything between entering and
leaving its `with` block is recorded (the scheduled `minigrad.profiler.profile` is built on it)."""
from __future__ import annotations

import warnings

from .events import EventList
from .recorder import Recorder

_UNRECORDED = ("profile_memory", "with_stack", "with_flops", "with_modules")


def warn_unrecorded(**options):
    """The options minigrad accepts but does not record: a warning, not silence."""
    asked = [name for name in _UNRECORDED if options.get(name)]
    if asked:
        warnings.warn(f"profiler: minigrad records CPU times, calls and input shapes only; "
                      f"{', '.join(asked)} is ignored", stacklevel=3)


class profile:
    """Records every op's forward, every backward node and every `record_function` range run
    (in any thread) while enabled; `key_averages()`, `table()`, `export_chrome_trace()` after."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        if use_cuda or use_device not in (None, "cpu"):
            raise RuntimeError("profiler: minigrad runs on the CPU only; use_cuda and "
                               f"use_device={use_device!r} cannot be profiled")
        warn_unrecorded(profile_memory=profile_memory, with_stack=with_stack,
                        with_flops=with_flops, with_modules=with_modules)
        self.enabled, self.record_shapes = enabled, record_shapes
        self._recorder, self._function_events = None, None

    def __enter__(self):
        if self.enabled:
            self._recorder = Recorder(self.record_shapes)
            self._recorder.start()
        return self

    def __exit__(self, *exc):
        if self._recorder is not None:
            self._recorder.stop()
            self._function_events = self._recorder.results()
            self._recorder = None
        return False

    @property
    def function_events(self):
        if self._function_events is None:
            if not self.enabled:
                return EventList()
            raise RuntimeError("profiler: the profiler has not finished running (leave its "
                               "`with` block first)")
        return self._function_events

    def events(self):
        return self.function_events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.function_events.key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False):
        return self.function_events.table(sort_by, row_limit, max_name_column_width, header,
                                          top_level_events_only)

    def export_chrome_trace(self, path):
        self.function_events.export_chrome_trace(path)

    def total_average(self):
        return self.function_events.total_average()

    @property
    def self_cpu_time_total(self):
        return self.function_events.self_cpu_time_total

    def __str__(self):
        return self.function_events.table()
