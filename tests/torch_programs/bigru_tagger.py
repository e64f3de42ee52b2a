"""A bidirectional GRU tagger (tag each token by whether it is larger than its neighbours):
random_split with its own seeded Generator, pad_packed_sequence back to a padded batch, a
masked loss (ignore_index), SequentialLR of LinearLR warm-up then ExponentialLR, and the
loss, the model and a parameter printed as tensors."""
# same-source tolerance: 2e-4 1e-6
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.optim.lr_scheduler import ExponentialLR, LinearLR, SequentialLR
from torch.utils.data import DataLoader, random_split

torch.manual_seed(31)
VOCAB, IGNORE = 10, -100
examples = []
for _ in range(120):
    seq = torch.randint(1, VOCAB, (torch.randint(4, 9, ()).item(),))
    padded = torch.cat([torch.tensor([0]), seq, torch.tensor([0])])
    tags = ((seq > padded[:-2]) & (seq > padded[2:])).long()
    examples.append((seq, tags))
train, test = random_split(examples, [0.75, 0.25], generator=torch.Generator().manual_seed(42))
print("split sizes", len(train), len(test))


def collate(batch):
    batch = sorted(batch, key=lambda e: len(e[0]), reverse=True)
    seqs, tags = zip(*batch)
    return (pad_sequence(seqs, batch_first=True), torch.tensor([len(s) for s in seqs]),
            pad_sequence(tags, batch_first=True, padding_value=IGNORE))


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 12, padding_idx=0)
        self.gru = nn.GRU(12, 16, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=tokens.size(1))
        return self.out(out)


model = Tagger()
print(model)
optimizer = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
warm = LinearLR(optimizer, start_factor=0.1, total_iters=5)
decay = ExponentialLR(optimizer, gamma=0.95)
scheduler = SequentialLR(optimizer, [warm, decay], milestones=[5])
criterion = nn.CrossEntropyLoss(ignore_index=IGNORE)
loader = DataLoader(train, batch_size=10, shuffle=True, collate_fn=collate)
for epoch in range(5):
    for tokens, lengths, tags in loader:
        logits = model(tokens, lengths)
        loss = criterion(logits.reshape(-1, 2), tags.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    print(f"epoch {epoch}", loss, f"lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
correct = total = 0
with torch.no_grad():
    for tokens, lengths, tags in DataLoader(test, batch_size=30, collate_fn=collate):
        pred = model(tokens, lengths).argmax(-1)
        keep = tags != IGNORE
        correct += (pred[keep] == tags[keep]).sum().item()
        total += keep.sum().item()
print("tag accuracy", correct, "/", total)
print(model.out.bias)
