"""Fetching one batch (or one sample, without automatic batching) from a dataset: the same
code runs in the main process and in a worker process."""


class MapFetcher:
    """Batches of a map-style dataset: `dataset[i]` for each index (or `__getitems__`)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if not self.auto_collation:
            return self.collate_fn(self.dataset[index])
        getitems = getattr(self.dataset, "__getitems__", None)
        data = getitems(index) if callable(getitems) else [self.dataset[i] for i in index]
        return self.collate_fn(data)


class IterableFetcher:
    """Batches of an iterable dataset: the next `len(index)` samples of one iterator over it;
    StopIteration once it is empty (or, with `drop_last`, once a full batch cannot be made)."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.auto_collation, self.collate_fn, self.drop_last = auto_collation, collate_fn, drop_last
        self.samples = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if not self.auto_collation:
            return self.collate_fn(next(self.samples))
        data = []
        for _ in index:
            try:
                data.append(next(self.samples))
            except StopIteration:
                self.ended = True
                break
        if not data or (self.drop_last and len(data) < len(index)):
            raise StopIteration
        return self.collate_fn(data)
