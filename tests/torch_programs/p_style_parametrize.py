"""Optimising an input image and constraining weights, as users write it. Neural style
transfer on generated 24x24 images: a small fixed random CNN as the feature extractor
(requires_grad_(False), eval), content loss on one layer and Gram-matrix style losses on
two, the image itself the parameter of Adam, clamped in place under no_grad. Then
spectral_norm (the old hook form and the parametrization), orthogonal parametrization
trained to stay orthogonal, weight_norm, a custom parametrization registered with
register_parametrization, and pruning with torch.nn.utils.prune (l1_unstructured,
random_structured with its seeded mask, global_unstructured, remove)."""
# same-source tolerance: 3e-4 1e-5
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
from torch.nn.utils import prune
from torch.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm

torch.manual_seed(13)
grid = torch.linspace(-1, 1, 24)
yy, xx = torch.meshgrid(grid, grid, indexing="ij")
content = torch.stack([xx, yy, xx * yy]).unsqueeze(0) * 0.5 + 0.5
style = (torch.sin(6 * xx) * torch.cos(6 * yy)).expand(1, 3, 24, 24) * 0.5 + 0.5
print("data", [round(v, 6) for v in content[0, :, 3, 5].tolist()])

features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1),
                         nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
features.eval().requires_grad_(False)


def activations(img):
    outs, h = [], img
    for i, layer in enumerate(features):
        h = layer(h)
        if i in (1, 3, 6):
            outs.append(h)
    return outs


def gram(f):
    b, c, h, w = f.shape
    f = f.view(b, c, h * w)
    return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)


target_content = activations(content)[1].detach()
target_grams = [gram(f).detach() for f in activations(style)]
image = content.clone().requires_grad_(True)
opt = torch.optim.Adam([image], lr=0.03)
for step in range(25):
    acts = activations(image)
    c_loss = F.mse_loss(acts[1], target_content)
    s_loss = sum(F.mse_loss(gram(a), g) for a, g in zip(acts, target_grams))
    loss = c_loss + 1e3 * s_loss
    opt.zero_grad()
    loss.backward()
    opt.step()
    with torch.no_grad():
        image.clamp_(0, 1)
    if step % 8 == 0:
        print("style", step, f"{c_loss.item():.4e}", f"{1e6 * s_loss.item():.5f}")
print("image", [round(v, 5) for v in image[0, :, 10, 10].tolist()])

# weight constraints
x = torch.randn(16, 6)
sn_old = nn.utils.spectral_norm(nn.Linear(6, 6))
sn_new = spectral_norm(nn.Linear(6, 6))
for m in (sn_old, sn_new):
    m.train()
    for _ in range(5):
        m(x)
    m.eval()
sv_old = torch.linalg.matrix_norm(sn_old.weight.detach(), ord=2)
sv_new = torch.linalg.matrix_norm(sn_new.weight.detach(), ord=2)
print("spectral", f"{sv_old.item():.4f}", f"{sv_new.item():.4f}",
      sorted(k for k in sn_new.state_dict()))

orth = orthogonal(nn.Linear(6, 6))
opt = torch.optim.SGD(orth.parameters(), lr=0.1)
target = torch.randn(16, 6)
for step in range(10):
    loss = F.mse_loss(orth(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
w = orth.weight
print("orthogonal", f"{loss.item():.6f}", f"{(w @ w.T - torch.eye(6)).abs().max().item():.2e}")

wn = weight_norm(nn.Linear(6, 3), dim=0)
print("weight norm", [round(v, 5) for v in wn.parametrizations.weight.original0.flatten().tolist()],
      list(wn.parametrizations.weight.original1.shape))


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(0, 1)


sym = nn.Linear(4, 4)
parametrize.register_parametrization(sym, "weight", Symmetric())
print("symmetric", torch.equal(sym.weight, sym.weight.T), parametrize.is_parametrized(sym),
      type(sym).__name__)
with parametrize.cached():
    print("cached", torch.equal(sym.weight, sym.weight))
parametrize.remove_parametrizations(sym, "weight", leave_parametrized=True)
print("removed", parametrize.is_parametrized(sym), torch.equal(sym.weight, sym.weight.T))

# pruning
net = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
prune.l1_unstructured(net[0], name="weight", amount=0.5)
print("l1", int((net[0].weight == 0).sum()), sorted(n for n, _ in net[0].named_buffers()))
prune.random_structured(net[2], name="weight", amount=0.34, dim=0)
print("rows", (net[2].weight_mask.sum(1) == 0).tolist())
prune.global_unstructured([(net[0], "bias"), (net[2], "bias")],
                          pruning_method=prune.L1Unstructured, amount=3)
print("global", int((net[0].bias == 0).sum() + (net[2].bias == 0).sum()))
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(5):
    loss = F.cross_entropy(net(x), torch.arange(16) % 3)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("pruned training", f"{loss.item():.6f}", int((net[0].weight == 0).sum()))
prune.remove(net[0], "weight")
print("after remove", prune.is_pruned(net[0]), sorted(n for n, _ in net[0].named_parameters()))
