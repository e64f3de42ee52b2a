"""Text classifiers on generated token sequences: a 1-D convolutional classifier (Embedding,
Conv1d over channels, max over time) and an EmbeddingBag(mode="mean") with offsets, trained
with AdamW and a StepLR schedule; accuracy and per-class counts printed. No dropout: minigrad
draws dropout masks from its own generator (a listed difference)."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|lr|bag lengths)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
V, C, N, T = 30, 3, 150, 10
labels = torch.randint(0, C, (N,))
# each class prefers its own band of tokens; a quarter of the tokens are noise
tokens = labels.unsqueeze(1) * 10 + torch.randint(0, 10, (N, T))
noise = torch.rand(N, T) < 0.25
tokens = torch.where(noise, torch.randint(0, V, (N, T)), tokens)
print("data", tokens[0].tolist(), labels[:10].tolist())


class ConvText(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(V, 16)
        self.conv = nn.Conv1d(16, 24, kernel_size=3, padding=1)
        self.fc = nn.Linear(24, C)

    def forward(self, x):
        h = self.embed(x).transpose(1, 2)            # (B, 16, T)
        h = F.relu(self.conv(h))                     # (B, 24, T)
        h = F.max_pool1d(h, h.size(2)).squeeze(2)    # (B, 24)
        return self.fc(h)


class BagText(nn.Module):
    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(V, 16, mode="mean")
        self.fc = nn.Linear(16, C)

    def forward(self, flat, offsets):
        return self.fc(self.bag(flat, offsets))


def as_bag(rows):
    # variable-length documents: drop each row's trailing tokens down to its own length
    lengths = [4 + (i * 5) % (T - 3) for i in range(len(rows))]
    flat = torch.cat([r[:n] for r, n in zip(rows, lengths)])
    offsets = torch.tensor([0] + lengths[:-1]).cumsum(dim=0)
    return flat, offsets, lengths


for model in [ConvText(), BagText()]:
    name = type(model).__name__
    opt = torch.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)
    for epoch in range(8):
        model.train()
        perm = torch.randperm(N)
        for i in range(0, N, 50):
            idx = perm[i:i + 50]
            if name == "ConvText":
                logits = model(tokens[idx])
            else:
                flat, offsets, lengths = as_bag(tokens[idx])
                logits = model(flat, offsets)
            loss = F.cross_entropy(logits, labels[idx], label_smoothing=0.05)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        if epoch % 2 == 1:
            print(name, epoch, f"{loss.item():.6f}")
            print("lr", sched.get_last_lr())
    model.eval()
    with torch.no_grad():
        if name == "ConvText":
            logits = model(tokens)
        else:
            flat, offsets, lengths = as_bag(tokens)
            print("bag lengths", lengths[:6], offsets[:6].tolist())
            logits = model(flat, offsets)
        pred = logits.argmax(1)
        print(name, "accuracy", (pred == labels).float().mean().item())
        print(name, "per class", torch.bincount(pred, minlength=C).tolist(),
              F.softmax(logits[:2], dim=1))

bag = nn.EmbeddingBag(5, 3, mode="sum")
print("sum bag", bag(torch.tensor([[0, 1], [2, 2]])).shape,
      bag(torch.tensor([1, 2, 4]), torch.tensor([0, 1]), per_sample_weights=torch.tensor([0.5, 1.0, 2.0])).shape)
