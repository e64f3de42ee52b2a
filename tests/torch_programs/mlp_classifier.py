"""Spiral classification with an MLP: DataLoader(shuffle=True), Adam, StepLR, weights
initialised through model.apply, accuracy under torch.no_grad in eval mode."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^radii
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(42)

# Three interleaved spirals.
n_per_class, n_classes = 100, 3
points, labels = [], []
for c in range(n_classes):
    r = torch.linspace(0.0, 1.0, n_per_class)
    t = torch.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + torch.randn(n_per_class) * 0.2
    points.append(torch.stack([r * torch.sin(t), r * torch.cos(t)], dim=1))
    labels.append(torch.full((n_per_class,), c, dtype=torch.long))
X = torch.cat(points)
y = torch.cat(labels)
perm = torch.randperm(len(X))
X, y = X[perm], y[perm]
print("radii", r[1::11].tolist(), t[-4:].tolist())
print("data", X[:4].tolist(), X.abs().max().item())
train_ds = TensorDataset(X[:240], y[:240])
test_X, test_y = X[240:], y[240:]


class MLP(nn.Module):
    def __init__(self, hidden=64):
        super().__init__()
        self.fc1 = nn.Linear(2, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.out(x)


def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
        nn.init.zeros_(m.bias)


model = MLP()
model.apply(init_weights)
loader = DataLoader(train_ds, batch_size=32, shuffle=True)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=4, gamma=0.5)
criterion = nn.CrossEntropyLoss()

for epoch in range(8):
    model.train()
    total, correct, running = 0, 0, 0.0
    for xb, yb in loader:
        optimizer.zero_grad()
        logits = model(xb)
        loss = criterion(logits, yb)
        loss.backward()
        optimizer.step()
        running += loss.item() * xb.size(0)
        correct += (logits.argmax(dim=1) == yb).sum().item()
        total += yb.size(0)
    scheduler.step()
    print(f"epoch {epoch} loss {running / total:.6f} train_acc {correct}/{total} "
          f"lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    pred = model(test_X).argmax(1)
    print("test correct", (pred == test_y).sum().item(), "of", len(test_y))
    print("first predictions", pred[:20].tolist())
    print("probs", [round(p, 5) for p in F.softmax(model(test_X[:3]), dim=1).flatten().tolist()])
for name, p in model.named_parameters():
    print(name, tuple(p.shape), f"{p.norm().item():.6f}")
