"""Second-order gradients as users write them. A physics-informed net fitted to u'' = -u on
[0, pi] with u(0) = 0, u'(0) = 1: torch.autograd.grad with create_graph=True inside the loss.
Then MAML on generated sine tasks: an inner SGD step taken by hand with torch.autograd.grad
(create_graph=True), the adapted weights used through torch.func.functional_call, and the
meta-gradient flowing through the inner step."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^(data|tasks)
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(5)
xs = torch.rand(40, 1) * math.pi
print("data", xs[:4].flatten().tolist())

pinn = nn.Sequential(nn.Linear(1, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh(), nn.Linear(24, 1))
opt = torch.optim.Adam(pinn.parameters(), lr=1e-2)
x0 = torch.zeros(1, 1, requires_grad=True)
for step in range(30):
    x = xs.clone().requires_grad_(True)
    u = pinn(x)
    du = torch.autograd.grad(u.sum(), x, create_graph=True)[0]
    d2u = torch.autograd.grad(du.sum(), x, create_graph=True)[0]
    u0 = pinn(x0)
    du0 = torch.autograd.grad(u0, x0, torch.ones_like(u0), create_graph=True)[0]
    residual = (d2u + u).pow(2).mean()
    loss = residual + u0.pow(2).sum() + (du0 - 1).pow(2).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("pinn", step, f"{loss.item():.6f}", f"{residual.item():.6f}")
with torch.no_grad():
    grid = torch.linspace(0, math.pi, 5).unsqueeze(1)
    print("u", pinn(grid).flatten().tolist())

# MAML
amps = torch.rand(6) * 4 + 1
phases = torch.rand(6) * math.pi
print("tasks", amps.tolist(), phases.tolist())


def task_batch(i, k=10):
    x = torch.rand(k, 1) * 10 - 5
    return x, amps[i] * torch.sin(x + phases[i])


net = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
inner_lr = 0.01
for it in range(8):
    meta_opt.zero_grad()
    total = 0.0
    for i in range(4):
        xs_, ys_ = task_batch((it + i) % 6)
        xq, yq = task_batch((it + i) % 6)
        params = dict(net.named_parameters())
        support = F.mse_loss(torch.func.functional_call(net, params, (xs_,)), ys_)
        grads = torch.autograd.grad(support, list(params.values()), create_graph=True)
        adapted = {name: p - inner_lr * g for (name, p), g in zip(params.items(), grads)}
        query = F.mse_loss(torch.func.functional_call(net, adapted, (xq,)), yq)
        (query / 4).backward()
        total += query.item() / 4
    meta_opt.step()
    if it % 2 == 0:
        print("maml", it, f"{total:.6f}", f"{net[0].weight.grad.norm().item():.6f}")

# a Hessian-vector product by double backward
w = torch.randn(5, requires_grad=True)
f = (w.pow(3).sum() + (w[:-1] * w[1:]).sum())
g = torch.autograd.grad(f, w, create_graph=True)[0]
v = torch.ones(5)
hvp = torch.autograd.grad(g, w, grad_outputs=v)[0]
print("hvp", hvp.tolist(), g.requires_grad, hvp.requires_grad)
