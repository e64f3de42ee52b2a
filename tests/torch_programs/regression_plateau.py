"""Noisy 1-d regression with an MLP: xavier_uniform_ initialisation applied through
model.apply, RMSprop, ReduceLROnPlateau on a validation loss, random_split of a TensorDataset,
a best-model state_dict kept with copy.deepcopy and restored at the end."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^data|^grid
import copy

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset, random_split

torch.manual_seed(5)
x = torch.rand(300, 1) * 6 - 3
y = torch.sin(x) + 0.3 * x + 0.1 * torch.randn_like(x)
print("data", x[:3, 0].tolist(), y[:3, 0].tolist())
train_set, val_set = random_split(TensorDataset(x, y), [240, 60])
print("first train indices", train_set.indices[:8])
train_loader = DataLoader(train_set, batch_size=40, shuffle=True)
val_loader = DataLoader(val_set, batch_size=60)

model = nn.Sequential(nn.Linear(1, 32), nn.SiLU(), nn.Linear(32, 32), nn.SiLU(), nn.Linear(32, 1))


@torch.no_grad()
def init(m):
    if type(m) == nn.Linear:
        torch.nn.init.xavier_uniform_(m.weight)
        m.bias.fill_(0.01)


model.apply(init)
optimizer = torch.optim.RMSprop(model.parameters(), lr=3e-3, alpha=0.9)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                       patience=1)
best, best_state = float("inf"), None
for epoch in range(10):
    model.train()
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = nn.MSELoss()(model(xb), yb)
        loss.backward()
        optimizer.step()
    model.eval()
    with torch.no_grad():
        val = sum(nn.functional.mse_loss(model(xb), yb, reduction="sum").item()
                  for xb, yb in val_loader) / len(val_set)
    scheduler.step(val)
    if val < best:
        best, best_state = val, copy.deepcopy(model.state_dict())
    lr = optimizer.param_groups[0]["lr"]
    print(f"epoch {epoch} train {loss.item():.6f} val {val:.6f} lr {lr:.6f}")

model.load_state_dict(best_state)
with torch.no_grad():
    grid = torch.arange(-3, 3.01, 0.3).unsqueeze(1)
    print("grid", grid[:, 0].tolist())
    print("best val", f"{best:.6f}")
    print("predictions", [round(v, 4) for v in model(grid).squeeze(1).tolist()])
