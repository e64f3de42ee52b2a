"""`DistributedSampler`: the share of a dataset's indices that one of `num_replicas`
processes reads, as PyTorch's. minigrad has no process group, so `num_replicas` and `rank`
must be given (PyTorch reads them from its initialised process group)."""
import math

from minigrad.creation import randperm
from minigrad.random import Generator

from .sampler import Sampler

__all__ = ["DistributedSampler"]


class DistributedSampler(Sampler):
    """Indices rank, rank + num_replicas, ... of one (shuffled with `seed + epoch`, see
    `set_epoch`) order, padded by repeating its start to a multiple of `num_replicas`, or
    cut to one with `drop_last`."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            raise RuntimeError("DistributedSampler: minigrad has no process group to read "
                               "them from, so pass num_replicas and rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.shuffle, self.seed, self.drop_last, self.epoch = shuffle, seed, drop_last, 0
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = randperm(n, generator=Generator().manual_seed(self.seed + self.epoch))
            indices = indices.tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / max(len(indices), 1)))[:padding]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Make the next pass's shuffle that of `epoch` (call it at each epoch's start)."""
        self.epoch = epoch
