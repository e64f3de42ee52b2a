"""A small TransformerEncoder with dropout 0.1 trained in train mode (every dropout mask is
drawn and must match PyTorch's) to find where a marked token sits; a CLS-free mean pool,
a key padding mask, AdamW, gradient clipping and a cosine schedule; eval under no_grad."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(data|lr)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(13)

vocab, seq, n = 12, 10, 96
tokens = torch.randint(2, vocab, (n, seq))
where = torch.randint(0, seq, (n,))
tokens[torch.arange(n), where] = 1  # token 1 marks the position to find
lengths = torch.randint(6, seq + 1, (n,))
where = torch.minimum(where, lengths - 1)
tokens[torch.arange(n), where] = 1
pad = torch.arange(seq).unsqueeze(0) >= lengths.unsqueeze(1)
tokens = tokens.masked_fill(pad, 0)
print("data", tokens[0].tolist(), where[:10].tolist(), lengths[:10].tolist())


class Finder(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.emb = nn.Embedding(vocab, d, padding_idx=0)
        self.pos = nn.Parameter(torch.randn(1, seq, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d, nhead=4, dim_feedforward=64, dropout=0.1,
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.score = nn.Linear(d, 1)

    def forward(self, x, pad_mask):
        h = self.encoder(self.emb(x) + self.pos, src_key_padding_mask=pad_mask)
        return self.score(h).squeeze(-1).masked_fill(pad_mask, float("-inf"))


model = Finder()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=12)
for step in range(12):
    model.train()
    idx = torch.randperm(n)[:32]
    logits = model(tokens[idx], pad[idx])
    loss = F.cross_entropy(logits, where[idx])
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    if step % 3 == 2:
        print(f"step {step} loss {loss.item():.5f} norm {norm.item():.5f}")
        print(f"lr {sched.get_last_lr()[0]:.8f}")

model.eval()
with torch.no_grad():
    logits = model(tokens, pad)
    print("found", (logits.argmax(1) == where).sum().item(), "of", n)
    print("probs", [round(v, 5) for v in logits[0].softmax(0)[:lengths[0]].tolist()])
print("emb pad row zero", model.emb.weight[0].abs().sum().item() == 0.0)
