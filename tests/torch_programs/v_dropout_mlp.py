"""An MLP regularised with nn.Dropout and F.dropout, trained in train mode (the dropout masks
are drawn and must match), evaluated in eval mode under torch.no_grad and
torch.inference_mode; AdamW with an ExponentialLR."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(data|lr|mask)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(5)

X = torch.randn(256, 10)
y = (X[:, :3].sum(dim=1) + 0.5 * X[:, 3] * X[:, 4] > 0).long()
print("data", X[0, :4].tolist(), y[:16].tolist())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.drop = nn.Dropout(0.3)
        self.fc2 = nn.Linear(64, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, x):
        x = self.drop(F.relu(self.fc1(x)))
        x = F.dropout(F.gelu(self.fc2(x)), p=0.2, training=self.training)
        return self.out(x)


model = Net()
opt = torch.optim.AdamW(model.parameters(), lr=5e-3, weight_decay=0.01)
sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
loader = DataLoader(TensorDataset(X[:192], y[:192]), batch_size=32, shuffle=True)

drop = nn.Dropout(0.5)
probe = drop(torch.ones(2, 8))
print("mask", probe.tolist())
print("mask eval", drop.eval()(torch.ones(1, 4)).tolist())

for epoch in range(6):
    model.train()
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    sched.step()
    print(f"epoch {epoch} loss {total / len(loader):.6f}")
    print(f"lr {sched.get_last_lr()[0]:.8f}")

model.eval()
with torch.no_grad():
    a = model(X[192:])
with torch.inference_mode():
    b = model(X[192:])
    inside = torch.is_inference_mode_enabled()
print("eval deterministic", torch.equal(a, b), b.requires_grad, inside,
      torch.is_inference_mode_enabled())
print("test correct", (a.argmax(1) == y[192:]).sum().item(), "of", 64)
print("logits", [round(v, 5) for v in a[:2].flatten().tolist()])
model.train()
c = model(X[192:196])
print("train mode differs", not torch.allclose(c, a[:4]))
print("train logits", [round(v, 5) for v in c[0].tolist()])
