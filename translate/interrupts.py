"""Ctrl-C between steps, never inside one.

Python raises KeyboardInterrupt wherever the program happens to be when SIGINT arrives: in the
forward pass after dropout drew its seed from the generator, or inside `optimizer.step()` after
some parameters moved and others not. A checkpoint written then would hold a state that no
uninterrupted run ever passes through, and resuming from it would drift from the run it
continues. So while a `DeferredInterrupts` block runs, SIGINT and SIGTERM only take note; the
training loop calls `check()` at each step boundary, where the state is whole, and the
interrupt takes effect there. A second signal stops at once, without saving.

Outside such a block the commands run under `signals_raise()`: a process inherits how it treats
SIGINT from whoever started it, and one started with SIGINT ignored (`nohup`, `cmd &` in a
script) would otherwise ignore a Ctrl-C until training began, or die of it silently, depending on
the moment. Installing the handlers explicitly makes the answer the same whatever was inherited.
"""
from __future__ import annotations

import contextlib
import signal
import threading

SIGNALS = tuple(s for s in (getattr(signal, "SIGINT", None), getattr(signal, "SIGTERM", None))
                if s is not None)


class Interrupted(KeyboardInterrupt):
    """Training stopped by a signal; `forced` if it could not wait for a step boundary."""

    def __init__(self, signum: int, forced: bool = False):
        super().__init__(signal.Signals(signum).name)
        self.signum, self.forced = signum, forced
        self.reported = False  # set by whoever has told the user where it stopped


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()  # only it may set handlers


def _restore(previous: dict) -> None:
    for sig, handler in previous.items():  # None: a handler set outside Python
        signal.signal(sig, signal.SIG_DFL if handler is None else handler)
    previous.clear()


def _raise(signum, frame):
    raise Interrupted(signum)


@contextlib.contextmanager
def signals_raise():
    """While the block runs, SIGINT and SIGTERM raise `Interrupted` wherever the program is,
    whatever handlers (or ignored signals) the process inherited; restored on the way out."""
    previous = {}
    if _in_main_thread():
        for sig in SIGNALS:
            previous[sig] = signal.signal(sig, _raise)
    try:
        yield
    finally:
        _restore(previous)


class DeferredInterrupts:
    """`with DeferredInterrupts() as d:` ... `d.check()` at each safe point."""

    def __init__(self):
        self.pending = None
        self._previous = {}

    def __enter__(self):
        if _in_main_thread():
            for sig in SIGNALS:
                self._previous[sig] = signal.signal(sig, self._note)
        return self

    def _note(self, signum, frame):
        if self.pending is not None:  # asked twice: the user will not wait
            raise Interrupted(signum, forced=True)
        self.pending = signum

    def check(self):
        """Raise Interrupted if a signal arrived since the last safe point."""
        if self.pending is not None:
            raise Interrupted(self.pending)

    def __exit__(self, *exc):
        _restore(self._previous)
        return False
