"""Generative sampling mechanics: a mixture density network on 1-D data trained with
torch.distributions (Normal, Categorical, MixtureSameFamily log_prob), then sampled with
torch.multinomial, rsample and a temperature softmax; reparameterised KL terms."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, MixtureSameFamily, Normal, kl_divergence

torch.manual_seed(31)

x = torch.rand(200, 1) * 2 - 1
branch = torch.randint(0, 2, (200, 1)).float()
y = torch.where(branch > 0, torch.sin(3 * x), -torch.sin(3 * x)) + 0.05 * torch.randn(200, 1)
print("data", x[:3].flatten().tolist(), y[:3].flatten().tolist())


class MDN(nn.Module):
    def __init__(self, k=3):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
        self.logits = nn.Linear(32, k)
        self.mu = nn.Linear(32, k)
        self.log_sigma = nn.Linear(32, k)

    def forward(self, x):
        h = self.body(x)
        sigma = self.log_sigma(h).clamp(-5, 2).exp()
        return MixtureSameFamily(Categorical(logits=self.logits(h)), Normal(self.mu(h), sigma))


model = MDN()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for step in range(40):
    dist = model(x)
    loss = -dist.log_prob(y.squeeze(1)).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step} nll {loss.item():.5f}")

with torch.no_grad():
    dist = model(torch.tensor([[0.0], [0.5]]))
    print("mixture mean", [round(v, 5) for v in dist.mean.tolist()],
          "var", [round(v, 5) for v in dist.variance.tolist()])
    probs = dist.mixture_distribution.probs
    print("weights", [round(v, 5) for v in probs.flatten().tolist()])
    picks = torch.multinomial(probs, num_samples=5, replacement=True)
    print("multinomial", picks.tolist())
    print("no replacement", torch.multinomial(torch.tensor([0.1, 0.2, 0.3, 0.4]), 3).tolist())
    draws = dist.sample((4,))
    print("samples", [round(v, 6) for v in draws.flatten().tolist()])
    logits = torch.randn(2, 6)
    for temperature in (0.5, 1.0, 2.0):
        p = F.softmax(logits / temperature, dim=-1)
        print("temp", temperature, torch.multinomial(p, 1).flatten().tolist(),
              f"{Categorical(probs=p).entropy().mean().item():.5f}")

mu = torch.zeros(3, requires_grad=True)
log_sigma = torch.zeros(3, requires_grad=True)
q = Normal(mu + torch.tensor([0.5, -0.2, 1.0]), log_sigma.exp() * torch.tensor([1.0, 0.5, 2.0]))
z = q.rsample((5,))
kl = kl_divergence(q, Normal(torch.zeros(3), torch.ones(3))).sum()
(z.pow(2).mean() + kl).backward()
print("rsample", [round(v, 5) for v in z[0].tolist()], f"kl {kl.item():.6f}")
print("grads", [round(v, 5) for v in mu.grad.tolist()],
      [round(v, 5) for v in log_sigma.grad.tolist()])
print("bernoulli", torch.bernoulli(torch.full((8,), 0.3)).tolist(),
      torch.randint(0, 10, (5,)).tolist())
