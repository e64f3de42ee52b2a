"""A second process that compiles one kernel into Numba's on-disk cache while this one compiles
another: the two cores of a small machine share a cold start's compiling.

Numba compiles one function at a time in a process (a global lock), and most of a compile holds
the interpreter. A kernel's first use on an empty cache is then a few seconds of one core, while
the other idles. So .driver, whose first call needs two large functions, starts a worker for one
of them (`start`), compiles the other here, and then loads the worker's from the cache
(`finish`), where its own compile would have looked first anyway: the machine code is the same,
and so are the numbers. A warm cache starts no worker.

On Linux the worker is a copy of this process (`os.fork`): it has NumPy, Numba and the
kernels imported already, and Numba's one-time set-up done (its typing and lowering registries,
a quarter of a CPU second, done here before the copy is made), so its CPU time is its compile
alone. Elsewhere it is a new `python` that imports the kernels first (about 0.7 CPU s more),
and that is how it runs where fork is unsafe (macOS's system libraries) or missing (Windows).
A copy made while another thread compiles could wait forever for Numba's lock, so the copy is
made holding it; the copy runs nothing but the compile, with its output discarded, and exits
without running this process's exit handlers or flushing its buffers.

A worker costs CPU time of its own: it pays only when a core would otherwise idle. So none is
started on one core, or when the cores are all busy already (the load average of the last
minute at least their number). Its part is then compiled here, as it also is when the function
is cached already (`cached`), when Numba's cache is off for it, or when the worker fails or
cannot start (no `python` to run, another `minigrad` first on its path).
MINIGRAD_COMPILE_WORKER=0 never starts one, =1 always does (whatever the load).
"""
import os
import select
import signal
import subprocess
import sys
import warnings

from numba.core.caching import FunctionCache
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

# The program of a worker that is a new process: with the garbage collector off (see
# policy.collector_paused; a short process, compiling), import the
# module (with its package `bare` an empty package whose __init__ is not run, if given), check
# it is this process's file, call the function.
_PROGRAM = """import gc, importlib, os, sys, types
gc.disable()
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
FORK = sys.platform.startswith("linux") and hasattr(os, "fork")   # (a test turns it off)


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
    `module` whose __init__ a new process skips (`module` must then import nothing from it
    outside its own subpackage). Its output is discarded."""
    if not enabled():
        return None
    if FORK:
        try:
            return _Fork(getattr(sys.modules[module], function), args)
        except OSError:   # (no memory or process left for a copy)
            return None
    bare_path = os.pathsep.join(sys.modules[bare].__path__) if bare else ""
    try:
        return subprocess.Popen(
            [sys.executable, "-c", _PROGRAM, module, sys.modules[module].__file__, function, bare,
             bare_path, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=dict(os.environ, MINIGRAD_COMPILE_WORKER="0"))
    except OSError:
        return None


class _Fork:
    """fn(*args) in a copy of this process (`pid`, and Popen's wait, kill and returncode)."""

    def __init__(self, fn, args):
        cpu_target.typing_context.refresh()   # Numba's set-up, for both processes
        cpu_target.target_context.refresh()
        self._done, child_end = os.pipe()    # (the child's end closes when the child ends)
        parent = os.getpid()
        try:
            with global_compiler_lock, warnings.catch_warnings():
                # (Python 3.12 warns of a fork in a process with threads: OpenBLAS has some;
                # the copy has only this one, and uses no lock the others may hold)
                warnings.simplefilter("ignore", DeprecationWarning)
                self.pid = os.fork()
            if self.pid == 0:
                _run_child(fn, args)
        except OSError:
            os.close(self._done)
            os.close(child_end)
            raise
        finally:
            if os.getpid() != parent:   # the copy, however it got here: nothing else runs
                os._exit(1)
        os.close(child_end)
        self.returncode = None

    def wait(self, timeout=None):
        if self.returncode is None:
            if timeout is not None and not select.select([self._done], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"compile worker {self.pid}", timeout)
            status = os.waitpid(self.pid, 0)[1]
            os.close(self._done)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self):
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)


def _run_child(fn, args):
    """The copy's whole life: fn(*args), its output discarded, then its end (exit status 0 if
    fn returned)."""
    code = 1
    # sys.stdout may be no file of this process's (a notebook's socket, a test's capture) and
    # hold this process's unwritten output: set aside (`streams` keeps them until os._exit:
    # freeing one flushes it), never written, and the copy's own output goes nowhere
    streams = sys.stdin, sys.stdout, sys.stderr
    try:
        quiet = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(quiet, fd)
        sys.stdin, sys.stdout, sys.stderr = (open(quiet, mode, closefd=False)
                                             for mode in ("r", "w", "w"))
        fn(*args)
        code = 0
    finally:
        os._exit(code)


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
