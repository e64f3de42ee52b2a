"""`spawn` and `start_processes`: run `fn(i, *args)` in nprocs new processes, as PyTorch's
`torch.multiprocessing.spawn`, and raise in the parent what a child raised (its traceback in
the message) or how it died.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import signal
import sys
import traceback


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception; the message carries its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        sys.exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues
        self.sentinels = {p.sentinel: i for i, p in enumerate(processes)}

    def pids(self):
        return [int(p.pid) for p in self.processes]

    def join(self, timeout=None):
        """Wait for the processes (up to timeout seconds); True once all have ended. The
        first failure ends the others and is raised here."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(list(self.sentinels), timeout=timeout)
        failed = None
        for sentinel in ready:
            i = self.sentinels.pop(sentinel)
            self.processes[i].join()
            if self.processes[i].exitcode != 0:
                failed = i
                break
        if failed is None:
            return not self.sentinels
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        process, queue = self.processes[failed], self.error_queues[failed]
        code = process.exitcode
        if queue.empty():
            if code < 0:
                name = signal.Signals(-code).name
                raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                             failed, process.pid, code, name)
            raise ProcessExitedException(f"process {failed} terminated with exit code {code}",
                                         failed, process.pid, code)
        message = f"\n\n-- Process {failed} terminated with the following error:\n{queue.get()}"
        raise ProcessRaisedException(message, failed, process.pid)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start nprocs processes running fn(i, *args), i = 0..nprocs-1 (by start_method); wait
    for them if join, else return their ProcessContext."""
    from .reductions import init_reductions
    init_reductions()
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        queue = ctx.SimpleQueue()
        process = ctx.Process(target=_wrap, args=(fn, i, args, queue), daemon=daemon)
        process.start()
        processes.append(process)
        queues.append(queue)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """`start_processes` with PyTorch's default, the spawn start method."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
