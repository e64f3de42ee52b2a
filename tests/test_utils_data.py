"""minigrad.utils.data against torch.utils.data: the same batches (values, dtypes, structure)
for the same datasets and indices, the samplers' deterministic index sequences, collation of
every kind, the errors, seeded shuffles, and real worker processes."""
import collections
import importlib
import tracemalloc

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils import data as mgdata

Point = collections.namedtuple("Point", "x y")


def plain(lib, batch):
    """A batch as comparable plain data: tensors as (dtype, array), containers kept."""
    if isinstance(batch, lib.Tensor):
        return ("tensor", str(batch.dtype).replace("torch.", ""), batch.numpy().tolist())
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):
        return (type(batch).__name__, [plain(lib, b) for b in batch])
    if isinstance(batch, (list, tuple)):
        return (type(batch).__name__, [plain(lib, b) for b in batch])
    if isinstance(batch, dict):
        return ("dict", {k: plain(lib, v) for k, v in batch.items()})
    return batch


def both(torch, program):
    """program(lib, data) run with torch and with minigrad, as comparable plain data."""
    results = []
    for lib in (torch, mg):
        data = importlib.import_module(f"{lib.__name__}.utils.data")
        results.append(plain(lib, program(lib, data)))
    return results


class Samples:
    """A map-style dataset of samples of every collatable kind (made by `make(lib, i)`)."""

    def __init__(self, lib, n, make):
        self.lib, self.n, self.make = lib, n, make

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.make(self.lib, i)


KINDS = {
    "tensor": lambda lib, i: lib.arange(6, dtype=lib.float32).reshape(2, 3) * i,
    "int tensor": lambda lib, i: lib.tensor([i, -i]),
    "array": lambda lib, i: np.full((2,), i, dtype=np.int32),
    "0-d array": lambda lib, i: np.array(i + 0.5),
    "numpy float32": lambda lib, i: np.float32(i / 3),
    "numpy float64": lambda lib, i: np.float64(i / 3),
    "numpy int16": lambda lib, i: np.int16(i),
    "numpy bool": lambda lib, i: np.bool_(i % 2),
    "float": lambda lib, i: i / 7,
    "int": lambda lib, i: i * 3,
    "bool": lambda lib, i: i % 2 == 0,
    "str": lambda lib, i: f"s{i}",
    "bytes": lambda lib, i: b"b%d" % i,
    "tuple": lambda lib, i: (lib.tensor([float(i)]), i, f"w{i}"),
    "list": lambda lib, i: [i, [i / 2, np.int64(i)]],
    "dict": lambda lib, i: {"x": lib.ones(2) * i, "label": i, "name": {"n": f"n{i}"}},
    "namedtuple": lambda lib, i: Point(lib.tensor(i), {"k": [i, i + 1]}),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_default_collation_matches_pytorch(kind, torch):
    def program(lib, data):
        loader = data.DataLoader(Samples(lib, 7, KINDS[kind]), batch_size=3,
                                 sampler=[5, 0, 3, 6, 2, 1, 4])
        return list(loader)
    expected, got = both(torch, program)
    assert got == expected


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_default_convert_matches_pytorch(kind, torch):
    def program(lib, data):
        return [data.default_convert(KINDS[kind](lib, 2)), list(data.DataLoader(
            Samples(lib, 3, KINDS[kind]), batch_size=None))]
    expected, got = both(torch, program)
    assert got == expected


def test_collate_errors_match_pytorch(torch):
    cases = [[object(), object()], [np.array(["a"]), np.array(["b"])], [[1, 2], [1]]]
    for batch in cases:
        with pytest.raises(Exception) as theirs:
            torch.utils.data.default_collate(batch)
        with pytest.raises(type(theirs.value), match=str(theirs.value)[:40]):
            mgdata.default_collate(batch)
    with pytest.raises(RuntimeError, match=r"equal size.*\(2,\), \(3,\)"):
        mgdata.default_collate([mg.zeros(2), mg.zeros(3)])


def test_custom_collate_map_and_old_import_paths():
    from minigrad.utils.data._utils.collate import collate, default_collate_fn_map
    from minigrad.utils.data.dataloader import default_collate
    assert default_collate is mgdata.default_collate
    doubled = {**default_collate_fn_map,
               int: lambda batch, *, collate_fn_map: [2 * b for b in batch]}
    out = collate([(1, mg.ones(1)), (2, mg.ones(1))], collate_fn_map=doubled)
    assert out[0] == [2, 4] and out[1].shape == (2, 1)


def _tensor_data(lib):
    x = lib.tensor(np.arange(30, dtype=np.float32).reshape(10, 3))
    y = lib.tensor(np.arange(10) % 3)
    return x, y


@pytest.mark.parametrize("kwargs", [
    dict(batch_size=4), dict(batch_size=4, drop_last=True), dict(batch_size=1),
    dict(batch_size=None), dict(batch_size=3, sampler=[9, 1, 4, 4, 0]),
    dict(batch_sampler=[[3, 1], [0, 2, 9], [5]]),
    dict(batch_size=2, collate_fn=lambda b: [s[1] for s in b]),
])
def test_loader_batches_and_len_match_pytorch(kwargs, torch):
    def program(lib, data):
        dataset = data.TensorDataset(*_tensor_data(lib))
        loader = data.DataLoader(dataset, **kwargs)
        return [len(loader), list(loader)]
    expected, got = both(torch, program)
    assert got == expected


def test_datasets_match_pytorch(torch):
    def program(lib, data):
        x, y = _tensor_data(lib)
        first, second = data.TensorDataset(x[:4], y[:4]), data.TensorDataset(x[4:], y[4:])
        concat = first + second
        stack = data.StackDataset(a=first, b=data.Subset(second, [5, 4, 3, 2]))
        subset = data.Subset(concat, [9, 0, 5])
        return [len(concat), concat.cumulative_sizes, concat[7], concat[-1], len(subset),
                list(subset), subset[2], stack[1], list(data.DataLoader(stack, batch_size=3)),
                list(data.DataLoader(subset, batch_size=2)),
                list(data.DataLoader(data.StackDataset(first, first), batch_size=3))]
    expected, got = both(torch, program)
    assert got == expected


class Counter:
    """An iterable dataset over range(start, stop), split between workers as PyTorch's docs
    show, built on either library's classes."""

    @staticmethod
    def make(data, start, stop):
        class Range(data.IterableDataset):
            def __iter__(self):
                info = data.get_worker_info()
                lo, hi = start, stop
                if info is not None:
                    per = -(-(hi - lo) // info.num_workers)
                    lo = lo + info.id * per
                    hi = min(lo + per, stop)
                return iter(range(lo, hi))

            def __len__(self):
                return stop - start
        return Range()


def test_iterable_datasets_match_pytorch(torch):
    def program(lib, data):
        numbers = Counter.make(data, 3, 12)
        chained = numbers + Counter.make(data, 20, 22)
        return [list(data.DataLoader(numbers, batch_size=4)),
                list(data.DataLoader(numbers, batch_size=4, drop_last=True)),
                list(data.DataLoader(numbers, batch_size=None)), len(chained),
                len(data.DataLoader(numbers, batch_size=4)), list(data.DataLoader(chained))]
    expected, got = both(torch, program)
    assert got == expected


def test_deterministic_samplers_match_pytorch(torch):
    def program(lib, data):
        seq = data.SequentialSampler(range(7))
        return [list(seq), len(seq), list(data.BatchSampler(seq, 3, False)),
                list(data.BatchSampler(seq, 3, True)), len(data.BatchSampler(seq, 3, True)),
                len(data.BatchSampler(range(7), 3, False)),
                len(data.RandomSampler(range(5), replacement=True, num_samples=12)),
                len(data.WeightedRandomSampler([0.1, 0.9], 6)),
                list(data.WeightedRandomSampler([0.0, 1.0, 0.0], 4)),
                sorted(data.WeightedRandomSampler([1.0, 2.0, 3.0, 0.0], 3, replacement=False)),
                list(data.DistributedSampler(range(10), 3, 1, shuffle=False)),
                list(data.DistributedSampler(range(10), 3, 2, shuffle=False, drop_last=True))]
    expected, got = both(torch, program)
    assert got == expected


def _orders(make):
    return [list(make()) for _ in range(2)]


def test_random_samplers_are_permutations_and_reproducible():
    g = lambda: mg.Generator().manual_seed(7)  # noqa: E731
    perm = list(mgdata.RandomSampler(range(10), generator=g()))
    assert sorted(perm) == list(range(10)) and perm != list(range(10))
    assert perm == list(mgdata.RandomSampler(range(10), generator=g()))
    more = list(mgdata.RandomSampler(range(4), num_samples=10, generator=g()))
    assert sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3] and len(more) == 10
    drawn = list(mgdata.RandomSampler(range(3), replacement=True, num_samples=70, generator=g()))
    assert len(drawn) == 70 and set(drawn) == {0, 1, 2}
    subset = list(mgdata.SubsetRandomSampler([10, 20, 30, 40], generator=g()))
    assert sorted(subset) == [10, 20, 30, 40]
    weighted = list(mgdata.WeightedRandomSampler([1.0, 0.0, 3.0], 400, generator=g()))
    assert 1 not in weighted and 0.6 < weighted.count(2) / 400 < 0.9
    mg.manual_seed(3)  # without a generator the default one seeds the shuffle
    first = list(mgdata.RandomSampler(range(50)))
    mg.manual_seed(3)
    assert list(mgdata.RandomSampler(range(50))) == first


def test_random_sampler_draws_lazily():
    tracemalloc.start()
    sampler = mgdata.RandomSampler(range(1000), replacement=True, num_samples=10**10)
    it = iter(sampler)
    head = [next(it) for _ in range(100)]
    both_ways = iter(mgdata.RandomSampler(range(1000), num_samples=10**10))
    [next(both_ways) for _ in range(100)]
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(sampler) == 10**10 and all(0 <= i < 1000 for i in head)
    assert peak < 1_000_000, f"{peak} bytes allocated for 200 indices"


def test_seeded_shuffle_is_reproducible_and_covers_the_data():
    x, y = _tensor_data(mg)
    dataset = mgdata.TensorDataset(x, y)

    def epochs(seed):
        loader = mgdata.DataLoader(dataset, batch_size=4, shuffle=True,
                                   generator=mg.Generator().manual_seed(seed))
        return [[b[0].numpy().tolist() for b in loader] for _ in range(2)]
    run = epochs(0)
    assert run == epochs(0) and run != epochs(1)
    assert run[0] != run[1]  # each pass draws a new order
    rows = sorted(r for batch in run[0] for r in batch)
    assert rows == x.numpy().tolist()


def test_random_split_matches_pytorch_lengths(torch):
    def program(lib, data):
        g = lib.Generator().manual_seed(0)
        parts = [data.random_split(range(10), lengths, generator=g)
                 for lengths in ([3, 7], [0.3, 0.3, 0.4], [0.5, 0.5], [1 / 3] * 3)]
        return [[len(p) for p in split] for split in parts]
    expected, got = both(torch, program)
    assert got == expected
    a, b = mgdata.random_split(range(10), [0.6, 0.4], generator=mg.Generator().manual_seed(1))
    assert sorted(list(a) + list(b)) == list(range(10))
    assert list(a) == list(mgdata.random_split(range(10), [6, 4],
                                               generator=mg.Generator().manual_seed(1))[0])


ERRORS = [
    (lambda d, ds: d.DataLoader(ds, batch_sampler=[[0]], batch_size=2), "batch_sampler"),
    (lambda d, ds: d.DataLoader(ds, batch_sampler=[[0]], shuffle=True), "batch_sampler"),
    (lambda d, ds: d.DataLoader(ds, batch_sampler=[[0]], drop_last=True), "batch_sampler"),
    (lambda d, ds: d.DataLoader(ds, sampler=[0, 1], shuffle=True), "sampler option"),
    (lambda d, ds: d.DataLoader(ds, batch_size=None, drop_last=True), "drop_last"),
    (lambda d, ds: d.DataLoader(ds, num_workers=-1), "num_workers"),
    (lambda d, ds: d.DataLoader(ds, timeout=-1), "timeout"),
    (lambda d, ds: d.DataLoader(ds, prefetch_factor=2), "prefetch_factor"),
    (lambda d, ds: d.DataLoader(ds, persistent_workers=True), "persistent_workers"),
    (lambda d, ds: d.DataLoader(ds, multiprocessing_context="fork"), "multiprocessing_context"),
    (lambda d, ds: d.DataLoader(ds, batch_size=0), "batch_size"),
    (lambda d, ds: d.DataLoader(Counter.make(d, 0, 3), shuffle=True), "shuffle"),
    (lambda d, ds: d.DataLoader(Counter.make(d, 0, 3), sampler=[0]), "sampler"),
    (lambda d, ds: d.RandomSampler(ds, num_samples=0), "num_samples"),
    (lambda d, ds: d.RandomSampler(ds, replacement=1), "replacement"),
    (lambda d, ds: d.WeightedRandomSampler([[1.0]], 2), "weights"),
    (lambda d, ds: d.BatchSampler(range(3), 2, drop_last=None), "drop_last"),
    (lambda d, ds: d.random_split(ds, [1, 1]), "lengths"),
    (lambda d, ds: d.random_split(ds, [0.5, -0.5, 1.0]), "Fraction at index 1"),
    (lambda d, ds: d.TensorDataset(ds.tensors[0], ds.tensors[1][:2]), "Size mismatch"),
    (lambda d, ds: setattr(d.DataLoader(ds), "batch_size", 3), "batch_size"),
]


@pytest.mark.parametrize("make, word", ERRORS, ids=[w for _, w in ERRORS])
def test_errors_match_pytorch(make, word, torch):
    with pytest.raises(Exception) as theirs:
        make(torch.utils.data, torch.utils.data.TensorDataset(*_tensor_data(torch)))
    with pytest.raises(type(theirs.value), match=word.replace("(", r"\(")):
        make(mgdata, mgdata.TensorDataset(*_tensor_data(mg)))


def test_pin_memory_warns_as_pytorch_does_without_an_accelerator(torch):
    for lib, data in ((torch, torch.utils.data), (mg, mgdata)):
        with pytest.warns(UserWarning, match="no accelerator is found"):
            list(data.DataLoader(data.TensorDataset(lib.zeros(2)), pin_memory=True))


# --- worker processes ---------------------------------------------------------------------------

class Seeds(mgdata.Dataset):
    """Sample i: (i, the worker's id, a number drawn from minigrad's default generator)."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = mgdata.get_worker_info()
        return i, -1 if info is None else info.id, float(mg.rand(1).item())


class Failing(mgdata.Dataset):
    broken = True

    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 4 and Failing.broken:
            raise KeyError(f"no sample {i}")
        return i


def test_workers_give_the_same_batches_in_order():
    x, y = _tensor_data(mg)
    dataset = mgdata.TensorDataset(x, y)
    order = [7, 2, 9, 0, 5, 1, 8, 3, 6, 4]
    alone = [plain(mg, b) for b in mgdata.DataLoader(dataset, batch_size=3, sampler=order)]
    loader = mgdata.DataLoader(dataset, batch_size=3, sampler=order, num_workers=2,
                               prefetch_factor=1, persistent_workers=True)
    assert [plain(mg, b) for b in loader] == alone
    assert [plain(mg, b) for b in loader] == alone  # the same workers, a second pass
    numbers = Counter.make(mgdata, 0, 9)  # each worker reads its own share of the stream
    batches = list(mgdata.DataLoader(numbers, batch_size=2, num_workers=2))
    assert sorted(int(v) for b in batches for v in b.numpy()) == list(range(9))


def test_workers_are_seeded_per_worker_from_the_generator():
    def run(seed):
        loader = mgdata.DataLoader(Seeds(), batch_size=2, num_workers=2, shuffle=True,
                                   generator=mg.Generator().manual_seed(seed))
        return [tuple(b[k].numpy().tolist() for k in range(3)) for b in loader]
    first = run(5)
    assert first == run(5) and first != run(6)
    workers = {w for _, ids, _ in first for w in ids}
    assert workers == {0, 1}
    draws = [d for _, _, ds in first for d in ds]
    assert len(set(draws)) == len(draws)  # the two workers' streams differ
    single = [b[0].numpy().tolist() for b in mgdata.DataLoader(
        Seeds(), batch_size=2, shuffle=True, generator=mg.Generator().manual_seed(5))]
    assert [i for i, _, _ in first] == single  # same shuffle whatever num_workers is


def test_a_worker_error_reaches_the_main_process_with_its_type():
    with pytest.raises(KeyError, match="in DataLoader worker process 0.*no sample 4"):
        list(mgdata.DataLoader(Failing(), batch_size=2, num_workers=2))


def test_persistent_workers_start_each_pass_afresh():
    dataset = mgdata.TensorDataset(mg.arange(20))
    loader = mgdata.DataLoader(dataset, batch_size=3, num_workers=2, persistent_workers=True)
    for i, _ in enumerate(loader):
        if i == 2:
            break  # batches already in flight belong to the abandoned pass
    assert [b.tolist() for (b,) in loader] == [list(range(i, min(i + 3, 20)))
                                               for i in range(0, 20, 3)]
    stream = Counter.make(mgdata, 0, 5)
    loader = mgdata.DataLoader(stream, batch_size=2, num_workers=2, persistent_workers=True)
    first = [b.tolist() for b in loader]
    assert [b.tolist() for b in loader] == first  # each worker's stream starts over
    with pytest.raises(ZeroDivisionError, match="worker process 0"):
        list(mgdata.DataLoader(dataset, num_workers=1, worker_init_fn=lambda i: 1 / 0))
    loader = mgdata.DataLoader(Failing(), batch_size=2, num_workers=1, persistent_workers=True)
    with pytest.raises(KeyError):
        list(loader)
    Failing.broken = False  # new workers (forked now) see the mended dataset
    try:
        assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4, 5]]
    finally:
        Failing.broken = True


def test_a_collected_loader_ends_its_workers():
    import gc
    loader = mgdata.DataLoader(mgdata.TensorDataset(mg.arange(6)), batch_size=2, num_workers=2,
                               persistent_workers=True)
    list(loader)
    workers = loader._iterator._workers
    loader.itself = loader  # a cycle: only the garbage collector can end it
    del loader
    gc.collect()
    assert all(w.exitcode is not None for w in workers)
