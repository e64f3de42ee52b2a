"""SimCLR-style contrastive learning on generated points: two noisy views of each sample, an
encoder with a projection head, the NT-Xent loss written by hand (F.normalize, a similarity
matrix, a bool eye mask filled with -inf, a temperature, cross_entropy over the rows), then a
linear probe on the frozen features and cosine similarities."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)
N, D = 64, 10
centers = torch.randn(4, D) * 2
labels = torch.randint(0, 4, (N,))
x = centers[labels] + 0.3 * torch.randn(N, D)
print("data", labels[:8].tolist(), x[0, :3].tolist())


def augment(x):
    scale = 1 + 0.1 * torch.randn(x.size(0), 1)
    return x * scale + 0.2 * torch.randn_like(x)


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(D, 32, bias=False), nn.BatchNorm1d(32), nn.ReLU(),
                                      nn.Linear(32, 16))
        self.head = nn.Sequential(nn.ReLU(), nn.Linear(16, 8))

    def forward(self, x):
        h = self.backbone(x)
        return h, self.head(h)


def nt_xent(z1, z2, temperature=0.5):
    z = F.normalize(torch.cat([z1, z2], dim=0), dim=1)
    sim = z @ z.t() / temperature
    mask = torch.eye(z.size(0), dtype=torch.bool)
    sim = sim.masked_fill(mask, float("-inf"))
    n = z1.size(0)
    targets = torch.cat([torch.arange(n, 2 * n), torch.arange(0, n)])
    return F.cross_entropy(sim, targets)


model = Encoder()
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-2)
for step in range(30):
    _, z1 = model(augment(x))
    _, z2 = model(augment(x))
    loss = nt_xent(z1, z2)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 10 == 0:
        print("step", step, f"{loss.item():.6f}", f"{model.head[1].weight.grad.norm().item():.6f}")

model.eval()
with torch.no_grad():
    h, z = model(x)
    zn = F.normalize(z, dim=1)
    sim = zn @ zn.T
    same = labels.unsqueeze(0) == labels.unsqueeze(1)
    print("mean sim same/other", sim[same].mean().item(), sim[~same].mean().item())
    print("cosine", F.cosine_similarity(z[:3], z[3:6], dim=1).tolist())
    print("nearest", sim.fill_diagonal_(-2).argmax(dim=1)[:10].tolist())
    print("running", model.backbone[1].running_mean[:3].tolist(), model.backbone[1].num_batches_tracked.item())

probe = nn.Linear(16, 4)
popt = torch.optim.SGD(probe.parameters(), lr=0.5, momentum=0.9)
feats = h.detach()
for step in range(40):
    logits = probe(feats)
    loss = F.cross_entropy(logits, labels, label_smoothing=0.1)
    popt.zero_grad()
    loss.backward()
    popt.step()
print("probe", f"{loss.item():.6f}", (logits.argmax(1) == labels).float().mean().item())
