"""`import minigrad` leaves glibc's allocator alone; `minigrad.tune_malloc()` opts in.

Each check runs in a fresh interpreter, since the setting holds for a whole process. It is
observed, not assumed: glibc counts the bytes it holds in mmapped blocks (mallinfo2's hblkhd),
and a block below the mmap threshold comes from the heap instead. With glibc's defaults a
16 MiB array is mmapped; after tune_malloc() (threshold 32 MiB) a 24 MiB one is not.
"""
import ctypes
import os
import subprocess
import sys

import pytest

PROBE = """
import ctypes, json, sys
import numpy as np
import minigrad

class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks "
                "keepcost".split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2

def mmapped(nbytes):
    before = libc.mallinfo2().hblkhd
    a = np.empty(nbytes, np.uint8)
    grew = libc.mallinfo2().hblkhd - before
    del a
    return grew >= nbytes

out = dict(after_import=mmapped(16 << 20), flag_after_import=minigrad._malloc.tuned)
out["applied"] = minigrad.tune_malloc()
out.update(after_tune=mmapped(24 << 20), flag_after_tune=minigrad._malloc.tuned)
print(json.dumps(out))
"""


def _has_mallinfo2():
    try:
        return hasattr(ctypes.CDLL("libc.so.6"), "mallinfo2")
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or not _has_mallinfo2(),
                                reason="needs glibc >= 2.33 (mallinfo2)")


def _probe(**env):
    import json
    env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_import_leaves_malloc_alone_and_tune_malloc_opts_in():
    r = _probe(MINIGRAD_NO_MALLOC_TUNING=None)
    assert r["after_import"] and not r["flag_after_import"]   # glibc's default threshold
    assert r["applied"] and r["flag_after_tune"]
    assert not r["after_tune"]                                # now served from the heap


def test_tune_malloc_respects_the_opt_out_variable():
    r = _probe(MINIGRAD_NO_MALLOC_TUNING="1")
    assert not r["applied"] and not r["flag_after_tune"]
    assert r["after_tune"]


def test_tune_malloc_is_exported_and_documented():
    import minigrad
    assert minigrad.tune_malloc is minigrad._malloc.tune_malloc
    assert "MINIGRAD_NO_MALLOC_TUNING" in minigrad.tune_malloc.__doc__
