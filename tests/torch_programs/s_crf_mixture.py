"""Probability two ways. A linear-chain CRF tagger: the forward algorithm with
torch.logsumexp, the gold path's score by gather, Viterbi decoding with max and a backpointer
walk. Then a 1-D Gaussian mixture fitted by gradient descent on -log_prob of a
MixtureSameFamily(Categorical, Normal), with samples, entropy and a KL divergence."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|samples)
import torch
import torch.distributions as D
import torch.nn as nn

torch.manual_seed(21)
K, T, B = 4, 7, 16
emissions_true = torch.randn(K, 6)
tags = torch.randint(0, K, (B, T))
features = emissions_true.T[:, tags].permute(1, 2, 0) + 0.5 * torch.randn(B, T, 6)
print("data", tags[0].tolist(), features.shape)


class CRF(nn.Module):
    def __init__(self, n_features, n_tags):
        super().__init__()
        self.emit = nn.Linear(n_features, n_tags)
        self.transitions = nn.Parameter(torch.zeros(n_tags, n_tags))
        self.start = nn.Parameter(torch.zeros(n_tags))

    def log_partition(self, e):
        alpha = self.start + e[:, 0]                                   # (B, K)
        for t in range(1, e.size(1)):
            alpha = torch.logsumexp(alpha.unsqueeze(2) + self.transitions, dim=1) + e[:, t]
        return torch.logsumexp(alpha, dim=1)

    def score(self, e, y):
        s = self.start[y[:, 0]] + e.gather(2, y.unsqueeze(2)).squeeze(2).sum(1)
        return s + self.transitions[y[:, :-1], y[:, 1:]].sum(1)

    def nll(self, x, y):
        e = self.emit(x)
        return (self.log_partition(e) - self.score(e, y)).mean()

    def viterbi(self, x):
        e = self.emit(x)
        best = self.start + e[:, 0]
        pointers = []
        for t in range(1, e.size(1)):
            best, arg = (best.unsqueeze(2) + self.transitions).max(dim=1)
            best = best + e[:, t]
            pointers.append(arg)
        path = [best.argmax(1)]
        for arg in reversed(pointers):
            path.append(arg.gather(1, path[-1].unsqueeze(1)).squeeze(1))
        return torch.stack(path[::-1], dim=1)


crf = CRF(6, K)
opt = torch.optim.Adam(crf.parameters(), lr=0.05)
for step in range(40):
    loss = crf.nll(features, tags)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("crf", step, f"{loss.item():.6f}", crf.transitions.grad.abs().sum().item())
with torch.no_grad():
    path = crf.viterbi(features)
print("viterbi", path[:2].tolist(), (path == tags).float().mean().item())
print("transitions", crf.transitions.detach().round(decimals=3))

# a Gaussian mixture
true = D.MixtureSameFamily(D.Categorical(torch.tensor([0.3, 0.5, 0.2])),
                           D.Normal(torch.tensor([-3.0, 0.0, 4.0]), torch.tensor([0.5, 1.0, 0.7])))
x = true.sample((400,))
print("samples", x[:5].tolist(), x.shape)
logits = torch.zeros(3, requires_grad=True)
means = torch.tensor([-1.0, 0.5, 1.0], requires_grad=True)
log_scales = torch.zeros(3, requires_grad=True)
opt = torch.optim.Adam([logits, means, log_scales], lr=0.1)
for step in range(150):
    gmm = D.MixtureSameFamily(D.Categorical(logits=logits), D.Normal(means, log_scales.exp()))
    loss = -gmm.log_prob(x).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 50 == 0:
        print("gmm", step, f"{loss.item():.6f}")
print("weights", torch.softmax(logits, 0).tolist())
print("means", means.tolist(), "scales", log_scales.exp().tolist())
with torch.no_grad():
    print("mean var", gmm.mean.item(), gmm.variance.item(), true.mean.item(), true.variance.item())
    print("log_prob grid", gmm.log_prob(torch.linspace(-4, 4, 5)).tolist())
    print("cdf", gmm.cdf(torch.tensor([-2.0, 0.0, 2.0])).tolist())
    posterior = gmm.component_distribution.log_prob(x[:3].unsqueeze(1)) + gmm.mixture_distribution.logits
    print("responsibilities", posterior.softmax(-1))
    c = D.Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))
    print("entropy", c.entropy().item(), D.Normal(0.0, 2.0).entropy().item())
    print("kl", D.kl_divergence(D.Normal(torch.tensor(0.0), torch.tensor(1.0)), D.Normal(torch.tensor(1.0), torch.tensor(2.0))).item(),
          D.kl_divergence(c, D.Categorical(logits=torch.zeros(3))).item())
    print("samples", c.sample((10,)).tolist(), D.Normal(0.0, 1.0).rsample((3,)).tolist())
