"""A TransformerEncoder classifier (dropout=0.0) over padded token sequences: learned positional
embeddings (trunc_normal_ as in ViT), a [CLS] token, src_key_padding_mask, AdamW with a
LambdaLR linear warm-up then inverse-square-root decay, label smoothing, and eval under
torch.no_grad."""
# same-source tolerance: 1e-3 1e-5
# same-source exact: ^lrs
import math

import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR

torch.manual_seed(11)
PAD, CLS, VOCAB, MAXLEN = 0, 1, 20, 12


def make_batch(n):
    lengths = torch.randint(4, MAXLEN, (n,))
    tokens = torch.full((n, MAXLEN), PAD, dtype=torch.long)
    labels = torch.zeros(n, dtype=torch.long)
    for i in range(n):
        seq = torch.randint(2, VOCAB, (lengths[i].item() - 1,))
        tokens[i, 0] = CLS
        tokens[i, 1:lengths[i]] = seq
        labels[i] = int((seq > 10).sum().item() > (seq <= 10).sum().item())  # majority high?
    return tokens, labels


class Classifier(nn.Module):
    def __init__(self, d_model=32, nhead=4, layers=2):
        super().__init__()
        self.tok = nn.Embedding(VOCAB, d_model, padding_idx=PAD)
        self.pos = nn.Parameter(torch.zeros(1, MAXLEN, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=64, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, 2)
        nn.init.trunc_normal_(self.pos, std=0.02)

    def forward(self, tokens):
        x = self.tok(tokens) * math.sqrt(self.tok.embedding_dim) + self.pos[:, :tokens.size(1)]
        x = self.encoder(x, src_key_padding_mask=tokens == PAD)
        return self.head(self.norm(x[:, 0]))


model = Classifier()
warmup = 10
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3, betas=(0.9, 0.98), weight_decay=0.01)
scheduler = LambdaLR(optimizer, lambda step: min((step + 1) / warmup, (warmup / (step + 1)) ** 0.5))
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
test_tokens, test_labels = make_batch(64)
print("lrs", [min((s + 1) / warmup, (warmup / (s + 1)) ** 0.5) * 2e-3 for s in range(3)])

for step in range(40):
    model.train()
    tokens, labels = make_batch(32)
    loss = criterion(model(tokens), labels)
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    if step % 5 == 0:
        print(f"step {step} loss {loss.item():.6f} lr {scheduler.get_last_lr()[0]:.6e}")

model.eval()
with torch.no_grad():
    logits = model(test_tokens)
print("test accuracy", (logits.argmax(-1) == test_labels).float().mean().item())
print("first logits", [round(v, 4) for v in logits[:3].flatten().tolist()])
total_norm = sum(p.norm().item() for p in model.parameters())
print("state keys", len(model.state_dict()), "norm", round(total_norm, 4))
