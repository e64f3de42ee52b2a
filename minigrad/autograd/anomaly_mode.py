"""Anomaly mode (`detect_anomaly`): a backward producing NaN or inf names the op and where the
user created it. While it is on, a record hook keeps each node's creation site; the engine asks
`check_finite` about every gradient a node returns."""
from __future__ import annotations

import functools
import traceback

import numpy as np

from ..grad_mode import _state, _Switch
from .function import SharedRecordHook


class detect_anomaly(_Switch):
    """While on, a backward producing NaN or inf names the op and where the user created it."""

    def __init__(self):
        super().__init__("anomaly", True)

    def __enter__(self):
        _creation_sites.acquire()
        super().__enter__()

    def __exit__(self, *exc):
        super().__exit__()
        _creation_sites.release()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly():
                return fn(*args, **kwargs)
        return wrapper


def _remember_creation_site(node, out):
    if _state.anomaly:
        node.creation_site = traceback.extract_stack()[:-3]


_creation_sites = SharedRecordHook(_remember_creation_site)


def check_finite(node, in_grads):
    """Raise, naming `node` and where it was created, if a gradient it returned is not finite."""
    if all(g is None or np.all(np.isfinite(g)) for g in in_grads):
        return
    trace = getattr(node, "creation_site", None)
    where = "".join(traceback.format_list(trace[-3:])) if trace else "  (unknown)\n"
    raise RuntimeError(f"detect_anomaly: {node.name()} returned NaN or inf in its gradient "
                       f"(output shape {node.out_shape}); the op was created at:\n{where}")
