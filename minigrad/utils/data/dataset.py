"""Datasets as PyTorch has them: a map-style `Dataset` answers `dataset[i]` (and `len`), an
`IterableDataset` is a stream; the rest combine or cut datasets (`TensorDataset`,
`StackDataset`, `ConcatDataset`, `ChainDataset`, `Subset`, `random_split`)."""
import bisect
import itertools
import math
import warnings

from minigrad.creation import randperm
from minigrad.random import default_generator

__all__ = ["ChainDataset", "ConcatDataset", "Dataset", "IterableDataset", "StackDataset",
           "Subset", "TensorDataset", "random_split"]


class Dataset:
    """A map from keys (usually 0..len-1) to samples: subclasses define `__getitem__` and
    usually `__len__`; `__getitems__(indices)` may fetch a whole batch at once."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of samples: subclasses define `__iter__`. With worker processes each worker
    iterates its own copy; `get_worker_info()` tells a copy which share is its own."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is `(t[i] for t in tensors)`; the tensors share their first dimension N."""

    def __init__(self, *tensors):
        if any(t.size(0) != tensors[0].size(0) for t in tensors):
            sizes = [t.size(0) for t in tensors]
            raise AssertionError(f"Size mismatch between tensors: first dimensions {sizes}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Datasets of one length side by side: sample i is a tuple (positional datasets) or a
    dict (keyword datasets) of their samples i."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: pass datasets either positionally (tuples) or by "
                             "keyword (dicts), not both")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args or kwargs
        lengths = [len(d) for d in (args or kwargs.values())]
        if len(set(lengths)) > 1:
            raise ValueError(f"Size mismatch between datasets: lengths {lengths}")
        self._length = lengths[0]

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Datasets one after the other; `cumulative_sizes[k]` is where dataset k ends."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx += len(self)
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        if k == len(self.datasets):
            raise IndexError(f"ConcatDataset: index {idx} out of range for length {len(self)}")
        return self.datasets[k][idx - (self.cumulative_sizes[k - 1] if k else 0)]


class ChainDataset(IterableDataset):
    """Iterable datasets one after the other, chained lazily."""

    def __init__(self, datasets):
        self.datasets = datasets

    def _checked(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield d

    def __iter__(self):
        for d in self._checked():
            yield from d

    def __len__(self):
        return sum(len(d) for d in self._checked())


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        wanted = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(wanted)
        return [self.dataset[i] for i in wanted]

    def __len__(self):
        return len(self.indices)


def _lengths_from_fractions(fractions, n):
    """floor(f * n) for each fraction, the remainder handed out one by one from the front."""
    for i, f in enumerate(fractions):
        if f < 0 or f > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
    lengths = [math.floor(n * f) for f in fractions]
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. "
                          f"This might result in an empty dataset.", stacklevel=3)
    return lengths


def random_split(dataset, lengths, generator=default_generator):
    """Split `dataset` into non-overlapping `Subset`s of the given lengths (counts, or
    fractions summing to 1) after one random permutation drawn from `generator`."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _lengths_from_fractions(lengths, len(dataset))
    if sum(lengths) != len(dataset):
        raise ValueError(f"Sum of input lengths does not equal the length of the input dataset! "
                         f"(lengths {list(lengths)} sum to {sum(lengths)}, the dataset has "
                         f"{len(dataset)})")
    indices = randperm(sum(lengths), generator=generator).tolist()
    ends = itertools.accumulate(lengths)
    return [Subset(dataset, indices[end - length:end]) for end, length in zip(ends, lengths)]
