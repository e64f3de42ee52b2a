"""Anomaly mode (`detect_anomaly`, `set_detect_anomaly`): a backward producing NaN or inf names
the op and where the user created it. While it is on, a record hook keeps each node's creation
site; the engine asks `check_finite` about every gradient a node returns."""
from __future__ import annotations

import functools
import threading
import traceback

import numpy as np

from ..grad_mode import _set_switch, _state
from .op import SharedRecordHook


class detect_anomaly:
    """While on, a backward producing NaN or inf names the op and where the user created it;
    with `check_nan=False` it only keeps where each op was created. A context manager and a
    decorator."""

    def __init__(self, check_nan=True):
        self.check_nan = bool(check_nan)

    def __enter__(self):
        self.prev = (_state.anomaly, _check_nan_enabled())
        _set_mode(True, self.check_nan)

    def __exit__(self, *exc):
        _set_mode(*self.prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class set_detect_anomaly:
    """Turn anomaly mode on or off now (PyTorch's function form); as a context manager,
    restore the previous mode afterwards."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state.anomaly, _check_nan_enabled())
        _set_mode(bool(mode), bool(check_nan))

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _set_mode(*self.prev)
        return False


def is_anomaly_enabled():
    return _state.anomaly


def is_anomaly_check_nan_enabled():
    return _check_nan_enabled()


_nan_check = threading.local()  # per thread, as the mode itself


def _check_nan_enabled():
    return getattr(_nan_check, "on", True)


def _set_mode(on, check_nan):
    """Set this thread's mode; the creation-site hook is held once per thread that has it on,
    however the context managers and the function form are mixed."""
    if on and not _state.anomaly:
        _creation_sites.acquire()
    elif not on and _state.anomaly:
        _creation_sites.release()
    _set_switch("anomaly", on)
    _nan_check.on = check_nan


def _remember_creation_site(node, out):
    if _state.anomaly:
        node.creation_site = traceback.extract_stack()[:-3]


_creation_sites = SharedRecordHook(_remember_creation_site)


def check_finite(node, in_grads):
    """Raise, naming `node` and where it was created, if a gradient it returned is not finite."""
    if not _check_nan_enabled() or all(g is None or np.all(np.isfinite(g)) for g in in_grads):
        return
    trace = getattr(node, "creation_site", None)
    where = "".join(traceback.format_list(trace[-3:])) if trace else "  (unknown)\n"
    raise RuntimeError(f"detect_anomaly: {node.name()} returned NaN or inf in its gradient "
                       f"(output shape {node.out_shape}); the op was created at:\n{where}")
