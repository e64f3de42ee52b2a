"""Sequence reversal with a GRU encoder-decoder: Python's `random` decides teacher forcing at
each step (seeded once at the top), greedy argmax decoding, NLLLoss over log_softmax,
clip_grad_value_, and the decoded tokens compared."""
# same-source tolerance: 5e-4 1e-5
import random

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

random.seed(0)
torch.manual_seed(0)
SOS, VOCAB, LENGTH, HIDDEN = 0, 8, 5, 32


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.gru = nn.GRU(HIDDEN, HIDDEN, batch_first=True)

    def forward(self, src):
        _, hidden = self.gru(self.embedding(src))
        return hidden


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, HIDDEN)
        self.cell = nn.GRUCell(HIDDEN, HIDDEN)
        self.out = nn.Linear(HIDDEN, VOCAB)

    def forward(self, token, hidden):
        hidden = self.cell(F.relu(self.embedding(token)), hidden)
        return F.log_softmax(self.out(hidden), dim=1), hidden


encoder, decoder = Encoder(), Decoder()
params = list(encoder.parameters()) + list(decoder.parameters())
optimizer = optim.Adam(params, lr=0.01)
criterion = nn.NLLLoss()


def run(src, tgt, teacher_forcing_ratio):
    hidden = encoder(src)[0]
    token = torch.full((src.size(0),), SOS, dtype=torch.long)
    loss, outputs = 0.0, []
    for t in range(tgt.size(1)):
        logp, hidden = decoder(token, hidden)
        loss = loss + criterion(logp, tgt[:, t])
        top = logp.argmax(dim=1)
        outputs.append(top)
        token = tgt[:, t] if random.random() < teacher_forcing_ratio else top.detach()
    return loss / tgt.size(1), torch.stack(outputs, dim=1)


for step in range(60):
    src = torch.randint(1, VOCAB, (16, LENGTH))
    tgt = src.flip(1)
    optimizer.zero_grad()
    loss, _ = run(src, tgt, teacher_forcing_ratio=0.5)
    loss.backward()
    nn.utils.clip_grad_value_(params, 1.0)
    optimizer.step()
    if step % 10 == 0:
        print(f"step {step} loss {loss.item():.6f}")

with torch.no_grad():
    src = torch.randint(1, VOCAB, (6, LENGTH))
    loss, decoded = run(src, src.flip(1), teacher_forcing_ratio=0.0)
print("eval loss", f"{loss.item():.6f}")
for s, d in zip(src.tolist(), decoded.tolist()):
    print("src", s, "decoded", d)
print("next random", random.random())
