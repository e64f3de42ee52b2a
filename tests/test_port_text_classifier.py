"""Port test: a text classifier as tutorials write one: a map-style `Dataset` of variable-length
token lists, a `DataLoader` with a custom `collate_fn` that pads and builds the padding mask,
`nn.Embedding(padding_idx=0)`, a `TransformerEncoder` fed `src_key_padding_mask`, masked mean
pooling, `CrossEntropyLoss(label_smoothing=...)`, `AdamW` with two parameter groups built from
`named_parameters()` (no weight decay on biases and norms), a linear warmup through `LambdaLR`,
accuracy by `argmax`/`eq`/`float().mean()`, evaluation under `torch.no_grad()` with
`model.eval()`, and early stopping that keeps `copy.deepcopy(model.state_dict())` of the best
epoch and loads it back. Run by PyTorch and by minigrad (passed in as `torch`) from the same
weights: every loss, accuracy and the restored weights must agree."""
import copy

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy

PAD = 0
VOCAB = 30


def classifier_program(torch, docs, labels, order, init=None, epochs=8, batch_size=16,
                       lr=1e-2, patience=2):
    nn = torch.nn
    data = torch.utils.data
    torch.manual_seed(0)

    class Reviews(data.Dataset):
        def __init__(self, docs, labels):
            self.docs, self.labels = docs, labels

        def __len__(self):
            return len(self.docs)

        def __getitem__(self, idx):
            return torch.tensor(self.docs[idx], dtype=torch.long), self.labels[idx]

    def collate_batch(batch):
        texts, targets = zip(*batch)
        lengths = torch.tensor([len(t) for t in texts])
        padded = nn.utils.rnn.pad_sequence(list(texts), batch_first=True, padding_value=PAD)
        mask = padded == PAD  # True where there is no token (what the encoder must ignore)
        return padded, mask, lengths, torch.tensor(targets, dtype=torch.long)

    class TransformerClassifier(nn.Module):
        def __init__(self, vocab_size, d_model=16, nhead=2, num_layers=2, num_classes=3,
                     max_len=64):
            super().__init__()
            self.embedding = nn.Embedding(vocab_size, d_model, padding_idx=PAD)
            self.pos = nn.Parameter(torch.zeros(1, max_len, d_model))
            layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=32, dropout=0.0,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(d_model)
            self.fc = nn.Linear(d_model, num_classes)

        def forward(self, x, pad_mask):  # x: (B, T) token ids; pad_mask: (B, T) bool
            h = self.embedding(x) * (self.embedding.embedding_dim ** 0.5)
            h = h + self.pos[:, :x.size(1)]
            h = self.encoder(h, src_key_padding_mask=pad_mask)
            keep = (~pad_mask).unsqueeze(-1).float()
            pooled = (h * keep).sum(dim=1) / keep.sum(dim=1).clamp(min=1.0)
            return self.fc(self.norm(pooled))

    n_train = int(0.75 * len(docs))
    train_set = Reviews(docs[:n_train], labels[:n_train])
    valid_set = Reviews(docs[n_train:], labels[n_train:])
    valid_loader = data.DataLoader(valid_set, batch_size=32, shuffle=False,
                                   collate_fn=collate_batch)

    model = TransformerClassifier(VOCAB)
    with torch.no_grad():
        nn.init.normal_(model.pos, std=0.02)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    printed = str(model)  # print(model)

    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim < 2 or "norm" in name or name.endswith(".bias"):
            no_decay.append(param)
        else:
            decay.append(param)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                                   {"params": no_decay, "weight_decay": 0.0}],
                                  lr=lr, betas=(0.9, 0.98))
    warmup = 6
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / warmup))
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)

    def evaluate():
        model.eval()
        total_loss, correct, count = 0.0, 0.0, 0
        with torch.no_grad():
            for x, mask, lengths, y in valid_loader:
                logits = model(x, mask)
                total_loss += criterion(logits, y).item() * y.size(0)
                correct += logits.argmax(dim=1).eq(y).float().sum().item()
                count += y.size(0)
        return total_loss / count, correct / count

    losses, lrs, accs, val_losses, val_accs = [], [], [], [], []
    best_loss, best_state, best_epoch, bad_epochs = float("inf"), None, -1, 0
    for epoch in range(epochs):
        model.train()
        # the batch order comes from outside (the two libraries' shuffles differ)
        loader = data.DataLoader(data.Subset(train_set, order[epoch].tolist()),
                                 batch_size=batch_size, collate_fn=collate_batch)
        for x, mask, lengths, y in loader:
            optimizer.zero_grad()
            logits = model(x, mask)
            loss = criterion(logits, y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            lrs.append([g["lr"] for g in optimizer.param_groups])
            accs.append((logits.argmax(dim=1) == y).float().mean().item())
        val_loss, val_acc = evaluate()
        val_losses.append(val_loss)
        val_accs.append(val_acc)
        if val_loss < best_loss:
            best_loss, best_epoch, bad_epochs = val_loss, epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad_epochs += 1
            if bad_epochs >= patience:
                break
    last = state_numpy(model)
    model.load_state_dict(best_state)
    restored_loss, restored_acc = evaluate()
    return {"init": start, "losses": losses, "lrs": lrs, "accs": accs, "val_losses": val_losses,
            "val_accs": val_accs, "best_epoch": best_epoch, "best": state_numpy(model),
            "last": last, "restored": (restored_loss, restored_acc),
            "groups": [len(decay), len(no_decay)], "printed": printed}


def reviews(n=64, seed=0):
    """Token lists of 4-14 ids; the class is which of three marker-word sets is most frequent."""
    rng = np.random.default_rng(seed)
    markers = [range(1, 4), range(4, 7), range(7, 10)]
    docs, labels = [], []
    for _ in range(n):
        label = int(rng.integers(3))
        length = int(rng.integers(4, 15))
        words = rng.integers(10, VOCAB, length)
        hits = rng.random(length) < 0.4
        words[hits] = rng.choice(list(markers[label]), hits.sum())
        docs.append(words.tolist())
        labels.append(label)
    return docs, labels


def test_text_classifier_trains_the_same_in_both(torch):
    docs, labels = reviews()
    rng = np.random.default_rng(1)
    order = [rng.permutation(48) for _ in range(8)]
    expected, got = run_both(classifier_program, torch, docs, labels, order)
    assert got["groups"] == expected["groups"]
    assert got["printed"] == expected["printed"]
    assert_curves_match("classifier", expected["losses"], got["losses"], rtol=1e-4, every=3)
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-7)
    assert got["accs"] == expected["accs"]  # accuracy counts agree exactly
    np.testing.assert_allclose(got["val_losses"], expected["val_losses"], rtol=1e-4)
    assert got["val_accs"] == expected["val_accs"]
    assert got["best_epoch"] == expected["best_epoch"]
    # it learns (chance is 1/3), then stops early: two epochs without a better validation loss
    assert max(expected["val_accs"]) > 0.7
    assert len(expected["val_losses"]) == expected["best_epoch"] + 3 < 8
    assert_states_match(expected["best"], got["best"], rtol=1e-3, atol=1e-5)
    np.testing.assert_allclose(got["restored"], expected["restored"], rtol=1e-4)
    # the best epoch's weights came back, not the last one's
    assert got["restored"][0] == min(got["val_losses"]) < got["val_losses"][-1]
    assert not np.array_equal(got["last"]["fc.weight"], got["best"]["fc.weight"])
