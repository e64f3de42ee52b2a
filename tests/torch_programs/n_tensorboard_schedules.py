"""Logging and schedules of a training script: a SummaryWriter writing scalars, a histogram,
text and hyperparameters to a temporary log dir (read back with TensorBoard's own event
reader), gradient clipping by norm and by value with the norms it returns, and the schedules
a script chains: linear warmup by LambdaLR then cosine decay joined by SequentialLR, OneCycleLR
stepped per batch, ChainedScheduler, and ReduceLROnPlateau."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(seq lr|onecycle|chained|plateau|files|tags|steps)
import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import (ChainedScheduler, CosineAnnealingLR, ExponentialLR, LambdaLR,
                                      OneCycleLR, ReduceLROnPlateau, SequentialLR, StepLR)
from torch.utils.tensorboard import SummaryWriter
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

torch.manual_seed(8)
X = torch.randn(128, 6)
y = torch.sin(X[:, :1]) + 0.5 * X[:, 1:2] ** 2
model = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
warmup = LambdaLR(opt, lambda step: (step + 1) / 4)
decay = CosineAnnealingLR(opt, T_max=8, eta_min=1e-3)
sched = SequentialLR(opt, schedulers=[warmup, decay], milestones=[4])

logdir = tempfile.mkdtemp()
writer = SummaryWriter(log_dir=logdir)
for step in range(12):
    idx = torch.randperm(128)[:32]
    loss = F.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=0.5)
    writer.add_scalar("train/loss", loss.item(), step)
    writer.add_scalar("train/grad_norm", norm.item(), step)
    writer.add_scalar("train/lr", opt.param_groups[0]["lr"], step)
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.6f} norm {norm.item():.6f} clipped {norm.item() > 0.5}")
    print(f"seq lr {sched.get_last_lr()[0]:.10f}")
writer.add_histogram("weights/first", model[0].weight, 12)
writer.add_text("notes", "warmup then cosine", 0)
writer.add_hparams({"lr": 0.05, "momentum": 0.9}, {"hparam/final_loss": loss.item()})
writer.flush()
writer.close()
events = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents")]
print("files", len(events), writer.log_dir == logdir, len(os.listdir(logdir)) >= 2)
acc = EventAccumulator(logdir)
acc.Reload()
print("tags", sorted(acc.Tags()["scalars"]), acc.Tags()["histograms"])
losses = acc.Scalars("train/loss")
print("steps", [e.step for e in losses][:5], len(losses))
print("logged", [round(e.value, 5) for e in losses][-3:], [round(e.value, 6) for e in acc.Scalars("train/lr")][:5])

# clipping by value, and the norm of gradients with inf and of other norm types
p = nn.Parameter(torch.tensor([3.0, -4.0, 0.5]))
p.grad = torch.tensor([10.0, -0.2, 3.0])
nn.utils.clip_grad_value_([p], clip_value=1.0)
print("clip value", p.grad.tolist())
p.grad = torch.tensor([3.0, -4.0, 0.0])
print("clip norms", nn.utils.clip_grad_norm_([p], 10.0, norm_type=1).item(),
      nn.utils.clip_grad_norm_([p], 10.0, norm_type=float("inf")).item(), p.grad.tolist())
total = nn.utils.clip_grad_norm_([p], 1.0)
print("clip norms", total.item(), [round(v, 6) for v in p.grad.tolist()])

# OneCycleLR stepped per batch
opt2 = torch.optim.AdamW(model.parameters(), lr=1e-3)
one = OneCycleLR(opt2, max_lr=0.01, total_steps=20, pct_start=0.25, anneal_strategy="cos")
seen = []
for _ in range(20):
    opt2.step()
    one.step()
    seen.append(opt2.param_groups[0]["lr"])
print("onecycle", [f"{v:.8f}" for v in seen[::4]], f"{max(seen):.8f}")
print("onecycle betas", opt2.param_groups[0]["betas"])

# two schedules applied together, and the plateau rule on a validation loss
opt3 = torch.optim.SGD(model.parameters(), lr=1.0)
chained = ChainedScheduler([StepLR(opt3, step_size=2, gamma=0.5), ExponentialLR(opt3, gamma=0.9)])
lrs = []
for _ in range(6):
    opt3.step()
    chained.step()
    lrs.append(round(opt3.param_groups[0]["lr"], 10))
print("chained", lrs)
opt4 = torch.optim.SGD(model.parameters(), lr=0.1)
plateau = ReduceLROnPlateau(opt4, mode="min", factor=0.5, patience=1, threshold=1e-3)
for val in [1.0, 0.9, 0.95, 0.91, 0.9, 0.92, 0.5, 0.6, 0.7]:
    plateau.step(val)
    print("plateau", val, opt4.param_groups[0]["lr"], plateau.num_bad_epochs)
