"""A training script that checkpoints and resumes: a small classifier trained with AdamW, a
warmup-then-decay LambdaLR schedule and gradient clipping; every epoch ends with
torch.save({...}) of the model, optimizer, scheduler, epoch, best loss and the generator's
state; a second run loads the checkpoint of epoch 2 with torch.load(weights_only=True),
restores everything (the generator too) and finishes training. The resumed losses must be the
uninterrupted run's, and both libraries must print the same numbers."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|keys|lr|restored)
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(11)
X = torch.randn(240, 8)
w_true = torch.randn(8, 3)
y = (X @ w_true + 0.3 * torch.randn(240, 3)).argmax(dim=1)
print("data", X.shape, y.bincount().tolist(), X[0, :3].tolist())

CKPT_DIR = "checkpoints"
os.makedirs(CKPT_DIR, exist_ok=True)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 3))

    def forward(self, x):
        return self.body(x)


def make(seed):
    torch.manual_seed(seed)
    model = Net()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    warmup = 5
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda step: min(1.0, (step + 1) / warmup) * 0.97 ** max(0, step - warmup))
    return model, opt, sched


def run_epoch(model, opt, sched, loader):
    model.train()
    total, norms = 0.0, []
    for xb, yb in loader:
        loss = F.cross_entropy(model(xb), yb, label_smoothing=0.05)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
        opt.step()
        sched.step()
        total += loss.item() * xb.shape[0]
    return total / len(loader.dataset), max(norms)


def save(path, model, opt, sched, epoch, best):
    torch.save({"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "best": best,
                "rng": torch.get_rng_state()}, path)


# the uninterrupted run
model, opt, sched = make(0)
torch.manual_seed(5)
loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)
best = float("inf")
straight = []
for epoch in range(5):
    loss, norm = run_epoch(model, opt, sched, loader)
    best = min(best, loss)
    straight.append(loss)
    save(os.path.join(CKPT_DIR, f"epoch{epoch}.pt"), model, opt, sched, epoch, best)
    print(f"epoch {epoch} loss {loss:.6f} max grad norm {norm:.5f} lr {sched.get_last_lr()[0]:.8f}")
print("files", sorted(os.listdir(CKPT_DIR)))

# the resumed run: a fresh model, optimizer and schedule from the checkpoint of epoch 2
ckpt = torch.load(os.path.join(CKPT_DIR, "epoch2.pt"), weights_only=True)
print("keys", sorted(ckpt), ckpt["epoch"], type(ckpt["best"]).__name__)
model2, opt2, sched2 = make(123)
model2.load_state_dict(ckpt["model"])
opt2.load_state_dict(ckpt["optimizer"])
sched2.load_state_dict(ckpt["scheduler"])
torch.set_rng_state(ckpt["rng"])
print("restored", sched2.last_epoch, opt2.param_groups[0]["lr"] == sched2.get_last_lr()[0],
      int(opt2.state_dict()["state"][0]["step"]), ckpt["rng"].dtype == torch.uint8,
      ckpt["rng"].shape)
for epoch in range(ckpt["epoch"] + 1, 5):
    loss, norm = run_epoch(model2, opt2, sched2, loader)
    print(f"resumed {epoch} loss {loss:.6f} same as straight {abs(loss - straight[epoch]) < 1e-6}")
same = all(torch.allclose(a, b, atol=1e-6) for a, b in zip(model.parameters(), model2.parameters()))
print("parameters equal after resuming", same)
model2.eval()
with torch.no_grad():
    acc = (model2(X).argmax(1) == y).float().mean().item()
print(f"accuracy {acc:.4f}")
