"""`DataLoader`: batches from a dataset, in the order a sampler gives, as PyTorch's.

    loader = DataLoader(dataset, batch_size=32, shuffle=True, generator=g)
    for x, y in loader: ...

Each pass asks the batch sampler for lists of indices, fetches those samples and collates
them (`default_collate` unless `collate_fn` is given); `batch_size=None` turns batching off.
An `IterableDataset` is read in order instead, `batch_size` samples at a time.

`num_workers > 0` starts that many real worker processes (Python's `multiprocessing`, or the
`multiprocessing_context` given). Batches are handed out round-robin, at most
`prefetch_factor` per worker ahead, and come back in the sampler's order, so the batches are
exactly those of `num_workers=0`. Each worker is seeded from a base seed drawn from
`generator` at the start of each pass, as PyTorch does (see `_utils/worker.py`); with an
iterable dataset every worker iterates its own copy, so use `get_worker_info()` to split it.
`persistent_workers=True` keeps the workers between passes. Batches travel between processes
in shared memory, as PyTorch's (`minigrad.multiprocessing`'s reductions). `pin_memory` is accepted and, as in PyTorch without an
accelerator, warns that there is no pinned memory to use; `in_order=False` is accepted and
still keeps the order.
"""
import multiprocessing
import warnings

from minigrad.random import engine as _engine
from minigrad.random_draws import full_range

from ._utils import worker as _worker
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import IterableFetcher, MapFetcher
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

get_worker_info = _worker.get_worker_info


class _InfiniteConstantSampler(Sampler):
    """An iterable dataset's "indices": one None per sample, for ever."""

    def __iter__(self):
        while True:
            yield None


def _check_arguments(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                     drop_last, timeout, prefetch_factor, persistent_workers):
    if num_workers < 0:
        raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                         "disable multiprocessing.")
    if timeout < 0:
        raise ValueError("timeout option should be non-negative")
    if num_workers == 0 and prefetch_factor is not None:
        raise ValueError("prefetch_factor option could only be specified in multiprocessing. "
                         "let num_workers > 0 to enable multiprocessing, otherwise set "
                         "prefetch_factor to None.")
    if prefetch_factor is not None and prefetch_factor < 0:
        raise ValueError("prefetch_factor option should be non-negative")
    if persistent_workers and num_workers == 0:
        raise ValueError("persistent_workers option needs num_workers > 0")
    if isinstance(dataset, IterableDataset):
        for name, value in (("shuffle", shuffle), ("sampler", sampler),
                            ("batch_sampler", batch_sampler)):
            if value not in (None, False):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified {name} "
                                 f"option, but got {name}={value}")
    if sampler is not None and shuffle:
        raise ValueError("sampler option is mutually exclusive with shuffle")
    if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                      or drop_last):
        raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, "
                         "sampler, and drop_last")
    if batch_sampler is None and batch_size is None and drop_last:
        raise ValueError("batch_size=None option disables auto-batching and is mutually "
                         "exclusive with drop_last")


class DataLoader:
    """Batches of `dataset` (see the module doc for the arguments and the worker processes)."""

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")
    _initialized = False

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        _check_arguments(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
                         drop_last, timeout, prefetch_factor, persistent_workers)
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = 2 if num_workers > 0 and prefetch_factor is None else prefetch_factor
        self.pin_memory, self.pin_memory_device = pin_memory, pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = self._context(multiprocessing_context)
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:
            batch_size, drop_last = None, False
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._initialized = True

    def _context(self, context):
        if context is None:
            return None
        if self.num_workers == 0:
            raise ValueError(f"multiprocessing_context can only be used with multi-process "
                             f"loading (num_workers > 0), but got num_workers={self.num_workers}")
        if isinstance(context, str):
            methods = multiprocessing.get_all_start_methods()
            if context not in methods:
                raise ValueError(f"multiprocessing_context option should specify a valid start "
                                 f"method in {methods!r}, but got "
                                 f"multiprocessing_context={context!r}")
            return multiprocessing.get_context(context)
        if not isinstance(context, multiprocessing.context.BaseContext):
            raise TypeError(f"multiprocessing_context option should be a valid context object "
                            f"or a string specifying the start method, but got "
                            f"multiprocessing_context={context}")
        return context

    def __setattr__(self, name, value):
        if self._initialized and name in self._FROZEN:
            raise ValueError(f"{name} attribute should not be set after "
                             f"{type(self).__name__} is initialized")
        super().__setattr__(name, value)

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __iter__(self):
        if self.num_workers == 0:
            return _SingleProcessIter(self)
        if not self.persistent_workers:
            return _MultiProcessIter(self)
        if self._iterator is None or self._iterator._shut:  # first pass, or after an error
            self._iterator = _MultiProcessIter(self)
        else:
            self._iterator.reset()
        return self._iterator

    def __len__(self):
        if not self._iterable:
            return len(self._index_sampler)
        length = len(self.dataset)
        if self.batch_size is None:
            return length
        return length // self.batch_size if self.drop_last else -(-length // self.batch_size)


class _BaseIter:
    def __init__(self, loader):
        # the loader's settings, not the loader: a persistent loader keeps its iterator, and a
        # reference back would make a cycle that only the garbage collector ends, at any moment
        self._index_sampler, self._iterable = loader._index_sampler, loader._iterable
        self._timeout, self._persistent = loader.timeout, loader.persistent_workers
        self._prefetch_factor = loader.prefetch_factor
        self._fetcher_class = IterableFetcher if loader._iterable else MapFetcher
        self._sampler_iter = iter(loader._index_sampler)
        # drawn before the sampler's first draw, as PyTorch does, so a seeded generator
        # gives the same shuffles whatever num_workers is
        self._base_seed = int(full_range(_engine(loader.generator), 1, "int64")[0])
        if loader.pin_memory:
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._index_sampler)


class _SingleProcessIter(_BaseIter):
    def __init__(self, loader):
        super().__init__(loader)
        if loader.timeout != 0:
            raise ValueError(f"DataLoader: timeout={loader.timeout} needs worker processes "
                             f"(num_workers > 0)")
        self._fetcher = self._fetcher_class(loader.dataset, loader._auto_collation,
                                            loader.collate_fn, loader.drop_last)

    def __next__(self):
        index = next(self._sampler_iter)
        return self._fetcher.fetch(index)


class _MultiProcessIter(_BaseIter):
    """Worker processes fed round-robin; batches returned in task order (module doc)."""

    def __init__(self, loader):
        super().__init__(loader)
        from ...multiprocessing.reductions import init_reductions
        init_reductions()  # the dataset and the batches cross by reference to shared memory
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._results_queue = context.Queue()
        self._index_queues, self._workers = [], []
        for worker_id in range(loader.num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()
            process = context.Process(
                target=_worker.worker_loop, daemon=True,
                args=(loader.dataset, self._fetcher_class, index_queue, self._results_queue,
                      loader._auto_collation, loader.collate_fn, loader.drop_last,
                      self._base_seed, loader.worker_init_fn, worker_id, loader.num_workers))
            process.start()
            self._index_queues.append(index_queue)
            self._workers.append(process)
        self._shut = False
        self._next_task = 0
        self._start()

    def _start(self):
        """Begin a pass: tasks numbered from here on belong to it."""
        self._first_task = self._received = self._next_task
        self._owner = {}  # task id -> worker, until the batch is handed out
        self._results = {}  # batches that arrived ahead of their turn
        self._active = list(range(len(self._workers)))
        self._turn = 0
        self._sampler_done = False
        self._fill()

    def reset(self):
        """A new pass with the same (persistent) workers."""
        self._sampler_iter = iter(self._index_sampler)
        if self._iterable:
            for q in self._index_queues:
                q.put(_worker.RESET)
        self._start()

    def _fill(self):
        limit = self._prefetch_factor * len(self._active)
        while not self._sampler_done and self._active and len(self._owner) < limit:
            try:
                index = next(self._sampler_iter)
            except StopIteration:
                self._sampler_done = True
                return
            worker = self._active[self._turn % len(self._active)]
            self._turn += 1
            self._index_queues[worker].put((self._next_task, index))
            self._owner[self._next_task] = worker
            self._next_task += 1

    def __next__(self):
        while True:
            self._fill()
            while self._received < self._next_task and self._received not in self._owner:
                self._received += 1  # a task of a worker whose iterable ran out
            if self._received == self._next_task:
                if not self._persistent:
                    self._shutdown()
                raise StopIteration
            if self._received in self._results:
                batch = self._results.pop(self._received)
                del self._owner[self._received]
                self._received += 1
                return batch
            task, result = _worker.get_result(self._results_queue, self._timeout,
                                              self._workers)
            if task < self._first_task:
                continue  # from an abandoned earlier pass
            if isinstance(result, _worker.WorkerError):
                self._shutdown()
                result.reraise()
            if isinstance(result, _worker.Exhausted):
                self._active.remove(result.worker_id)
                self._owner = {t: w for t, w in self._owner.items()
                               if w != result.worker_id or t in self._results}
                continue
            self._results[task] = result

    def _shutdown(self, graceful=True):
        """Stop the workers: ask each to finish (None), or, for an iterator being collected,
        end them at once (its queues may already be finalised and deliver nothing)."""
        if self._shut:
            return
        self._shut = True
        if graceful:
            for q in self._index_queues:
                q.put(None)
        for w in self._workers:
            if not graceful:
                w.terminate()
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()
        for q in self._index_queues + [self._results_queue]:
            q.cancel_join_thread()
            q.close()

    def __del__(self):
        if getattr(self, "_workers", None) and not getattr(self, "_shut", True):
            self._shutdown(graceful=False)
