"""Variational inference for Bayesian linear regression with torch.distributions: a mean-field
Normal posterior over the weights (Independent over the event dim, scales from softplus),
reparameterised draws with rsample, the likelihood's log_prob, the KL to a Normal prior in
closed form (kl_divergence) beside its Monte Carlo estimate, a LogNormal noise scale
(a TransformedDistribution), and afterwards the posterior predictive, a MixtureSameFamily's
log density and entropy, and the shapes a user reads (batch_shape, event_shape)."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|shapes|draws)
import torch
import torch.nn.functional as F
from torch.distributions import (Categorical, Independent, LogNormal, MixtureSameFamily, Normal,
                                 kl_divergence)

torch.manual_seed(31)
N, D = 80, 3
X = torch.randn(N, D)
w_true = torch.tensor([1.5, -2.0, 0.5])
y = X @ w_true + 0.3 * torch.randn(N)
print("data", X.shape, [round(v, 6) for v in y[:4].tolist()])

mu = torch.zeros(D, requires_grad=True)
rho = torch.full((D,), -3.0, requires_grad=True)
log_noise_loc = torch.tensor(-1.0, requires_grad=True)
prior = Independent(Normal(torch.zeros(D), torch.ones(D)), 1)
opt = torch.optim.Adam([mu, rho, log_noise_loc], lr=0.05)


def posterior():
    return Independent(Normal(mu, F.softplus(rho)), 1)


for step in range(150):
    q = posterior()
    w = q.rsample((8,))                                   # (8, D) reparameterised draws
    noise = LogNormal(log_noise_loc, 0.1).rsample((8, 1))  # (8, 1)
    lik = Normal(w @ X.T, noise).log_prob(y).sum(-1)      # (8,)
    kl = kl_divergence(q, prior)
    elbo = lik.mean() - kl
    opt.zero_grad()
    (-elbo).backward()
    opt.step()
    if step % 30 == 0:
        print(f"step {step} elbo {elbo.item():.4f} kl {kl.item():.5f}")

q = posterior()
print("posterior mean", [round(v, 4) for v in q.mean.tolist()], [round(v, 5) for v in q.stddev.tolist()])
print("noise", round(torch.exp(log_noise_loc).item(), 5))
mc = (q.log_prob(q.sample((4000,))) - prior.log_prob(q.sample((4000,)))).mean()
print("kl closed", round(kl_divergence(q, prior).item(), 4), "entropy", round(q.entropy().item(), 5))
print("shapes", q.batch_shape, q.event_shape, Normal(mu, 1.0).batch_shape, prior.sample((2, 5)).shape)

# the posterior predictive at new points
x_new = torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
with torch.no_grad():
    draws = q.sample((2000,)) @ x_new.T
print("predictive", [round(v, 3) for v in draws.mean(0).tolist()], [round(v, 3) for v in draws.std(0).tolist()])

# a two-component mixture: density, cdf-free quantities and samples
mix = MixtureSameFamily(Categorical(probs=torch.tensor([0.3, 0.7])),
                        Normal(torch.tensor([-2.0, 1.0]), torch.tensor([0.5, 1.0])))
grid = torch.linspace(-4, 4, 5)
print("mixture", [round(v, 6) for v in mix.log_prob(grid).tolist()], round(mix.mean.item(), 6),
      round(mix.variance.item(), 6))
s = mix.sample((5,))
print("draws", s.shape, [round(v, 5) for v in s.tolist()])
ln = LogNormal(torch.tensor(0.0), torch.tensor(0.5))
print("lognormal", round(ln.mean.item(), 6), round(ln.log_prob(torch.tensor(2.0)).item(), 6),
      round(ln.entropy().item(), 6), ln.support)
