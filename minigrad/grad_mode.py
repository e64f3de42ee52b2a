"""PyTorch's other grad-mode switches, built on `no_grad` and `enable_grad`.

`inference_mode()` is `no_grad()` here (PyTorch's version also skips version counting, a speed
detail). `set_grad_enabled(mode)` takes effect when called, so it works both as a plain call
(`set_grad_enabled(False)`) and as a `with` block, which restores the previous mode on exit.
"""
from __future__ import annotations

import contextlib
import functools

from .autograd import enable_grad, is_grad_enabled, no_grad


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
    """No graph recording inside (mode=True); `inference_mode(False)` changes nothing."""

    def __init__(self, mode: bool = True):
        self.mode = mode
        self._inner = None

    def __enter__(self):
        self._inner = no_grad() if self.mode else contextlib.nullcontext()
        self._inner.__enter__()

    def __exit__(self, *exc):
        return self._inner.__exit__(*exc)

    def __call__(self, fn):  # a fresh context per call, so recursive calls nest correctly
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(self.mode):
                return fn(*args, **kwargs)
        return wrapper
