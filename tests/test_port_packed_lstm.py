"""Port test: a sequence classifier over variable-length inputs, in ordinary PyTorch style: a
map-style `Dataset` of token-id lists, a `collate_fn` that pads with `pad_sequence` and returns
the lengths, a `BatchSampler` over a given order, an embedding with `padding_idx` feeding a
two-layer bidirectional LSTM through `pack_padded_sequence(enforce_sorted=False)`, mean pooling
over `pad_packed_sequence`'s output plus the final hidden states, gradient accumulation over
micro-batches, `clip_grad_norm_`, a cosine schedule with warm restarts written as a `LambdaLR`,
and evaluation under `torch.no_grad()`. Run by PyTorch and by minigrad (passed in as `torch`)
from the same weights: losses, gradient norms, learning rates and predictions must agree."""
import math

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def packed_lstm_program(torch, sequences, labels, orders, init=None, vocab=12, micro_batch=6,
                        accumulate=2):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    rnn_utils = torch.nn.utils.rnn
    torch.manual_seed(7)

    class TokenDataset(data.Dataset):
        def __init__(self, sequences, labels):
            self.sequences, self.labels = sequences, labels

        def __len__(self):
            return len(self.sequences)

        def __getitem__(self, idx):
            return {"ids": torch.tensor(self.sequences[idx], dtype=torch.long),
                    "label": self.labels[idx]}

    def collate(batch):
        ids = [item["ids"] for item in batch]
        lengths = torch.tensor([len(x) for x in ids])
        padded = rnn_utils.pad_sequence(ids, batch_first=True, padding_value=0)
        return padded, lengths, torch.tensor([item["label"] for item in batch])

    class EpochBatches(data.Sampler):
        """The epoch's order, given from outside, cut into micro-batches."""

        def __init__(self, orders, batch_size):
            self.orders, self.batch_size, self.epoch = orders, batch_size, 0

        def __iter__(self):
            return iter(data.BatchSampler(self.orders[self.epoch].tolist(), self.batch_size,
                                          drop_last=False))

        def __len__(self):
            return math.ceil(len(self.orders[self.epoch]) / self.batch_size)

    class LSTMClassifier(nn.Module):
        def __init__(self, vocab, n_classes, dim=12, hidden=16):
            super().__init__()
            self.embedding = nn.Embedding(vocab, dim, padding_idx=0)
            self.lstm = nn.LSTM(dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
            self.classifier = nn.Sequential(nn.Linear(4 * hidden, hidden), nn.ReLU(),
                                            nn.Linear(hidden, n_classes))

        def forward(self, ids, lengths):
            packed = rnn_utils.pack_padded_sequence(self.embedding(ids), lengths.cpu(),
                                                    batch_first=True, enforce_sorted=False)
            out, (h_n, c_n) = self.lstm(packed)
            out, out_lengths = rnn_utils.pad_packed_sequence(out, batch_first=True)
            mask = (torch.arange(out.size(1))[None, :] < out_lengths[:, None]).unsqueeze(-1)
            mean = (out * mask).sum(1) / out_lengths[:, None].to(out.dtype)
            last = torch.cat([h_n[-2], h_n[-1]], dim=1)  # the top layer, both directions
            return self.classifier(torch.cat([mean, last], dim=1))

    dataset = TokenDataset(sequences, labels)
    sampler = EpochBatches(orders, micro_batch)
    loader = data.DataLoader(dataset, batch_sampler=sampler, collate_fn=collate)
    eval_loader = data.DataLoader(dataset, batch_size=16, shuffle=False, collate_fn=collate)

    model = LSTMClassifier(vocab, int(max(labels)) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    steps_per_epoch = math.ceil(len(loader) / accumulate)
    cycle = 2 * steps_per_epoch

    def cosine_with_restarts(step):
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step % cycle) / cycle))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, cosine_with_restarts)
    criterion = nn.CrossEntropyLoss()

    losses, norms, lrs = [], [], []
    for epoch in range(len(orders)):
        sampler.epoch = epoch
        model.train()
        optimizer.zero_grad()
        for i, (ids, lengths, y) in enumerate(loader):
            loss = criterion(model(ids, lengths), y) / accumulate
            loss.backward()
            losses.append(loss.item() * accumulate)
            if (i + 1) % accumulate == 0 or i + 1 == len(loader):
                norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)))
                optimizer.step()
                scheduler.step()
                lrs.append(scheduler.get_last_lr()[0])
                optimizer.zero_grad()

    model.eval()
    predictions, correct = [], 0
    with torch.no_grad():
        for ids, lengths, y in eval_loader:
            pred = model(ids, lengths).argmax(dim=-1)
            predictions += pred.tolist()
            correct += (pred == y).sum().item()
    return {"init": start, "losses": losses, "norms": norms, "lrs": lrs,
            "predictions": predictions, "accuracy": correct / len(dataset)}


def test_packed_lstm_classifier_trains_the_same_in_both(torch):
    rng = np.random.default_rng(3)
    lengths = rng.integers(2, 10, size=60)
    sequences = [rng.integers(1, 12, size=n).tolist() for n in lengths]
    # the class: whether token 1 appears more often than token 2 (order matters not, length does)
    labels = [int(s.count(1) > s.count(2)) + (len(s) > 6) for s in sequences]
    orders = [rng.permutation(len(sequences)) for _ in range(3)]
    expected, got = run_both(packed_lstm_program, torch, sequences, labels, orders)
    assert_curves_match("packed-lstm", expected["losses"], got["losses"], rtol=1e-4, every=5)
    np.testing.assert_allclose(got["norms"], expected["norms"], rtol=1e-4)
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-12)
    assert got["predictions"] == expected["predictions"]
    assert got["accuracy"] == expected["accuracy"]
    assert expected["losses"][-1] < expected["losses"][0]
