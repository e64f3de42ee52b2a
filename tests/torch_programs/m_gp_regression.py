"""Gaussian-process regression on generated 1-D data: an RBF kernel matrix from cdist, a
noise-jittered Cholesky factor (torch.linalg.cholesky), alpha by cholesky_solve, the log
marginal likelihood with 2*log(diag).sum() and checked against logdet, the three
hyperparameters trained with Adam, then the posterior mean and variance on a grid."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import math

import torch

torch.manual_seed(13)
n = 30
x = torch.sort(torch.rand(n) * 6 - 3).values
y = torch.sin(2 * x) + 0.3 * x + 0.1 * torch.randn(n)
print("data", x[:4].tolist(), y[:4].tolist())
x64, y64 = x.double(), y.double()

log_ls = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
log_sf = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
log_sn = torch.tensor(-1.0, dtype=torch.float64, requires_grad=True)


def kernel(a, b):
    d2 = torch.cdist(a.unsqueeze(1), b.unsqueeze(1)).pow(2)
    return torch.exp(2 * log_sf) * torch.exp(-0.5 * d2 / torch.exp(2 * log_ls))


def nlml():
    K = kernel(x64, x64) + (torch.exp(2 * log_sn) + 1e-6) * torch.eye(n, dtype=torch.float64)
    L = torch.linalg.cholesky(K)
    alpha = torch.cholesky_solve(y64.unsqueeze(1), L)
    logdet = 2 * torch.log(torch.diagonal(L)).sum()
    return 0.5 * (y64 @ alpha.squeeze(1)) + 0.5 * logdet + 0.5 * n * math.log(2 * math.pi), K, L


opt = torch.optim.Adam([log_ls, log_sf, log_sn], lr=0.05)
for step in range(60):
    loss, K, L = nlml()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print("step", step, f"{loss.item():.8f}", [round(p.grad.item(), 6) for p in (log_ls, log_sf, log_sn)])

with torch.no_grad():
    loss, K, L = nlml()
    print("hyper", log_ls.exp().item(), log_sf.exp().item(), log_sn.exp().item())
    print("logdet", torch.logdet(K).item(), 2 * L.diagonal().log().sum().item(), torch.linalg.slogdet(K)[1].item())
    xs = torch.linspace(-3, 3, 7, dtype=torch.float64)
    Ks = kernel(xs, x64)
    alpha = torch.cholesky_solve(y64.unsqueeze(1), L)
    mean = (Ks @ alpha).squeeze(1)
    v = torch.linalg.solve_triangular(L, Ks.T, upper=False)
    var = kernel(xs, xs).diagonal() - v.pow(2).sum(0)
    print("mean", mean.tolist())
    print("std", var.clamp_min(0).sqrt().tolist())
    print("solve agrees", torch.allclose(torch.linalg.solve(K, y64), alpha.squeeze(1)))
    prior = torch.distributions.MultivariateNormal(torch.zeros(n, dtype=torch.float64), scale_tril=L)
    print("mvn log_prob", prior.log_prob(y64).item(), -loss.item())
