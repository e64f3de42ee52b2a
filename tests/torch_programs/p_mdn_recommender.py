"""Two probabilistic models as users write them. A mixture density network on a generated
multi-valued inverse problem (x = y + 0.3 sin 2 pi y, predicting y from x): MixtureSameFamily
of Categorical logits and Independent Normals, trained on -log_prob, then mean, stddev and a
seeded sample. A matrix factorisation recommender on generated implicit feedback: user and
item Embeddings trained with a BPR loss (logsigmoid of score differences) on negatives drawn
with randint, item popularity by torch.unique(return_counts), users bucketed by activity
with bucketize and searchsorted, and hit rate at 5 by topk."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import torch
import torch.distributions as D
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(9)
y = torch.rand(300, 1)
x = y + 0.3 * torch.sin(2 * torch.pi * y) + 0.05 * torch.randn(300, 1)
print("data", [round(v, 6) for v in y[:4].flatten().tolist()])


class MDN(nn.Module):
    def __init__(self, k=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(1, 32), nn.Tanh())
        self.logits, self.mu, self.log_sigma = nn.Linear(32, k), nn.Linear(32, k), nn.Linear(32, k)

    def forward(self, x):
        h = self.body(x)
        mix = D.Categorical(logits=self.logits(h))
        comp = D.Independent(D.Normal(self.mu(h).unsqueeze(-1),
                                      self.log_sigma(h).clamp(-5, 2).exp().unsqueeze(-1)), 1)
        return D.MixtureSameFamily(mix, comp)


mdn = MDN()
opt = torch.optim.Adam(mdn.parameters(), lr=1e-2)
for step in range(60):
    dist = mdn(x)
    loss = -dist.log_prob(y).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 15 == 0:
        print("mdn", step, f"{loss.item():.5f}")
with torch.no_grad():
    probe = torch.tensor([[0.2], [0.5], [0.8]])
    dist = mdn(probe)
    print("batch", list(dist.batch_shape), list(dist.event_shape))
    print("mean", [round(v, 5) for v in dist.mean.flatten().tolist()])
    print("stddev", [round(v, 5) for v in dist.stddev.flatten().tolist()])
    print("weights", [round(v, 5) for v in dist.mixture_distribution.probs[1].tolist()])
    torch.manual_seed(1)
    draws = dist.sample((4,))
    print("sample", list(draws.shape))

# implicit-feedback recommender with BPR
users, items, dim = 30, 40, 8
affinity = torch.randn(users, 3) @ torch.randn(3, items)
clicks = torch.nonzero(affinity > 1.0)  # (N, 2) user, item pairs
print("data", clicks.shape[0], clicks[:5].tolist())
item_ids, counts = torch.unique(clicks[:, 1], return_counts=True)
popular = item_ids[counts.argsort(descending=True, stable=True)[:5]]
print("popular", popular.tolist(), counts.max().item())
activity = torch.bincount(clicks[:, 0], minlength=users)
edges = torch.tensor([2, 5, 10])
print("buckets", torch.bucketize(activity, edges).tolist()[:12],
      torch.searchsorted(edges, activity[:6], right=True).tolist())

user_emb, item_emb = nn.Embedding(users, dim), nn.Embedding(items, dim)
nn.init.normal_(user_emb.weight, std=0.1)
nn.init.normal_(item_emb.weight, std=0.1)
opt = torch.optim.Adam(list(user_emb.parameters()) + list(item_emb.parameters()), lr=0.05)
clicked = torch.zeros(users, items, dtype=torch.bool)
clicked[clicks[:, 0], clicks[:, 1]] = True
for epoch in range(8):
    perm = torch.randperm(clicks.shape[0])
    total = 0.0
    for i in range(0, clicks.shape[0], 64):
        batch = clicks[perm[i:i + 64]]
        u, pos = batch[:, 0], batch[:, 1]
        neg = torch.randint(0, items, (len(u),))
        eu = user_emb(u)
        diff = (eu * item_emb(pos)).sum(-1) - (eu * item_emb(neg)).sum(-1)
        loss = -F.logsigmoid(diff).mean() + 1e-4 * (eu.pow(2).sum() / len(u))
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item()
    if epoch % 2 == 1:
        print("bpr", epoch, f"{total:.5f}")
with torch.no_grad():
    scores = user_emb.weight @ item_emb.weight.T
    top = scores.topk(5, dim=1).indices
    hits = clicked.gather(1, top).any(1).float().mean()
print("hit@5", f"{hits.item():.4f}", top[:3].tolist())
