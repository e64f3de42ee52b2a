"""Sequence classification with an LSTM over padded sequences of different lengths: an
embedding with padding_idx, pack_padded_sequence, gradient clipping, Adam, and the embedding's
padding row checked to stay zero."""
# same-source tolerance: 2e-4 1e-5
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence
from torch.utils.data import DataLoader

torch.manual_seed(1)
PAD, VOCAB = 0, 12

# Label: does token 7 appear before token 9 in the sequence?
data = []
for _ in range(160):
    length = torch.randint(3, 11, (1,)).item()
    seq = torch.randint(1, VOCAB, (length,))
    pos7 = (seq == 7).nonzero()
    pos9 = (seq == 9).nonzero()
    label = int(len(pos7) > 0 and (len(pos9) == 0 or pos7[0].item() < pos9[0].item()))
    data.append((seq, label))


def collate(batch):
    seqs, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(list(seqs), batch_first=True, padding_value=PAD)
    return padded, lengths, torch.tensor(labels)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, 16, padding_idx=PAD)
        self.lstm = nn.LSTM(16, 24, num_layers=2, batch_first=True)
        self.head = nn.Linear(24, 2)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                      enforce_sorted=False)
        _, (h, _) = self.lstm(packed)
        return self.head(h[-1])


model = Classifier()
loader = DataLoader(data, batch_size=16, shuffle=True, collate_fn=collate)
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)
loss_fn = nn.CrossEntropyLoss()
for epoch in range(4):
    total = 0.0
    norms = []
    for tokens, lengths, labels in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(tokens, lengths), labels)
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(loader):.6f} grad norms",
          " ".join(f"{n:.5f}" for n in norms[:4]))

model.eval()
with torch.no_grad():
    tokens, lengths, labels = collate(data[:40])
    pred = model(tokens, lengths).argmax(-1)
print("accuracy on 40:", (pred == labels).sum().item())
print("padding row", model.embed.weight[PAD].abs().sum().item())
print("lstm weight norms", [round(p.norm().item(), 5) for p in model.lstm.parameters()])
