"""torch.func as users write it: per-sample gradients of a small MLP with vmap(grad(...)) over
functional_call (checked against a loop of backward calls, then clipped per sample and
noised for a DP-SGD step), an ensemble of models run at once with stack_module_state and
vmap, and a Newton solve of a small nonlinear system with jacrev and of a minimisation with
hessian."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacrev, stack_module_state, vmap

torch.manual_seed(3)
x = torch.randn(12, 5)
y = torch.randint(0, 3, (12,))
print("data", x[0].tolist(), y.tolist())

model = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 3))
params = {k: v.detach() for k, v in model.named_parameters()}


def sample_loss(p, xi, yi):
    out = functional_call(model, p, (xi.unsqueeze(0),))
    return F.cross_entropy(out, yi.unsqueeze(0))


per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
print("per-sample shapes", {k: list(v.shape) for k, v in per_sample.items()})
loop = []
for i in range(3):
    model.zero_grad()
    F.cross_entropy(model(x[i:i + 1]), y[i:i + 1]).backward()
    loop.append(model[0].weight.grad.clone())
diff = max((per_sample["0.weight"][i] - loop[i]).abs().max().item() for i in range(3))
print("matches the loop", diff < 1e-6)

# DP-SGD: clip each sample's gradient to norm 1, average, add noise
norms = torch.stack([g.flatten(1).norm(dim=1) for g in per_sample.values()]).norm(dim=0)
scale = (1.0 / (norms + 1e-6)).clamp(max=1.0)
print("norms", [round(v, 5) for v in norms[:5].tolist()])
opt = torch.optim.SGD(model.parameters(), lr=0.5)
for step in range(5):
    p = {k: v.detach() for k, v in model.named_parameters()}
    g = vmap(grad(sample_loss), in_dims=(None, 0, 0))(p, x, y)
    n = torch.stack([v.flatten(1).norm(dim=1) for v in g.values()]).norm(dim=0)
    s = (1.0 / (n + 1e-6)).clamp(max=1.0)
    for name, param in model.named_parameters():
        clipped = (g[name] * s.view(-1, *[1] * (g[name].ndim - 1))).mean(0)
        param.grad = clipped + 0.01 * torch.randn_like(clipped)
    opt.step()
    with torch.no_grad():
        print("dp step", step, f"{F.cross_entropy(model(x), y).item():.5f}")

# an ensemble of five models evaluated at once
models = [nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1)) for _ in range(5)]
stacked, buffers = stack_module_state(models)
base = copy.deepcopy(models[0])  # the skeleton functional_call fills


def run_one(p, b, inputs):
    return functional_call(base, (p, b), (inputs,))


together = vmap(run_one, in_dims=(0, 0, None))(stacked, buffers, x)
separately = torch.stack([m(x) for m in models])
print("ensemble", list(together.shape), torch.allclose(together, separately, atol=1e-6))
print("ensemble mean", [round(v, 5) for v in together.mean(0)[:4].flatten().tolist()])
minibatches = x[:10].view(5, 2, 5)
print("per-model batches", list(vmap(run_one)(stacked, buffers, minibatches).shape))

# Newton's method on a nonlinear system F(z) = 0 with the Jacobian from jacrev
A = torch.tensor([[3.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
b = torch.tensor([1.0, -1.0], dtype=torch.float64)


def system(z):
    return A @ z + 0.1 * z ** 3 - b


z = torch.zeros(2, dtype=torch.float64)
for it in range(6):
    J = jacrev(system)(z)
    z = z - torch.linalg.solve(J, system(z))
    print("newton", it, [round(v, 10) for v in z.tolist()], f"{system(z).norm().item():.3e}")


# Newton minimisation of the Rosenbrock function with its Hessian
def rosen(v):
    return (1 - v[0]) ** 2 + 10 * (v[1] - v[0] ** 2) ** 2


v = torch.tensor([-0.5, 0.5], dtype=torch.float64)
for it in range(8):
    g, H = grad(rosen)(v), hessian(rosen)(v)
    v = v - torch.linalg.solve(H, g)
print("rosenbrock", [round(t, 8) for t in v.tolist()], f"{rosen(v).item():.3e}")
