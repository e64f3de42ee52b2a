"""Samplers: the order in which a DataLoader visits a map-style dataset's indices.

A sampler is any iterable of indices (with `len`, for `len(loader)`); `BatchSampler` groups
one into lists of indices. The random ones draw from a `minigrad.Generator` (or, without one,
from a fresh generator seeded from the default one, so `minigrad.manual_seed` makes them
repeatable), lazily, a permutation or 32 indices at a time, so that `num_samples=10**10`
costs nothing until the indices are used. Their streams are minigrad's, not PyTorch's: the
same seed gives a different order from PyTorch's (see the compatibility page).
"""
import itertools

from minigrad.creation import as_tensor, randint, randperm
from minigrad.dtypes import float64
from minigrad.random import Generator, engine as _engine
from minigrad.random_draws import full_range
from minigrad.sampling import multinomial

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler", "WeightedRandomSampler"]


def _check_positive_int(value, name):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} should be a positive integer value, but got {name}={value}")


def _check_bool(value, name, error=ValueError):
    if not isinstance(value, bool):
        raise error(f"{name} should be a boolean value, but got {name}={value}")


def _fresh_generator():
    """A generator seeded from the default one: what a sampler without `generator=` uses."""
    seed = int(full_range(_engine(None), 1, "int64")[0])  # PyTorch's int64 random_()
    return Generator().manual_seed(seed)


class Sampler:
    """Base class: subclasses define `__iter__` (indices, or lists of indices) and `__len__`."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of 0..n-1 (n = len(data_source)): without replacement, whole
    permutations (the last one cut) until `num_samples` (default n) are out; with replacement,
    `num_samples` independent uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        _check_bool(replacement, "replacement", TypeError)
        _check_positive_int(self.num_samples, "num_samples")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _fresh_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from randint(0, n, (32,), generator=generator).tolist()
            yield from randint(0, n, (self.num_samples % 32,), generator=generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from randperm(n, generator=generator).tolist()
            yield from randperm(n, generator=generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices into `weights` drawn with probability proportional to the weights
    (with or without replacement)."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        _check_positive_int(num_samples, "num_samples")
        _check_bool(replacement, "replacement")
        weights = as_tensor(weights, dtype=float64)
        if weights.dim() != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(weights.shape)}")
        self.weights = weights
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        drawn = multinomial(self.weights, self.num_samples, self.replacement,
                            generator=self.generator)
        yield from drawn.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`; the last, shorter one unless `drop_last`."""

    def __init__(self, sampler, batch_size, drop_last):
        _check_positive_int(batch_size, "batch_size")
        _check_bool(drop_last, "drop_last")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        indices = iter(self.sampler)
        while batch := list(itertools.islice(indices, self.batch_size)):
            if len(batch) < self.batch_size and self.drop_last:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
