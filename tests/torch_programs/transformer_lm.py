"""A tiny causal Transformer language model on generated arithmetic-progression text: a causal
mask from nn.Transformer.generate_square_subsequent_mask, weight tying between the embedding
and the output layer, LambdaLR warm-up, top-k sampling with torch.topk and torch.multinomial,
and the model and tensors printed as a PyTorch user prints them."""
# same-source tolerance: 1e-3 1e-5
import math

import torch
from torch import nn
import torch.nn.functional as F

torch.manual_seed(2024)
VOCAB, CONTEXT, D = 16, 16, 32


def sample_sequences(n):
    """Each row counts from a random start by a random step, modulo VOCAB."""
    start = torch.randint(0, VOCAB, (n, 1))
    step = torch.randint(1, 4, (n, 1))
    return (start + step * torch.arange(CONTEXT + 1)) % VOCAB


class TinyLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, D)
        self.pos = nn.Embedding(CONTEXT, D)
        layer = nn.TransformerEncoderLayer(D, 4, 4 * D, dropout=0.0, activation="gelu",
                                           batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, 2)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.embed.weight
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(CONTEXT))

    def forward(self, idx):
        T = idx.shape[1]
        x = self.embed(idx) + self.pos(torch.arange(T))
        x = self.blocks(x, mask=self.mask[:T, :T], is_causal=True)
        return self.lm_head(x)


model = TinyLM()
print(model.mask[:4, :4])
print(sum(p.numel() for p in model.parameters()), "parameters")
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / 8))
for step in range(30):
    batch = sample_sequences(24)
    x, y = batch[:, :-1], batch[:, 1:]
    logits = model(x)
    loss = F.cross_entropy(logits.view(-1, VOCAB), y.reshape(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    scheduler.step()
    if step % 6 == 0 or step == 29:
        print(f"step {step:2d} loss {loss.item():.5f} ppl {math.exp(loss.item()):.4f}")


@torch.no_grad()
def generate(idx, new_tokens, temperature=1.0, top_k=None):
    for _ in range(new_tokens):
        logits = model(idx[:, -CONTEXT:])[:, -1, :] / temperature
        if top_k is not None:
            v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
    return idx


model.eval()
prompt = torch.tensor([[1, 3, 5], [2, 3, 4]])
print(generate(prompt, 10, temperature=0.7, top_k=4))
print(generate(prompt, 10).tolist())
with torch.no_grad():
    print(F.softmax(model(prompt), dim=-1)[0, -1].round(decimals=3))
    print(torch.topk(model(prompt)[:, -1], k=3, dim=-1))
