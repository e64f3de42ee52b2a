"""Port test: the data side of training scripts, as PyTorch users write it: a map-style
dataset returning dicts (tensors, ints, floats, NumPy arrays, strings, named tuples, bools,
nested lists) batched by the default collate; an `IterableDataset` streaming samples (with
`get_worker_info()` and `drop_last`); `ConcatDataset` and its `cumulative_sizes`; a
`BatchSampler` over a `SequentialSampler` given as `batch_sampler=`; `batch_size=None`;
`default_collate` called directly; `Subset`; and the loader's `len`. Run by PyTorch and by
minigrad (passed in as `torch`): every batch must have the same structure, types, dtypes,
shapes and values."""
import collections

import numpy as np

import minigrad

Pair = collections.namedtuple("Pair", "x y")


def describe(obj):
    """A comparable picture of a batch: tensors by (dtype, shape, values), containers by type."""
    if hasattr(obj, "detach"):
        return ("tensor", str(obj.dtype).replace("torch.", ""), tuple(obj.shape), obj.tolist())
    if isinstance(obj, dict):
        return {k: describe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return (type(obj).__name__, [describe(v) for v in obj])
    return (type(obj).__name__, obj)


def pipeline_program(torch):
    data = torch.utils.data
    out = []

    class Examples(data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return {"input_ids": torch.tensor([i, i + 1]), "label": i % 2, "weight": 0.5 * i,
                    "feat": np.arange(3, dtype=np.float32) * i, "name": f"s{i}",
                    "pair": Pair(i, float(i)), "flag": bool(i % 2), "np_scalar": np.float64(i),
                    "nested": [i, (i, i)]}

    out.append([describe(b) for b in data.DataLoader(Examples(), batch_size=2)])

    class Stream(data.IterableDataset):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            info = data.get_worker_info()  # None in the main process
            start = 0 if info is None else info.id
            for i in range(start, self.n):
                yield torch.tensor([float(i)]), i

    out.append([describe(b) for b in data.DataLoader(Stream(5), batch_size=2)])
    out.append([describe(b) for b in data.DataLoader(Stream(5), batch_size=2, drop_last=True)])
    joined = data.ConcatDataset([data.TensorDataset(torch.arange(3)),
                                 data.TensorDataset(torch.arange(10, 12))])
    out.append((len(joined), describe(joined[3]), joined.cumulative_sizes))
    batches = data.BatchSampler(data.SequentialSampler(range(5)), batch_size=3, drop_last=False)
    out.append(list(batches))
    out.append([describe(b) for b in data.DataLoader(joined, batch_sampler=batches)])
    out.append([describe(b) for b in data.DataLoader(joined, batch_size=None)])
    out.append(describe(data.default_collate([np.array([1, 2]), np.array([3, 4])])))
    out.append(describe(data.default_collate([1.5, 2.5])))
    out.append(describe(data.default_collate([(1, "a"), (2, "b")])))
    loader = data.DataLoader(joined, batch_size=2)
    out.append((len(loader), len(loader.dataset), loader.batch_size))
    out.append(describe(data.Subset(joined, [4, 0])[0]))
    return out


def test_batches_are_the_same_in_both(torch):
    expected, got = pipeline_program(torch), pipeline_program(minigrad)
    assert len(got) == len(expected) == 12
    for i, (want, have) in enumerate(zip(expected, got)):
        assert have == want, f"item {i}"
    first = got[0][0]  # a dict batch: ids stacked, ints and floats as tensors, strings listed
    assert first["input_ids"][1:3] == ("int64", (2, 2))
    assert first["weight"][1] == "float64" and first["name"] == ("list", [("str", "s0"),
                                                                          ("str", "s1")])
