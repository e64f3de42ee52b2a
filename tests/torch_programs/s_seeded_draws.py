"""Seeded draws a PyTorch user relies on being repeatable: rand, randn, randint, randperm,
normal, multinomial, bernoulli and the in-place fills in float16, float32 and float64, a
torch.Generator beside the global stream, get_rng_state/set_rng_state, and simple Monte Carlo
estimates (pi, a mean, a bootstrap interval) printed from them."""
# same-source tolerance: 1e-5 1e-7
# same-source exact: ^(half|single|double|ints|perm|gen|state|bern|multi|fill|dist|clamp)
import torch
import torch.distributions as D

torch.manual_seed(1234)
print("half", torch.rand(5, dtype=torch.float16).tolist(), torch.randn(20, dtype=torch.float16)[-4:].tolist())
print("half", torch.empty(33, dtype=torch.float16).normal_(2.0, 0.5)[-3:].tolist(),
      torch.empty(4, dtype=torch.float16).uniform_(-3, 3).tolist())
print("single", torch.rand(3).tolist(), torch.randn(2, 3)[1].tolist(), torch.randn(40)[-2:].tolist())
print("double", torch.rand(2, dtype=torch.float64).tolist(), torch.randn(18, dtype=torch.float64)[-2:].tolist())
print("ints", torch.randint(0, 10, (8,)).tolist(), torch.randint(-5, 5, (2, 3)).tolist(), torch.randint(3, (4,), dtype=torch.int32).tolist())
print("perm", torch.randperm(10).tolist(), torch.randperm(5, dtype=torch.int32).tolist())
g = torch.Generator().manual_seed(99)
print("gen", torch.rand(3, generator=g).tolist(), torch.randint(0, 100, (4,), generator=g).tolist(), g.initial_seed())
state = torch.get_rng_state()
a = torch.randn(4)
torch.set_rng_state(state)
print("state", torch.equal(a, torch.randn(4)), a.tolist())
p = torch.tensor([0.1, 0.5, 0.9, 0.0, 1.0])
print("bern", torch.bernoulli(p).tolist(), torch.bernoulli(torch.full((2, 4), 0.3, dtype=torch.float64)).tolist())
w = torch.tensor([[1.0, 2.0, 3.0, 4.0], [4.0, 0.0, 0.0, 1.0]])
print("multi", torch.multinomial(w, 2).tolist(), torch.multinomial(w, 6, replacement=True).tolist())
print("fill", torch.empty(3).uniform_(0, 5).tolist(), torch.empty(2, 2).normal_(mean=1.0, std=0.1).tolist(),
      torch.zeros(4).exponential_(2.0).tolist(), torch.zeros(5).bernoulli_(0.5).tolist(), torch.empty(4).random_(0, 7).tolist())
print("fill", torch.normal(torch.zeros(3), torch.tensor([1.0, 2.0, 3.0])).tolist(), torch.normal(1.0, 2.0, size=(2,)).tolist(),
      torch.rand_like(torch.zeros(2, dtype=torch.float64)).tolist(), torch.randn_like(torch.zeros(3)).tolist(), torch.randint_like(torch.zeros(3), 4, 9).tolist())
print("dist", D.Exponential(torch.tensor([0.5, 2.0])).sample((2,)).tolist(), D.Categorical(logits=torch.zeros(4)).sample((5,)).tolist(),
      D.Normal(torch.zeros(2), 3.0).rsample().tolist(), D.Bernoulli(probs=torch.tensor([0.2, 0.7])).sample().tolist(),
      D.Multinomial(10, torch.tensor([0.1, 0.2, 0.7])).sample((2,)).tolist())
print("clamp", torch.randint(0, 10, (6,)).clamp(max=4.5).tolist(), torch.randint(0, 10, (4,)).clamp(2, 7).tolist())

# Monte Carlo: pi from points in the unit square, the mean of an exponential, a bootstrap
xy = torch.rand(20000, 2)
inside = (xy.pow(2).sum(1) <= 1).float()
print("pi", (4 * inside.mean()).item(), (4 * inside.std() / 20000 ** 0.5).item())
e = torch.empty(5000).exponential_(0.5)
print("exp mean", e.mean().item(), e.var().item(), e.median().item())
data = torch.randn(200) * 2 + 1
idx = torch.randint(0, 200, (500, 200))
boot = data[idx].mean(dim=1)
print("bootstrap", data.mean().item(), torch.quantile(boot, torch.tensor([0.025, 0.975])).tolist(), boot.std().item())
counts = torch.bincount(torch.multinomial(torch.tensor([0.2, 0.3, 0.5]), 3000, replacement=True), minlength=3)
print("multinomial counts", counts.tolist(), (counts / 3000).tolist())
hist = torch.histc(torch.randn(5000), bins=8, min=-4, max=4)
print("normal histogram", hist.tolist())
