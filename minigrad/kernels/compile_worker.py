"""A second process that compiles one kernel into Numba's on-disk cache while this one compiles
another: the two cores of a small machine share a cold start's compiling.

Numba compiles one function at a time in a process (a global lock), and most of a compile holds
the interpreter. A kernel's first use on an empty cache is then a few seconds of one core, while
the other idles. So .driver, whose first call needs two large functions, starts a worker for one
of them (`start`), compiles the other here, and then loads the worker's from the cache
(`finish`), where its own compile would have looked first anyway: the machine code is the same,
and so are the numbers. A warm cache starts no worker.

A worker costs CPU time of its own (an interpreter, Numba's set-up): it pays only when a core
would otherwise idle. So none is started on one core, or when the cores are all busy already
(the load average of the last minute at least their number). Its part is then compiled here,
as it also is when the function is cached already (`cached`), when Numba's cache is off for it,
or when the worker fails or cannot start (no `python` to run, another `minigrad` first on its
path). MINIGRAD_COMPILE_WORKER=0 never starts one, =1 always does (whatever the load).
"""
import os
import subprocess
import sys

from numba.core.caching import FunctionCache

# The worker's program: with the garbage collector off, import the module (with its package
# `bare` an empty package whose __init__ is not run, if given), check it is this process's
# file, call the function.
_PROGRAM = """import gc, importlib, os, sys, types
gc.disable()   # (see policy.collector_paused: a short process, compiling)
module, path, function, bare, bare_path = sys.argv[1:6]
if bare:
    sys.modules[bare] = package = types.ModuleType(bare)
    package.__path__ = bare_path.split(os.pathsep)
module = importlib.import_module(module)
if module.__file__ != path:
    sys.exit(3)
getattr(module, function)(*sys.argv[6:])
"""
TIMEOUT = 300   # seconds; a worker still running then is stopped and its part compiled here


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:   # (not on every system)
        return os.cpu_count() or 1


def enabled():
    """Whether to start a worker now: MINIGRAD_COMPILE_WORKER (0 never, 1 always), else when a
    core is free for it. Never where the interpreter is not a `python` program (a frozen
    application, or one embedding Python, might not run `-c` as Python does)."""
    name = os.path.basename(sys.executable or "").lower()
    if not name.startswith("python") or getattr(sys, "frozen", False):
        return False
    setting = os.environ.get("MINIGRAD_COMPILE_WORKER", "")
    if setting in ("0", "1"):
        return setting == "1"
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):   # no load average here: count the cores alone
        load = 0.0
    cores = _cores()
    return cores > 1 and load < cores


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


def start(module, function, *args, bare=""):
    """A process running `module.function(*args)` (strings) from `module`'s file as imported
    here, or None if no worker is to start (`enabled`) or it cannot. `bare`: a package above
    `module` whose __init__ the worker skips (`module` must then import nothing from it outside
    its own subpackage). Its output is discarded."""
    if not enabled():
        return None
    bare_path = os.pathsep.join(sys.modules[bare].__path__) if bare else ""
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _PROGRAM, module, sys.modules[module].__file__, function, bare,
             bare_path, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=dict(os.environ, MINIGRAD_COMPILE_WORKER="0"))
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
        stop(worker)
        return False


def stop(worker):
    """Stop `worker` (None: nothing to stop) and wait for its end."""
    if worker is not None:
        worker.kill()
        worker.wait()
