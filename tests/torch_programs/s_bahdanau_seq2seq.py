"""A GRU encoder-decoder with Bahdanau (additive) attention that learns to reverse digit
sequences of varied length: the attention written with torch.bmm, softmax, masked_fill and
unsqueeze/squeeze, teacher forcing, gradient clipping, greedy decoding, attention weights."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
PAD, BOS, EOS, V = 0, 1, 2, 13
N, Tmax = 96, 6
lengths = torch.randint(3, Tmax + 1, (N,))
src = torch.full((N, Tmax), PAD, dtype=torch.long)
tgt = torch.full((N, Tmax + 2), PAD, dtype=torch.long)
for n in range(N):
    L = lengths[n].item()
    digits = torch.randint(3, V, (L,))
    src[n, :L] = digits
    tgt[n, 0] = BOS
    tgt[n, 1:L + 1] = digits.flip(0)
    tgt[n, L + 1] = EOS
print("data", src[0].tolist(), tgt[0].tolist(), lengths[:8].tolist())


class Attention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.W_q = nn.Linear(hidden, hidden, bias=False)
        self.W_k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, 1, bias=False)

    def forward(self, query, keys, mask):
        # query (B, H), keys (B, T, H), mask (B, T) True at padding
        scores = self.v(torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))).squeeze(2)
        scores = scores.masked_fill(mask, float("-inf"))
        weights = F.softmax(scores, dim=-1)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
        return context, weights


class Seq2Seq(nn.Module):
    def __init__(self, vocab, emb=16, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb, padding_idx=PAD)
        self.encoder = nn.GRU(emb, hidden, batch_first=True)
        self.attention = Attention(hidden)
        self.decoder = nn.GRUCell(emb + hidden, hidden)
        self.out = nn.Linear(2 * hidden, vocab)

    def encode(self, src):
        keys, h = self.encoder(self.embed(src))
        return keys, h.squeeze(0), src == PAD

    def step(self, token, h, keys, mask):
        context, weights = self.attention(h, keys, mask)
        h = self.decoder(torch.cat([self.embed(token), context], dim=-1), h)
        return self.out(torch.cat([h, context], dim=-1)), h, weights

    def forward(self, src, tgt_in):
        keys, h, mask = self.encode(src)
        logits = []
        for t in range(tgt_in.size(1)):
            step_logits, h, _ = self.step(tgt_in[:, t], h, keys, mask)
            logits.append(step_logits)
        return torch.stack(logits, dim=1)


model = Seq2Seq(V)
print("parameters", sum(p.numel() for p in model.parameters()))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
criterion = nn.CrossEntropyLoss(ignore_index=PAD)
for epoch in range(12):
    total = 0.0
    for i in range(0, N, 32):
        s, t = src[i:i + 32], tgt[i:i + 32]
        logits = model(s, t[:, :-1])
        loss = criterion(logits.reshape(-1, V), t[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        total += loss.item()
    if epoch % 3 == 2:
        print(f"epoch {epoch} loss {total / 3:.5f} last grad norm {norm.item():.5f}")

model.eval()
with torch.no_grad():
    keys, h, mask = model.encode(src[:4])
    token = torch.full((4,), BOS, dtype=torch.long)
    decoded, attn = [], []
    for t in range(Tmax + 1):
        logits, h, weights = model.step(token, h, keys, mask)
        token = logits.argmax(dim=-1)
        decoded.append(token)
        attn.append(weights)
    decoded = torch.stack(decoded, dim=1)
    attn = torch.stack(attn, dim=1)
print("decoded", decoded.tolist())
print("attention row sums", attn.sum(-1)[0].round(decimals=4).tolist())
print("attention of example 0\n", attn[0, :3].round(decimals=3))
print("masked weights are zero", bool((attn[1][:, lengths[1]:] == 0).all()))
