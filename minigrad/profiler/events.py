"""What a profiler recorded: one `FunctionEvent` per op, backward node or `record_function`
range, their per-name sums (`FunctionEventAvg`) and the `EventList` that holds them, under
PyTorch's names (`torch.autograd.profiler_util`).

Times are in microseconds, as PyTorch's. An event's *total* CPU time runs from its start to its
end; its *self* time is the total less the totals of the events nested directly inside it (in
the same thread), so that the self times of all events add up to the time profiled once.
"""
from __future__ import annotations

import gzip
import json
import os

from .table import build_table


class Interval:
    """An event's start and end, in microseconds from the profiler's start."""

    def __init__(self, start=0.0, end=0.0):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class _NoDevice:
    """The device times of events on the CPU alone: zero, as PyTorch's without a GPU (so that a
    table sorted by "cuda_time_total" works, in the order the events came)."""

    device_time_total = self_device_time_total = 0.0
    cuda_time_total = self_cuda_time_total = 0.0


class FunctionEvent(_NoDevice):
    """One timed range: an op's forward (`kind` "cpu_op"), a backward node ("backward") or a
    user's `record_function` ("user_annotation"), in thread `thread`."""

    count = 1

    def __init__(self, id, name, thread, start_us, input_shapes=(), kind="cpu_op", parent=None):
        self.id, self.name, self.thread, self.kind = id, name, thread, kind
        self.time_range = Interval(start_us, start_us)
        self.input_shapes = list(input_shapes)
        self.cpu_parent, self.cpu_children = parent, []
        self.trace_name = name  # its name in the chrome trace
        self.frame = None  # an op's `apply` frame while it runs (recorder.py)

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_time(self):
        return self.cpu_time_total

    @property
    def is_user_annotation(self):
        return self.kind == "user_annotation"

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_NoDevice):
    """The events of one key (a name, and its input shapes when grouped by them) added up."""

    def __init__(self, key, input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0

    def add(self, event):
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    @property
    def cpu_time(self):
        """The average total CPU time of one call."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def self_cpu_time(self):
        return self.self_cpu_time_total / self.count if self.count else 0.0

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total:.3f}us "
                f"cpu_time={self.cpu_time_total:.3f}us input_shapes={self.input_shapes}>")


class EventList(list):
    """A list of `FunctionEvent`s (or of `FunctionEventAvg`s after `key_averages`)."""

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        """One `FunctionEventAvg` per name (per name and input shapes when
        `group_by_input_shape`), in order of first appearance."""
        groups = {}
        for e in self:
            shapes = str(e.input_shapes) if group_by_input_shape else None
            avg = groups.get((e.key, shapes))
            if avg is None:
                avg = groups[(e.key, shapes)] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        return EventList(groups.values())

    def total_average(self):
        """Every event added into one `FunctionEventAvg` keyed "Total"."""
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, header=None,
              top_level_events_only=False):
        """PyTorch's text table: name, self CPU %, self CPU, CPU total %, CPU total, CPU time
        avg, # of calls (and input shapes when grouped by them), sorted by the attribute
        `sort_by` ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", ...)."""
        rows = list(self)
        if top_level_events_only:
            rows = [e for e in rows if getattr(e, "cpu_parent", None) is None]
        if sort_by is not None:
            if rows and not hasattr(rows[0], sort_by):
                raise AttributeError(f"table: cannot sort by {sort_by!r}: the events have no "
                                     f"such attribute (try 'cpu_time_total', "
                                     f"'self_cpu_time_total', 'cpu_time' or 'count')")
            rows.sort(key=lambda e: getattr(e, sort_by), reverse=True)
        return build_table(rows, self.self_cpu_time_total, row_limit, max_name_column_width,
                           header)

    def __str__(self):
        return self.table()

    def export_chrome_trace(self, path):
        """Write the events as Chrome's trace format: JSON with one complete ("ph": "X") event
        per range, which chrome://tracing and Perfetto (ui.perfetto.dev) open; gzipped when
        `path` ends in ".gz", as PyTorch's."""
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as f:
            json.dump(chrome_trace(self), f)


def chrome_trace(events):
    """The trace-format dict of `events` (FunctionEvents): times in microseconds."""
    pid = os.getpid()
    out = []
    for e in events:
        entry = {"ph": "X", "cat": e.kind, "name": e.trace_name, "pid": pid, "tid": e.thread,
                 "ts": e.time_range.start, "dur": e.cpu_time_total, "args": {}}
        if e.input_shapes:
            entry["args"]["Input Dims"] = e.input_shapes
        out.append(entry)
    return {"traceEvents": out, "displayTimeUnit": "ms"}
