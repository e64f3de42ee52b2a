"""A RealNVP-style normalizing flow on a generated 2-D two-moons set: affine coupling layers
with alternating masks, chunk into scale and shift, tanh-bounded log-scales, log-det sums,
the base distribution's Normal log_prob, then sampling back through the inverse."""
# same-source tolerance: 3e-4 1e-5
import math

import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(11)
n = 256
t = torch.rand(n) * math.pi
upper = torch.randint(0, 2, (n,)).bool()
x = torch.stack([torch.cos(t), torch.sin(t)], dim=1)
x = torch.where(upper.unsqueeze(1), x, torch.stack([1 - torch.cos(t), 0.5 - torch.sin(t)], 1))
x = x + 0.05 * torch.randn(n, 2)
print("data", x[:2].tolist(), upper[:6].tolist())


class Coupling(nn.Module):
    def __init__(self, mask):
        super().__init__()
        self.register_buffer("mask", mask)
        self.net = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32),
                                 nn.LeakyReLU(0.2), nn.Linear(32, 4))
        self.scale = nn.Parameter(torch.ones(2))

    def _params(self, x):
        s, b = self.net(x * self.mask).chunk(2, dim=1)
        s = self.scale * torch.tanh(s) * (1 - self.mask)
        return s, b * (1 - self.mask)

    def forward(self, x):
        s, b = self._params(x)
        y = x * torch.exp(s) + b
        return y, s.sum(dim=1)

    def inverse(self, y):
        s, b = self._params(y)
        return (y - b) * torch.exp(-s)


class Flow(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0]) for i in range(k)]
        self.layers = nn.ModuleList(Coupling(m) for m in masks)
        self.base = Normal(torch.zeros(2), torch.ones(2))

    def log_prob(self, x):
        log_det = torch.zeros(x.size(0))
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return self.base.log_prob(x).sum(-1) + log_det

    def sample(self, m):
        z = self.base.sample((m,))
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


flow = Flow()
print("base", flow.base, flow.base.batch_shape, flow.base.event_shape)
opt = torch.optim.Adam(flow.parameters(), lr=5e-3)
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=40)
for step in range(40):
    loss = -flow.log_prob(x).mean()
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(flow.parameters(), 5.0)
    opt.step()
    sched.step()
    if step % 10 == 0:
        print("step", step, f"{loss.item():.6f}", f"lr {sched.get_last_lr()[0]:.6f}")

with torch.no_grad():
    z = x[:4]
    for layer in flow.layers:
        z, _ = layer(z)
    back = z
    for layer in reversed(flow.layers):
        back = layer.inverse(back)
    print("round trip", torch.allclose(back, x[:4], atol=1e-5), z[0].tolist())
    samples = flow.sample(5)
    print("samples", samples.tolist())
    print("log_prob", flow.log_prob(torch.tensor([[0.0, 0.5], [1.0, -0.3], [3.0, 3.0]])).tolist())
    print("scales", [layer.scale.tolist() for layer in flow.layers])
