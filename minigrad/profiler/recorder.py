"""The profiler's hooks into the engine, and `record_function`.

While a `Recorder` runs, it sits in three lists the engine checks: `autograd_op._enter_hooks`
(called before an op's forward) and `autograd_op._apply_hooks` (after it) time every
`Op.apply`, and `engine._backward_timers` times every node of a backward pass. With no
profiler running those lists are empty, so an op or a node pays one falsy check for all this.

As PyTorch's profiler does, it records the thread that started it: ops that other threads run
meanwhile pass through the hooks and are left out. Events nest: an event's parent is the one
open below it when it starts.
"""
from __future__ import annotations

import itertools
import sys
import threading
import time

from ..autograd import engine
from ..autograd import op as autograd_op
from .events import EventList, FunctionEvent

_lock = threading.Lock()
_active = [None]  # the one running Recorder, or None


def active():
    """The running Recorder, or None."""
    return _active[0]


class Recorder:
    """Collects the events of one profiling window (start() to stop())."""

    def __init__(self, record_shapes=False):
        self.record_shapes = record_shapes
        self.events = []  # finished events, in order of their end
        self._ids = itertools.count()
        self._stack = []  # the events open now, innermost last
        self._thread, self._tid = threading.get_ident(), threading.get_native_id()
        self._t0 = 0

    # --- switching on and off ---------------------------------------------------------------

    def start(self):
        with _lock:
            if _active[0] is not None:
                raise RuntimeError("profiler: a profiler is already running; minigrad runs one "
                                   "at a time (stop the first before starting another)")
            _active[0] = self
            self._thread = threading.get_ident()
            self._tid = threading.get_native_id()  # the OS's id, the one traces show
            self._t0 = time.perf_counter_ns()
            autograd_op._enter_hooks.append(self._op_enter)
            autograd_op._apply_hooks.append(self._op_exit)
            engine._backward_timers.append(self._time_node)

    def stop(self):
        """Remove every hook and close the events left open (a range still entered)."""
        with _lock:
            if _active[0] is not self:
                return
            autograd_op._enter_hooks.remove(self._op_enter)
            autograd_op._apply_hooks.remove(self._op_exit)
            engine._backward_timers.remove(self._time_node)
            _active[0] = None
        if self._stack:
            self.end(self._stack[0], force=True)

    def results(self):
        """The finished events in order of their start, parents before their children."""
        return EventList(sorted(self.events, key=lambda e: (e.time_range.start, e.id)))

    # --- events ---------------------------------------------------------------------------------

    def _now(self):
        return (time.perf_counter_ns() - self._t0) / 1000.0

    def begin(self, name, kind, shapes=()):
        """Open an event, or return None in a thread other than the profiler's."""
        if threading.get_ident() != self._thread:
            return None
        stack = self._stack
        if stack and stack[-1].kind == "cpu_op":
            self._close_failed_ops()
        event = FunctionEvent(next(self._ids), name, self._tid, self._now(), shapes, kind,
                              stack[-1] if stack else None)
        if name.startswith("ProfilerStep#"):  # PyTorch's events name every step alike,
            event.name, event.trace_name = "ProfilerStep*", name  # its trace by number
        stack.append(event)
        return event

    def _close_failed_ops(self):
        """Close the ops open on top of the stack whose `apply` is no longer running: their
        forward raised, so their end hook never ran. They end now, when it is noticed. (A
        genuine parent op is one whose `apply` frame is an ancestor of the caller's.)"""
        running, frame = set(), sys._getframe(2)
        while frame is not None:
            running.add(frame)
            frame = frame.f_back
        stack = self._stack
        while stack and stack[-1].kind == "cpu_op" and stack[-1].frame not in running:
            self.end(stack[-1])

    def end(self, event, force=False):
        """Close `event`, and first any event opened after it and never closed (an op whose
        forward raised, so that its end hook never ran): those end now too."""
        if event is None or (threading.get_ident() != self._thread and not force):
            return
        now, stack = self._now(), self._stack
        if event not in stack:
            return  # closed already (stop() closes what is left open)
        while stack:
            top = stack.pop()
            top.time_range.end, top.frame = now, None  # the frame's locals are freed
            self.events.append(top)
            if top.cpu_parent is not None:
                top.cpu_parent.cpu_children.append(top)
            if top is event:
                return

    # --- the hooks ------------------------------------------------------------------------------

    def _shapes(self, args):
        if not self.record_shapes:
            return ()
        return [list(a.shape) if hasattr(a, "shape") else [] for a in args]

    def _op_enter(self, cls, args):
        event = self.begin(cls.__name__, "cpu_op", self._shapes(args))
        if event is not None:
            event.frame = sys._getframe(1)  # the op's `apply`: running until it returns

    def _op_exit(self, cls, args, kwargs, out):
        if threading.get_ident() != self._thread:
            return
        stack = self._stack
        # the newest open event of this op (another op's forward may have raised inside it)
        for event in reversed(stack):
            if event.kind == "cpu_op" and event.name == cls.__name__:
                self.end(event)
                return

    def _time_node(self, node, fn, *args):
        grad = args[-1]
        event = self.begin(node.name(), "backward",
                           [list(grad.shape)] if self.record_shapes else ())
        try:
            return fn(*args)
        finally:
            self.end(event)  # (None, a no-op, in another thread)


class record_function:
    """A named range in the profile, nested around the ops run inside it: a context manager
    (`with record_function("attention"):`) or a decorator. Costs nothing with no profiler
    running. `args` is kept as PyTorch's is, as a string shown in the trace."""

    def __init__(self, name, args=None):
        self.name, self.args = name, args
        self._event = self._recorder = None

    def __enter__(self):
        recorder = _active[0]
        if recorder is not None:
            self._recorder = recorder
            self._event = recorder.begin(self.name, "user_annotation")
        return self

    def __exit__(self, *exc):
        if self._event is not None:
            self._recorder.end(self._event)
            self._event = self._recorder = None
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
