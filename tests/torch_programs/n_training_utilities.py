"""The smaller utilities around a training loop: activation checkpointing
(torch.utils.checkpoint, non-reentrant), weight averaging (AveragedModel with an EMA
function, SWALR, update_bn), parameters_to_vector and vector_to_parameters, weight_norm as a
parametrization, torch.func.functional_call, grad-mode decorators (no_grad,
enable_grad, set_grad_enabled, inference_mode), and torch.random.fork_rng around an
evaluation that draws random numbers without disturbing the training stream."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(modes|rng|vector size)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.parametrizations import weight_norm
from torch.optim.swa_utils import SWALR, AveragedModel, get_ema_multi_avg_fn, update_bn
from torch.utils.checkpoint import checkpoint

torch.manual_seed(17)


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.norm = nn.BatchNorm1d(d)

    def forward(self, x):
        return self.norm(x + self.fc2(F.gelu(self.fc1(x))))


class Net(nn.Module):
    def __init__(self, d=8, use_checkpoint=True):
        super().__init__()
        self.inp = weight_norm(nn.Linear(5, d))
        self.blocks = nn.ModuleList([Block(d) for _ in range(2)])
        self.out = nn.Linear(d, 1)
        self.use_checkpoint = use_checkpoint

    def forward(self, x):
        h = self.inp(x)
        for block in self.blocks:
            h = checkpoint(block, h, use_reentrant=False) if self.use_checkpoint and self.training else block(h)
        return self.out(h)


X = torch.randn(96, 5)
y = (X[:, :2].prod(1, keepdim=True) + 0.1 * torch.randn(96, 1))
model = Net()
print("parametrized", sorted(n for n, _ in model.inp.named_parameters()), model.inp.weight.shape)
ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(0.9))
swa = AveragedModel(model)
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
swa_sched = SWALR(opt, swa_lr=0.01, anneal_epochs=3, anneal_strategy="linear")
for epoch in range(6):
    perm = torch.randperm(96)
    for i in range(0, 96, 24):
        idx = perm[i:i + 24]
        loss = F.mse_loss(model(X[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        ema.update_parameters(model)
    if epoch >= 2:
        swa.update_parameters(model)
        swa_sched.step()
    print(f"epoch {epoch} loss {loss.item():.6f} lr {opt.param_groups[0]['lr']:.6f}")
print("averaged", swa.n_averaged.item(), ema.n_averaged.item())
update_bn([(X[i:i + 32],) for i in range(0, 96, 32)], swa)
swa.eval()
ema.eval()
model.eval()
with torch.no_grad():
    for name, m in (("model", model), ("ema", ema), ("swa", swa)):
        print(name, f"{F.mse_loss(m(X), y).item():.6f}")
print("bn", [round(v, 5) for v in swa.module.blocks[0].norm.running_mean[:3].tolist()])

vec = parameters_to_vector(model.parameters())
print("vector size", vec.shape, sum(p.numel() for p in model.parameters()))
vector_to_parameters(vec * 0.5, model.parameters())
print("halved", round(parameters_to_vector(model.parameters()).norm().item() / vec.norm().item(), 6))
vector_to_parameters(vec, model.parameters())

params = {k: v.detach() * 1.0 for k, v in model.named_parameters()}
buffers = dict(model.named_buffers())
out = functional_call(model, (params, buffers), (X[:3],))
print("functional", [round(v, 5) for v in out.flatten().tolist()],
      torch.allclose(out, model(X[:3]), atol=1e-6))


@torch.no_grad()
def evaluate(m):
    return m(X[:4]).requires_grad


@torch.enable_grad()
def with_grad(m):
    return m(X[:4]).requires_grad


with torch.no_grad():
    inside = with_grad(model)
with torch.set_grad_enabled(False):
    off = model(X[:2]).requires_grad
with torch.inference_mode():
    inf = model(X[:2])
print("modes", evaluate(model), inside, off, inf.requires_grad, torch.is_grad_enabled())

before = torch.get_rng_state()
with torch.random.fork_rng():
    torch.manual_seed(0)
    noisy = model(X[:4] + 0.1 * torch.randn(4, 5))
print("rng", torch.equal(before, torch.get_rng_state()), torch.rand(2).tolist())
print("noisy", [round(v, 5) for v in noisy.flatten().tolist()])
