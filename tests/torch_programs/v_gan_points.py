"""A GAN on 2-D points: generator and discriminator with their own Adam optimizers, the
generator's samples detached for the discriminator's step, BCEWithLogitsLoss against
torch.ones_like / torch.zeros_like labels."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^real
import math

import torch
import torch.nn as nn

torch.manual_seed(7)

# Real data: a ring of radius 2 with a little noise.
angles = torch.rand(512) * 2 * math.pi
real = torch.stack([2 * torch.cos(angles), 2 * torch.sin(angles)], dim=1)
real = real + 0.05 * torch.randn_like(real)
print("real", real[:3].tolist())

G = nn.Sequential(nn.Linear(4, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                  nn.Linear(32, 2))
D = nn.Sequential(nn.Linear(2, 32), nn.LeakyReLU(0.2), nn.Linear(32, 32), nn.LeakyReLU(0.2),
                  nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()

batch = 64
for step in range(60):
    idx = torch.randint(0, real.size(0), (batch,))
    x_real = real[idx]
    z = torch.randn(batch, 4)
    fake = G(z)

    opt_d.zero_grad()
    d_real = D(x_real)
    d_fake = D(fake.detach())
    loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
    loss_d.backward()
    opt_d.step()

    opt_g.zero_grad()
    d_out = D(fake)
    loss_g = bce(d_out, torch.ones_like(d_out))
    loss_g.backward()
    opt_g.step()
    if step % 10 == 0 or step == 59:
        print(f"step {step} loss_d {loss_d.item():.6f} loss_g {loss_g.item():.6f} "
              f"g_grad_none {G[0].weight.grad is None}")

G.eval()
with torch.no_grad():
    samples = G(torch.randn(256, 4))
    radius = samples.norm(dim=1)
    print("sample radius mean", f"{radius.mean().item():.5f}", "std", f"{radius.std().item():.5f}")
    print("samples", [round(v, 4) for v in samples[:3].flatten().tolist()])
    print("D on real", f"{torch.sigmoid(D(real[:128])).mean().item():.5f}")
print("fake requires grad", fake.requires_grad, "detached", fake.detach().requires_grad)
