"""Weight decay in parameter groups (none for biases and norms; no bias before the BatchNorm,
whose gradient there is rounding noise that Adam would amplify) under AdamW with a
MultiStepLR, a model with BatchNorm1d and LayerNorm, the optimizer's param_groups read back,
its state_dict saved and loaded into a fresh optimizer, and training continued; an L2 penalty
on parameters_to_vector besides."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(data|lr)
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(17)

X = torch.randn(160, 6)
w = torch.tensor([1.5, -2.0, 0.0, 0.5, 0.0, 1.0])
y = X @ w + 0.3 * torch.sin(3 * X[:, 0]) + 0.05 * torch.randn(160)
print("data", X[0].tolist(), y[:4].tolist())

model = nn.Sequential(nn.Linear(6, 32, bias=False), nn.BatchNorm1d(32), nn.SiLU(),
                      nn.Linear(32, 32),
                      nn.LayerNorm(32), nn.Tanh(), nn.Linear(32, 1))
decay, no_decay = [], []
for name, p in model.named_parameters():
    if p.ndim < 2 or name.endswith("bias"):
        no_decay.append(p)
    else:
        decay.append(p)
print("groups", len(decay), len(no_decay))
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                         {"params": no_decay, "weight_decay": 0.0}], lr=1e-2, betas=(0.9, 0.99))
sched = torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[4, 7], gamma=0.3)
for g in opt.param_groups:
    print("group", len(g["params"]), g["weight_decay"], g["lr"], g["betas"], g["amsgrad"])


def run_epoch(optimizer):
    model.train()
    total = 0.0
    for i in range(0, 160, 40):
        optimizer.zero_grad()
        loss = F.mse_loss(model(X[i:i + 40]).squeeze(1), y[i:i + 40])
        flat = torch.nn.utils.parameters_to_vector(model.parameters())
        (loss + 1e-3 * flat.pow(2).sum()).backward()
        optimizer.step()
        total += loss.item()
    return total / 4


for epoch in range(5):
    loss = run_epoch(opt)
    sched.step()
    print(f"epoch {epoch} loss {loss:.6f}")
    print(f"lr {[g['lr'] for g in opt.param_groups]}")

state = opt.state_dict()
print("state keys", sorted(state), len(state["state"]),
      [len(g["params"]) for g in state["param_groups"]])
opt2 = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                          {"params": no_decay, "weight_decay": 0.0}], lr=1e-2)
opt2.load_state_dict(state)
print("loaded lr", opt2.param_groups[0]["lr"], opt2.param_groups[1]["betas"])
sched2 = torch.optim.lr_scheduler.ExponentialLR(opt2, gamma=0.8)
for epoch in range(5, 9):
    loss = run_epoch(opt2)
    sched2.step()
    print(f"epoch {epoch} loss {loss:.6f}")
    print(f"lr {opt2.param_groups[1]['lr']:.10f}")

model.eval()
with torch.no_grad():
    pred = model(X).squeeze(1)
    print("mse", f"{F.mse_loss(pred, y).item():.6f}",
          "bn mean", [round(v, 5) for v in model[1].running_mean[:4].tolist()])
    print("norms", [f"{p.norm().item():.5f}" for p in decay],
          [f"{p.norm().item():.5f}" for p in no_decay[:3]])
