"""`torch.profiler.profile`: the profiler driven by a training loop's `step()` calls, which a
`schedule` turns into windows of steps skipped, warmed up and recorded; `on_trace_ready` gets
the profiler at the end of each recorded window."""
from __future__ import annotations

import enum
import os
import socket
import time
import warnings

from .events import EventList
from .legacy import profile as _window
from .legacy import warn_unrecorded
from .recorder import record_function


class ProfilerActivity(enum.Enum):
    """What can be profiled; minigrad has the CPU alone."""

    CPU = 0
    CUDA = 2
    XPU = 3
    MTIA = 4


def supported_activities():
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """What the profiler does at a step: nothing, warm up, record, record and hand the trace on."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The action of each step number: after `skip_first` steps, cycles of `wait` steps
    ignored, `warmup` steps warmed up and `active` steps recorded, the last of which saves;
    `repeat` cycles (0: without end). `skip_first_wait` drops the first cycle's wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step):
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if phase < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return schedule_fn


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """An `on_trace_ready` that writes each trace into `dir_name` as
    `{worker_name}.{time_ns}.pt.trace.json` (gzipped with `use_gzip`), the files TensorBoard's
    profiler plugin reads; `worker_name` defaults to "{hostname}_{pid}"."""

    def handler_fn(prof):
        nonlocal worker_name
        try:
            os.makedirs(dir_name, exist_ok=True)
        except Exception as e:
            raise RuntimeError("Can't create directory: " + str(dir_name)) from e
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        prof.export_chrome_trace(os.path.join(dir_name, file_name + (".gz" if use_gzip else "")))
    return handler_fn


class profile:
    """The profiler as a context manager (or `start()`/`stop()`): call `step()` at the end of
    each training step. Without a `schedule` everything from start to stop is one recording;
    with one, each recorded step is also a `ProfilerStep#N` range, as in PyTorch."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, use_cuda=None):
        activities = set(activities) if activities is not None else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        if not activities <= supported_activities():
            raise RuntimeError(f"profiler: minigrad profiles the CPU only; got activities "
                               f"{sorted(a.name for a in activities)}")
        warn_unrecorded(profile_memory=profile_memory, with_stack=with_stack,
                        with_flops=with_flops, with_modules=with_modules)
        self.activities, self.record_shapes = activities, record_shapes
        self.schedule = schedule if schedule is not None else _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready, self.acc_events = on_trace_ready, acc_events
        self._earlier = []  # with acc_events: the events of the windows before the last
        self.step_num, self.current_action = 0, self.schedule(0)
        self.profiler, self._window, self.step_rec_fn = None, None, None

    # --- the state machine of PyTorch's profile._transit_action ---------------------------------

    def _prepare_trace(self):
        self._window = _window(record_shapes=self.record_shapes)

    def _start_trace(self):
        self._window.__enter__()

    def _stop_trace(self):
        self._window.__exit__(None, None, None)
        if self.acc_events and self.profiler is not None:
            self._earlier += self.profiler.function_events
        self.profiler, self._window = self._window, None

    def _trace_ready(self):
        if self.on_trace_ready:
            self.on_trace_ready(self)

    def _transit_action(self, prev, current):
        A = ProfilerAction
        R, S = A.RECORD, A.RECORD_AND_SAVE
        prepare, start, stop, ready = (self._prepare_trace, self._start_trace,
                                       self._stop_trace, self._trace_ready)
        steps = {(A.NONE, A.WARMUP): [prepare], (A.NONE, R): [prepare, start],
                 (A.NONE, S): [prepare, start], (A.WARMUP, R): [start], (A.WARMUP, S): [start],
                 (A.WARMUP, A.NONE): ["WARMUP followed by NONE", start, stop],
                 (R, A.NONE): ["RECORD followed by NONE", stop],
                 (R, A.WARMUP): ["RECORD followed by WARMUP", stop],
                 (S, A.NONE): [stop, ready], (S, A.WARMUP): [stop, ready, prepare],
                 (S, R): [stop, ready, prepare, start], (S, S): [stop, ready, prepare, start],
                 (A.WARMUP, None): [start, stop], (R, None): [stop, ready],
                 (S, None): [stop, ready]}
        for action in steps.get((prev, current), ()):
            if isinstance(action, str):
                warnings.warn("Incorrect schedule: " + action, stacklevel=3)
            else:
                action()

    # --- the user's calls -----------------------------------------------------------------------

    def start(self):
        self._transit_action(ProfilerAction.NONE, self.current_action)
        self._enter_step()

    def stop(self):
        self._exit_step()
        self._transit_action(self.current_action, None)

    def step(self):
        """The end of a training step: the schedule decides what the next one is."""
        self._exit_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit_action(prev, self.current_action)
        self._enter_step()

    def _enter_step(self):
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _exit_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # --- the results of the last recorded window ------------------------------------------------

    def events(self):
        if self.profiler is None:
            raise RuntimeError("profiler: nothing has been recorded yet (no recorded window "
                               "of the schedule has ended)")
        if self.acc_events:  # every window's events, not only the last one's
            return EventList(self._earlier + list(self.profiler.events()))
        return self.profiler.events()

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False):
        return self.events().key_averages(group_by_input_shape, group_by_stack_n,
                                          group_by_overload_name)

    def export_chrome_trace(self, path):
        self.events().export_chrome_trace(path)
