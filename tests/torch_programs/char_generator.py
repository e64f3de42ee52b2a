"""A character-level LSTM language model with weight tying (the output layer shares the
embedding matrix), trained on generated text in truncated-BPTT chunks with the hidden state
detached between them, then sampled with torch.multinomial at a temperature."""
# same-source tolerance: 5e-4 1e-5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)

words = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "to", "big", "red", "hat"]
picks = torch.randint(0, len(words), (400,))
text = " ".join(words[i] for i in picks.tolist()) + "."
chars = sorted(set(text))
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for c, i in stoi.items()}
data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
print("vocab", len(chars), "length", len(data))


class CharLM(nn.Module):
    def __init__(self, vocab, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.LSTM(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embed.weight  # weight tying

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.decoder(out), state


model = CharLM(len(chars))
print("parameters", sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
batch, seq_len = 8, 20
stream = data[: (len(data) // batch) * batch].view(batch, -1)
for epoch in range(2):
    state = None
    for i in range(0, stream.size(1) - seq_len - 1, seq_len):
        x = stream[:, i:i + seq_len]
        y = stream[:, i + 1:i + seq_len + 1]
        if state is not None:
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = F.cross_entropy(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
    print(f"epoch {epoch} last loss {loss.item():.6f}")

print("tied", model.decoder.weight is model.embed.weight)
model.eval()
with torch.no_grad():
    token = torch.tensor([[stoi["t"]]])
    state, generated = None, []
    for _ in range(40):
        logits, state = model(token, state)
        probs = F.softmax(logits[0, -1] / 0.8, dim=-1)
        token = torch.multinomial(probs, num_samples=1).view(1, 1)
        generated.append(token.item())
print("sampled ids", generated)
print("sampled text", repr("".join(itos[i] for i in generated)))
