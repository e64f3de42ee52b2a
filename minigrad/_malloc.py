"""An opt-in allocator setting for training loops: keep freed array memory for reuse.

A training step allocates and frees thousands of arrays, many of megabytes. glibc serves
blocks above its mmap threshold (128 KiB at first) with fresh pages from the kernel, and every
fresh page costs a page fault on first touch: for a 10 MB logits array that is 2,500 faults,
a few milliseconds, on every step. Raising the mmap and trim thresholds makes those blocks
come from (and go back to) the heap, where the next step finds them already mapped
(docs/performance.md gives the measured effect).

The price is that the process keeps up to 1 GiB of freed memory instead of returning it to the
OS, and the setting holds for everything in the process, not only minigrad. So a library must
not impose it: `import minigrad` leaves the allocator alone, and a program that runs a long
training loop opts in by calling `minigrad.tune_malloc()` once, before its big arrays exist.
The translator's trainer and the benchmarks do. Setting MINIGRAD_NO_MALLOC_TUNING=1 turns the
call into a no-op, for a user who wants the allocator untouched even there.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3

tuned = False  # whether tune_malloc() has changed the settings in this process


def tune_malloc() -> bool:
    """Raise glibc's mmap/trim thresholds for this process; returns whether they were applied.

    A no-op (returning False) on other C libraries and platforms, and when the environment
    variable MINIGRAD_NO_MALLOC_TUNING is "1".
    """
    global tuned
    if os.environ.get("MINIGRAD_NO_MALLOC_TUNING") == "1" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (musl, ...): nothing to tune
        return False
    ok = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024)  # glibc's largest allowed value
    ok &= mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024)
    ok &= mallopt(M_TOP_PAD, 64 * 1024 * 1024)
    tuned = tuned or bool(ok)
    return bool(ok)
