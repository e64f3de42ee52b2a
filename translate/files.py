"""Files a run can trust: atomic writes, one writer per directory, no leftovers.

* `atomic_write` writes to a temporary file beside the target (`.NAME.XXXXXXXX.tmp`), flushes
  it to disk and renames it over the target: a reader sees the old file or the new one, never
  half of one, whatever happens mid-write.
* `DirectoryLock` makes one process the only writer of a directory. It is an advisory lock
  (`flock`) on the directory's `.lock` file, which also holds the owner's pid so that a second
  process can say who is in the way. The kernel drops the lock when its process dies, however
  it dies, so a lock left by a killed run is never in the way (the file stays; it is harmless).
* `remove_stale_temps` deletes the temporary files of writes that were killed (SIGKILL, power
  loss) before they could clean up; only the lock holder may, since a live writer's temporary
  file looks the same.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import threading
import time
from pathlib import Path

from minigrad.serialization import atomic_write as _atomic_write

try:
    import fcntl
except ImportError:  # Windows: lock one byte far beyond the pid instead
    fcntl = None
    import msvcrt

LOCK_NAME = ".lock"


def atomic_write(path, write, binary=False) -> None:
    """Call `write(f)` on a temporary file, then rename it to `path`: all or nothing (the
    library's own `minigrad.serialization.atomic_write`; text files are UTF-8 with \\n)."""
    if binary:
        return _atomic_write(path, write, op="write")

    def write_text(f):
        text = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
        write(text)
        text.flush()
        text.detach()  # hand the binary file back open: the caller syncs and closes it

    _atomic_write(path, write_text, op="write")


def atomic_write_text(path, text: str) -> None:
    """Write UTF-8 `text` to `path` atomically."""
    atomic_write(path, lambda f: f.write(text))


def remove_stale_temps(directory, names) -> list[str]:
    """Delete the temporary files that `atomic_write` (or minigrad.save) left for `names` in
    `directory` when a write was killed; returns what was removed. Call it holding the lock."""
    pattern = re.compile(r"\.(%s)\.[A-Za-z0-9_]+\.tmp" % "|".join(re.escape(n) for n in names))
    removed = []
    for entry in os.scandir(directory):
        if pattern.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
            try:
                os.unlink(entry.path)
                removed.append(entry.name)
            except FileNotFoundError:
                pass
    return removed


class DirectoryBusy(RuntimeError):
    """Another process holds the directory's lock."""


_held: dict[str, list] = {}  # realpath -> [file, depth]: one process may re-enter its own lock
_held_guard = threading.Lock()


class DirectoryLock:
    """`with DirectoryLock(d):` makes this process the only writer of `d` (created if needed);
    DirectoryBusy names the pid of the process that holds it. Re-entrant within a process."""

    def __init__(self, directory, holder="a training run", timeout=1.0):
        self.directory = Path(directory)
        self.what, self.timeout = holder, timeout  # a reader tidying up holds it for a moment

    def __enter__(self):
        self.directory.mkdir(parents=True, exist_ok=True)
        self.key = os.path.realpath(self.directory)
        with _held_guard:
            if self.key in _held:
                _held[self.key][1] += 1
                return self
            f = open(self.directory / LOCK_NAME, "a+b")
            try:
                _lock(f.fileno(), self.timeout)
            except OSError:
                f.seek(0)
                pid = f.read(32).decode("ascii", "replace").strip() or "unknown"
                f.close()
                raise DirectoryBusy(f"{self.directory} is in use by {self.what} (pid {pid}); "
                                    f"wait for it to finish or stop it, or choose another "
                                    f"directory") from None
            f.truncate(0)
            f.write(f"{os.getpid()}\n".encode())
            f.flush()
            _held[self.key] = [f, 1]
        return self

    def __exit__(self, *exc):
        with _held_guard:
            entry = _held[self.key]
            entry[1] -= 1
            if entry[1] == 0:
                del _held[self.key]
                entry[0].close()  # closing the file releases the lock
        return False


@contextlib.contextmanager
def try_lock(directory):
    """Hold the directory's lock for the `with` block if no other process holds it: the block
    gets True, or False when another process holds it or the directory is read-only (for
    readers, which tidy up only when no writer is at work). The lock is released at the end
    of the block either way, so a reader never keeps a writer out."""
    try:
        lock = DirectoryLock(directory, timeout=0).__enter__()
    except (DirectoryBusy, OSError):
        yield False
        return
    try:
        yield True
    finally:
        lock.__exit__(None, None, None)


def _lock(fd, timeout):
    """Take the lock, trying again for `timeout` seconds; OSError if it stays taken."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # a byte far past the pid, so that a blocked process can still read the pid
                os.lseek(fd, 1 << 30, os.SEEK_SET)
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            return
        except OSError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.05)
