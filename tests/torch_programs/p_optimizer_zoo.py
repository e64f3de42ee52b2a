"""Curve fitting with LBFGS and a closure (strong-Wolfe line search and without), then the
other optimizers side by side on one small regression, each under a different schedule:
Adagrad, RMSprop with momentum and centered, Rprop, NAdam, RAdam, Adamax, ASGD, SGD with
Nesterov; CyclicLR, CosineAnnealingWarmRestarts, PolynomialLR, LambdaLR, MultiplicativeLR,
SequentialLR (LinearLR warm-up then ExponentialLR), StepLR; the rates printed as they go."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|lr )
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import lr_scheduler

torch.manual_seed(11)
t = torch.linspace(0, 4, 50)
y = 2.5 * torch.exp(-0.7 * t) * torch.cos(3.0 * t + 0.4) + 0.05 * torch.randn(50)
print("data", [round(v, 6) for v in y[:5].tolist()])

for search in (None, "strong_wolfe"):
    theta = torch.tensor([1.0, -0.5, 2.8, 0.0], requires_grad=True)
    opt = torch.optim.LBFGS([theta], lr=1 if search else 0.5, max_iter=20, history_size=10,
                            line_search_fn=search)

    def closure():
        opt.zero_grad()
        a, k, w, phi = theta
        pred = a * torch.exp(-k * t) * torch.cos(w * t + phi)
        loss = F.mse_loss(pred, y)
        loss.backward()
        return loss

    for outer in range(4):
        loss = opt.step(closure)
        print("lbfgs", search, outer, f"{loss.item():.6f}")
    print("fit", search, [round(v, 4) for v in theta.tolist()],
          opt.state[theta]["func_evals"], opt.state[theta]["n_iter"])

# one regression, eight optimizers, eight schedules
x = torch.randn(64, 6)
w_true = torch.randn(6, 1)
target = x @ w_true + 0.1 * torch.randn(64, 1)
init = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1)).state_dict()


def build(name, params):
    if name == "adagrad":
        opt = torch.optim.Adagrad(params, lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)
        return opt, lr_scheduler.CyclicLR(opt, 0.01, 0.1, step_size_up=3, mode="triangular2",
                                          cycle_momentum=False)
    if name == "rmsprop":
        opt = torch.optim.RMSprop(params, lr=0.01, momentum=0.9, centered=True, alpha=0.9)
        return opt, lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2, eta_min=1e-4)
    if name == "rprop":
        opt = torch.optim.Rprop(params, lr=0.01, etas=(0.4, 1.3), step_sizes=(1e-5, 0.5))
        return opt, lr_scheduler.PolynomialLR(opt, total_iters=10, power=2.0)
    if name == "nadam":
        opt = torch.optim.NAdam(params, lr=0.02, momentum_decay=4e-3, weight_decay=1e-3)
        return opt, lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (1.0 + 0.1 * e))
    if name == "radam":
        opt = torch.optim.RAdam(params, lr=0.02, decoupled_weight_decay=True, weight_decay=0.01)
        return opt, lr_scheduler.MultiplicativeLR(opt, lambda e: 0.95)
    if name == "adamax":
        opt = torch.optim.Adamax(params, lr=0.05)
        warm = lr_scheduler.LinearLR(opt, start_factor=0.2, total_iters=4)
        decay = lr_scheduler.ExponentialLR(opt, gamma=0.9)
        return opt, lr_scheduler.SequentialLR(opt, [warm, decay], milestones=[4])
    if name == "asgd":
        opt = torch.optim.ASGD(params, lr=0.05, t0=5, lambd=1e-3)
        return opt, lr_scheduler.StepLR(opt, step_size=5, gamma=0.5)
    opt = torch.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, dampening=0)
    return opt, lr_scheduler.CosineAnnealingLR(opt, T_max=12, eta_min=0.001)


for name in ("adagrad", "rmsprop", "rprop", "nadam", "radam", "adamax", "asgd", "sgd"):
    net = nn.Sequential(nn.Linear(6, 12), nn.Tanh(), nn.Linear(12, 1))
    net.load_state_dict(init)
    opt, sched = build(name, net.parameters())
    rates, losses = [], []
    for step in range(12):
        loss = F.mse_loss(net(x), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        rates.append(opt.param_groups[0]["lr"])
        losses.append(loss.item())
    print("lr ", name, rates[:3], rates[-1])
    print("loss", name, [round(v, 5) for v in losses[::3]], f"{losses[-1]:.5f}")
    state = opt.state_dict()["state"][0]
    print("state", name, sorted(state), math.isfinite(net[0].weight.sum().item()))
