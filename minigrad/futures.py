"""`minigrad.futures`: PyTorch's `Future`, the result of work that may finish later.

PyTorch hands out futures from `torch.jit.fork` and from its distributed RPC. minigrad runs
everything eagerly in the calling thread, so a future made by `jit.fork` is already complete
when it is returned; a future made by hand completes when `set_result` (or `set_exception`)
is called, and the callbacks attached by `then` and `add_done_callback` run then, in the
order they were attached, as PyTorch runs them.
"""
from __future__ import annotations

__all__ = ["Future", "collect_all", "wait_all"]

_PENDING = object()


class Future:
    """A value (or an error) that `wait()` returns (or raises) once it is set."""

    def __init__(self, *, devices=None):
        self._value, self._error, self._callbacks = _PENDING, None, []

    def done(self) -> bool:
        """Whether a result or an error has been set."""
        return self._value is not _PENDING or self._error is not None

    def wait(self):
        """The result; raises the error set by `set_exception`. (Nothing here runs in another
        thread, so waiting for a future nobody completed could never end: it raises.)"""
        if self._error is not None:
            raise self._error
        if self._value is _PENDING:
            raise RuntimeError("Future.wait: this future was never completed (minigrad runs "
                               "work eagerly: set_result or set_exception completes it)")
        return self._value

    def value(self):
        """The result of a completed future (as `wait`, without waiting)."""
        return self.wait()

    def set_result(self, result) -> None:
        """Complete the future with `result` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result) -> None:
        """Complete the future with the error `result`, which `wait` then raises."""
        if not isinstance(result, BaseException):
            raise TypeError(f"Future.set_exception: expected an exception, got "
                            f"{type(result).__name__}")
        self._complete(_PENDING, result)

    def then(self, callback) -> Future:
        """A new future completed with `callback(self)` once this one completes (if
        `callback` raises, with a RuntimeError naming its error, as PyTorch's)."""
        out = Future()

        def chained(fut):
            try:
                out.set_result(callback(fut))
            except Exception as e:
                error = RuntimeError(f"Got the following error when running the callback: "
                                     f"{type(e).__name__}: {e}")
                error.__cause__ = e
                out.set_exception(error)
        self.add_done_callback(chained)
        return out

    def add_done_callback(self, callback) -> None:
        """Run `callback(self)` when the future completes (now, if it has)."""
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def _complete(self, value, error):
        if self.done():
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note "
                               "that a Future can only be marked completed once.")
        self._value, self._error = value, error
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)


def collect_all(futures) -> Future:
    """A future of the list of `futures`, complete once all of them are."""
    futures = list(futures)
    out = Future()
    remaining = [len(futures)]

    def one_done(_):
        remaining[0] -= 1
        if remaining[0] == 0:
            out.set_result(futures)
    if not futures:
        out.set_result([])
    for fut in futures:
        fut.add_done_callback(one_done)
    return out


def wait_all(futures) -> list:
    """The results of `futures`, in order (raising the first error among them)."""
    return [fut.wait() for fut in futures]
