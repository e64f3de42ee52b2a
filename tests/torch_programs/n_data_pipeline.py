"""torch.utils.data as a data-loading script uses it: a map-style Dataset subclass with a
transform, TensorDataset, random_split with a seeded generator (counts and fractions),
Subset, ConcatDataset, the samplers (Sequential, Random with a generator and with
replacement, SubsetRandom, WeightedRandom, Batch), a custom collate_fn that pads variable
lengths, default_collate on dicts and tuples, an IterableDataset, and DataLoaders shuffling
with their own generator, dropping the last batch, and a small model trained from one."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(split|subset|concat|seq|rand|subrand|weighted|batch|pad|dict|iter|loader|epoch order)
import torch
import torch.nn as nn
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset,
                              RandomSampler, SequentialSampler, Subset, SubsetRandomSampler,
                              TensorDataset, WeightedRandomSampler, default_collate, random_split)

torch.manual_seed(2024)


class Sequences(Dataset):
    """Variable-length sequences of ids, their sum's parity the label."""

    def __init__(self, n, transform=None):
        g = torch.Generator().manual_seed(7)
        self.lengths = torch.randint(2, 7, (n,), generator=g)
        self.items = [torch.randint(1, 20, (int(k),), generator=g) for k in self.lengths]
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        x = self.items[i]
        if self.transform is not None:
            x = self.transform(x)
        return x, int(x.sum()) % 2


def pad_collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    out = torch.zeros(len(seqs), int(lengths.max()), dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = s
    return out, lengths, torch.tensor(labels)


seqs = Sequences(30, transform=lambda x: x.clamp(max=15))
print("split", len(seqs), seqs[0][0].tolist(), seqs[0][1], seqs.lengths[:8].tolist())
train, val, test = random_split(seqs, [20, 6, 4], generator=torch.Generator().manual_seed(42))
print("split", len(train), len(val), len(test), train.indices[:6], sorted(test.indices))
a, b = random_split(range(10), [0.7, 0.3], generator=torch.Generator().manual_seed(1))
print("split", list(a), list(b))
sub = Subset(seqs, [3, 1, 4, 1, 5])
print("subset", len(sub), [sub[i][1] for i in range(len(sub))], sub[2][0].tolist())

X = torch.randn(12, 3)
y = torch.arange(12) % 3
tds = TensorDataset(X, y)
both = ConcatDataset([tds, TensorDataset(X[:4] + 10, y[:4])])
print("concat", len(both), both.cumulative_sizes, both[13][1].item(), both[13][0].tolist())

print("seq", list(SequentialSampler(range(5))))
print("rand", list(RandomSampler(range(8), generator=torch.Generator().manual_seed(3))))
print("rand", list(RandomSampler(range(5), replacement=True, num_samples=7,
                                 generator=torch.Generator().manual_seed(3))))
print("subrand", list(SubsetRandomSampler([10, 20, 30, 40], generator=torch.Generator().manual_seed(5))))
weights = torch.tensor([0.1, 0.1, 5.0, 0.1, 2.0])
print("weighted", list(WeightedRandomSampler(weights, 10, generator=torch.Generator().manual_seed(0))))
print("weighted", list(WeightedRandomSampler(weights.tolist(), 4, replacement=False,
                                             generator=torch.Generator().manual_seed(0))))
print("batch", list(BatchSampler(SequentialSampler(range(7)), batch_size=3, drop_last=False)),
      list(BatchSampler(range(7), 3, True)))

loader = DataLoader(train, batch_size=6, shuffle=True, collate_fn=pad_collate,
                    generator=torch.Generator().manual_seed(9))
for ids, lengths, labels in loader:
    print("pad", ids.shape, lengths.tolist(), labels.tolist(), ids[0].tolist())
print("loader", len(loader), len(DataLoader(train, batch_size=6, drop_last=True)))

batch = default_collate([{"x": torch.ones(2) * i, "id": i, "name": f"s{i}", "pair": (i, 2.5 * i)}
                         for i in range(3)])
print("dict", sorted(batch), batch["x"].tolist(), batch["id"].tolist(), batch["id"].dtype == torch.long,
      batch["name"], [p.tolist() for p in batch["pair"]], batch["pair"][1].dtype == torch.float64)


class Counting(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        for i in range(self.n):
            yield torch.tensor([i, i * i]), i % 2


print("iter", [(xb.tolist(), yb.tolist()) for xb, yb in DataLoader(Counting(7), batch_size=3)])

# training from a shuffled loader: the order comes from the loader's own generator
model = nn.Linear(3, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
g = torch.Generator().manual_seed(123)
train_loader = DataLoader(tds, batch_size=4, shuffle=True, generator=g, drop_last=True)
for epoch in range(3):
    order = []
    for xb, yb in train_loader:
        loss = nn.functional.cross_entropy(model(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
        order.append(yb.tolist())
    print("epoch order", epoch, order)
    print(f"epoch loss {epoch} {loss.item():.6f}")
