"""What runs inside a DataLoader worker process, and `get_worker_info`.

A worker receives `(task_id, index)` pairs on its own queue, fetches and collates that batch
and puts `(task_id, batch)` on the queue shared by all workers; the main process puts the
batches back in task order. Before its first task a worker seeds its random streams from the
loader's base seed as PyTorch does: Python's `random` and minigrad's default generator get
`base_seed + worker_id`, NumPy's global generator a state derived from both. A worker stops on
`None`; `RESET` starts a new pass over an iterable dataset (persistent workers).
"""
import dataclasses
import os
import queue
import random
import sys
import traceback

import numpy as np

__all__ = ["WorkerInfo", "get_worker_info"]

RESET = "reset"

_worker_info = None


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What a worker knows about itself: its id (0..num_workers-1), the number of workers, its
    seed, and its own copy of the dataset."""

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """This worker's `WorkerInfo` inside a DataLoader worker process; None in the main process."""
    return _worker_info


class Exhausted:
    """A worker's answer once its copy of an iterable dataset has no more samples."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class WorkerError:
    """An exception raised in a worker, carried to the main process (tracebacks don't pickle)."""

    def __init__(self, worker_id, exc):
        self.exc_type = type(exc)
        self.message = (f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n"
                        f"Original {''.join(traceback.format_exception(exc))}")

    def reraise(self):
        try:
            error = self.exc_type(self.message)
        except Exception:  # an exception class that needs other arguments
            error = RuntimeError(self.message)
        raise error


def _seed(base_seed, worker_id):
    """Seed this process's random streams for worker `worker_id` (as in the module doc)."""
    from minigrad.random import manual_seed
    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed % 2**63)
    np.random.seed(np.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    return seed


def worker_loop(dataset, fetcher_class, index_queue, result_queue, auto_collation, collate_fn,
                drop_last, base_seed, init_fn, worker_id, num_workers):
    """The body of worker process `worker_id` (see the module doc)."""
    global _worker_info
    from ....multiprocessing.reductions import init_reductions
    init_reductions()  # its batches go to the main process by reference to shared memory
    try:
        _worker_info = WorkerInfo(worker_id, num_workers, _seed(base_seed, worker_id), dataset)
        failure = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = fetcher_class(dataset, auto_collation, collate_fn, drop_last)
        except Exception as e:  # reported with the first task, where the main process waits
            failure = WorkerError(worker_id, e)
        ended = False
        parent = os.getppid()
        while True:
            try:
                task = index_queue.get(timeout=5.0)
            except queue.Empty:
                if os.getppid() != parent:  # the main process died without telling us
                    break
                continue
            if task is None:
                break
            if task == RESET:
                if failure is None:
                    fetcher = fetcher_class(dataset, auto_collation, collate_fn, drop_last)
                ended = False
                continue
            task_id, index = task
            if ended:  # iterable dataset already exhausted: the main process has been told
                continue
            if failure is not None:
                result_queue.put((task_id, failure))
                continue
            try:
                result = fetcher.fetch(index)
            except StopIteration:
                result, ended = Exhausted(worker_id), True
            except Exception as e:
                result = WorkerError(worker_id, e)
            result_queue.put((task_id, result))
    except KeyboardInterrupt:
        pass
    finally:
        result_queue.cancel_join_thread()
        result_queue.close()
        sys.stdout.flush()


def get_result(result_queue, timeout, workers):
    """The next `(task_id, result)` from the workers; a clear error if one died or the wait
    exceeds `timeout` seconds (0: no limit)."""
    waited = 0.0
    while True:
        step = 1.0 if not timeout else min(1.0, timeout - waited)
        try:
            return result_queue.get(timeout=step)
        except queue.Empty:
            waited += step
        dead = [w for w in workers if not w.is_alive()]
        if dead:
            pids = ", ".join(f"pid {w.pid} (exit code {w.exitcode})" for w in dead)
            raise RuntimeError(f"DataLoader worker {pids} exited unexpectedly")
        if timeout and waited >= timeout:
            raise RuntimeError(f"DataLoader timed out after {timeout} seconds")
