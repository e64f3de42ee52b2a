"""Per-thread switches that change what ops do, as in PyTorch: grad mode (`no_grad`,
`enable_grad`), anomaly mode (see `autograd/anomaly_mode.py`) and the module being run (set by
`Module.__call__`, read by the graph renderer). Each thread has its own values, so a thread
running inference under `no_grad` does not turn recording off for a thread that trains.
"""
from __future__ import annotations

import contextlib
import functools
import threading


class ModuleScope:
    """Which module this thread is running: a plain object, one per thread, because reading or
    writing an attribute of the per-thread state costs several times a plain object's, and
    `Module.__call__` sets and restores the path for every layer."""

    __slots__ = ("path",)

    def __init__(self):
        self.path = None  # dotted path of the innermost module being called, None outside


class _ThreadState(threading.local):
    """Per-thread switches, as in PyTorch: grad mode, anomaly mode, the module being run."""

    grad_enabled = True
    anomaly = False
    inference = False  # inside `inference_mode()` (what `is_inference_mode_enabled` reads)

    def __init__(self):  # runs once in each thread that uses the state
        self.module = ModuleScope()


_state = _ThreadState()

# How many threads have grad mode off right now. Every op reads grad mode, and an attribute of
# the per-thread state costs several times a module global's to read: while no thread has
# turned recording off (a training step's forward, a sampling loop), the count says that grad
# mode is on in this thread too, and the per-thread state is read only otherwise. A thread that
# ends inside `no_grad` leaves the count above 0: the ops then read the per-thread state.
threads_without_grad = [0]
_switch_lock = threading.Lock()


def is_grad_enabled() -> bool:
    """True unless inside `no_grad()`."""
    return not threads_without_grad[0] or _state.grad_enabled


def _set_switch(name, value):
    """Set this thread's switch `name`, keeping `threads_without_grad` up to date."""
    if name != "grad_enabled":
        setattr(_state, name, value)
        return
    with _switch_lock:
        was = _state.grad_enabled
        _state.grad_enabled = value
        threads_without_grad[0] += (not value) - (not was)


class _Switch(contextlib.ContextDecorator):
    """Context manager and decorator that sets one per-thread switch and restores it after."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __enter__(self):
        self.prev = getattr(_state, self.name)
        _set_switch(self.name, self.value)

    def __exit__(self, *exc):
        _set_switch(self.name, self.prev)
        return False

    def __call__(self, fn):  # a fresh instance per call keeps nested/recursive use safe
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _Switch(self.name, self.value):
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_Switch):
    """Turn graph recording off, as `torch.no_grad`."""

    def __init__(self):
        super().__init__("grad_enabled", False)


class enable_grad(_Switch):
    """Turn graph recording back on, as `torch.enable_grad`."""

    def __init__(self):
        super().__init__("grad_enabled", True)


class module_scope:
    """Used by `Module.__call__`: ops created inside are tagged with `path` (for `viz`)."""

    __slots__ = ("path", "prev")

    def __init__(self, path: str):
        self.path = path

    def __enter__(self):
        scope = _state.module
        self.prev, scope.path = scope.path, self.path

    def __exit__(self, *exc):
        _state.module.path = self.prev
        return False


def current_module_path() -> str | None:
    return _state.module.path


# The per-thread switches themselves, for `Module.__call__`: it runs for every layer, and sets
# and restores the path on this thread's `ModuleScope` directly (two Python calls less per layer
# than a helper function would cost; code elsewhere uses the functions and context managers here).
thread_switches = _state


# --- PyTorch's other grad-mode switches, built on the two above ----------------------------
# `inference_mode()` is `no_grad()` here (PyTorch's version also skips version counting, a speed
# detail), `inference_mode(False)` is `enable_grad()`. `set_grad_enabled(mode)` takes effect when
# called, so it works both as a plain call and as a `with` block, which restores the previous
# mode on exit.

class set_grad_enabled(contextlib.ContextDecorator):
    """Turn graph recording on or off now; as a context manager, restore it afterwards."""

    def __init__(self, mode: bool):
        self.prev = is_grad_enabled()
        (enable_grad() if mode else no_grad()).__enter__()

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        (enable_grad() if self.prev else no_grad()).__enter__()
        return False


class inference_mode(contextlib.ContextDecorator):
    """No graph recording inside (mode=True); `inference_mode(False)` records (as
    `enable_grad`, also under `no_grad`) and turns `is_inference_mode_enabled()` off, as in
    PyTorch."""

    def __init__(self, mode: bool = True):
        self.mode = mode
        self._inner = None
        self._prev = False

    def __enter__(self):
        self._inner = no_grad() if self.mode else enable_grad()
        self._inner.__enter__()
        self._prev, _state.inference = _state.inference, bool(self.mode)

    def __exit__(self, *exc):
        _state.inference = self._prev
        return self._inner.__exit__(*exc)

    def __call__(self, fn):  # a fresh context per call, so recursive calls nest correctly
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled() -> bool:
    """Whether this thread is inside `inference_mode()` (and not in an inner
    `inference_mode(False)`)."""
    return _state.inference
