"""A second process that compiles one kernel into Numba's on-disk cache while this one compiles
another: the two cores of a small machine share a cold start's compiling.

Numba compiles one function at a time in a process (a global lock), and most of a compile holds
the interpreter. A kernel's first use on an empty cache is then a few seconds of one core, while
the other idles. So .driver, whose first call needs two large functions, starts a worker for one
of them (`start`), compiles the other here, and then loads the worker's from the cache
(`finish`), where its own compile would have looked first anyway: the machine code is the same,
and so are the numbers. A warm cache starts no worker.

Where the worker cannot help, its part is compiled here as before: when the function is cached
already (`cached`), when Numba's cache is off for it, when the worker fails or cannot start
(no `python` to run, another `minigrad` first on its path), or with MINIGRAD_COMPILE_WORKER=0.
"""
import os
import subprocess
import sys

from numba.core.caching import FunctionCache

# the worker's program: import the module, check it is this process's file, call the function
_PROGRAM = """import importlib, sys
module = importlib.import_module(sys.argv[1])
if module.__file__ != sys.argv[2]:
    sys.exit(3)
getattr(module, sys.argv[3])(*sys.argv[4:])
"""
TIMEOUT = 300   # seconds; a worker still running then is stopped and its part compiled here


def enabled():
    """Whether workers may be started: MINIGRAD_COMPILE_WORKER=0 turns them off, and so does an
    interpreter that is not a `python` program (a frozen application, or one embedding Python,
    might not run `-c` as Python does)."""
    name = os.path.basename(sys.executable or "").lower()
    return (os.environ.get("MINIGRAD_COMPILE_WORKER", "1") != "0" and name.startswith("python")
            and not getattr(sys, "frozen", False))


def cached(dispatcher, sig):
    """Whether Numba's cache holds `dispatcher`'s code for the Signature `sig`, as
    `get_compile_result(sig)` files it (True where it cannot tell, or the dispatcher has no
    cache: then no worker is started)."""
    cache = getattr(dispatcher, "_cache", None)
    if not isinstance(cache, FunctionCache):
        return True
    try:
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:   # Numba's cache internals changed: compile here, as without a worker
        return True


def start(module, function, *args):
    """A process running `module.function(*args)` (strings) from `module`'s file as imported
    here, or None if workers are off or it cannot start. Its output is discarded."""
    if not enabled():
        return None
    mod = sys.modules[module]
    try:
        return subprocess.Popen([sys.executable, "-c", _PROGRAM, module, mod.__file__, function,
                                 *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=dict(os.environ,
                                                                    MINIGRAD_COMPILE_WORKER="0"))
    except OSError:
        return None


def finish(worker):
    """Wait for `worker` (None: nothing to wait for); whether it ended well. One still running
    after TIMEOUT seconds is stopped."""
    if worker is None:
        return False
    try:
        return worker.wait(timeout=TIMEOUT) == 0
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()
        return False
