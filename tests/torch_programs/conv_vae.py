"""A convolutional VAE on generated 8x8 blobs: a Dataset subclass that builds its examples,
a WeightedRandomSampler with drop_last, Conv2d down and ConvTranspose2d up, the
reparameterisation with torch.randn_like, orthogonal_ and kaiming_uniform_ initialisation,
OneCycleLR, and images sampled from the prior."""
# same-source tolerance: 1e-3 1e-5
# same-source exact: ^centers
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler

torch.manual_seed(9)


class Blobs(Dataset):
    def __init__(self, n):
        grid = torch.arange(8).float()
        centers = torch.rand(n, 2) * 5 + 1.5
        width = torch.rand(n, 1, 1) + 0.8
        dy = (grid.view(1, 8, 1) - centers[:, 0].view(-1, 1, 1)) ** 2
        dx = (grid.view(1, 1, 8) - centers[:, 1].view(-1, 1, 1)) ** 2
        self.images = torch.exp(-(dx + dy) / (2 * width ** 2)).unsqueeze(1)
        self.big = (width.view(-1) > 1.3).long()

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        return self.images[i], self.big[i]


class VAE(nn.Module):
    def __init__(self, latent=4):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                 nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.LeakyReLU(0.1),
                                 nn.Flatten())
        self.mu = nn.Linear(64, latent)
        self.logvar = nn.Linear(64, latent)
        self.dec_in = nn.Linear(latent, 64)
        self.dec = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ELU(),
                                 nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1))

    def forward(self, x):
        h = self.enc(x)
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        return self.decode(z), mu, logvar

    def decode(self, z):
        return self.dec(F.relu(self.dec_in(z)).view(-1, 16, 2, 2))


def init(m):
    if isinstance(m, nn.Linear):
        nn.init.orthogonal_(m.weight)
        nn.init.constant_(m.bias, 0.0)
    elif isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        nn.init.kaiming_uniform_(m.weight, a=0.1, nonlinearity="leaky_relu")


data = Blobs(200)
print("centers", (torch.rand(2, 2) * 5 + 1.5).tolist())
print("blob row", data.images[0, 0, 4].tolist())
weights = torch.where(data.big == 1, 2.0, 1.0)
sampler = WeightedRandomSampler(weights, num_samples=160, replacement=True)
loader = DataLoader(data, batch_size=32, sampler=sampler, drop_last=True)
model = VAE()
model.apply(init)
epochs = 4
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=1e-2, epochs=epochs,
                                                steps_per_epoch=len(loader))
for epoch in range(epochs):
    total, bigs = 0.0, 0
    for images, big in loader:
        recon, mu, logvar = model(images)
        rec = F.binary_cross_entropy_with_logits(recon, images, reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = (rec + kld) / images.size(0)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
        total += loss.item()
        bigs += big.sum().item()
    print(f"epoch {epoch} loss {total / len(loader):.5f} big examples {bigs} "
          f"lr {scheduler.get_last_lr()[0]:.6f}")

model.eval()
with torch.no_grad():
    samples = torch.sigmoid(model.decode(torch.randn(3, 4)))
    print("sample sums", [round(v, 4) for v in samples.sum(dim=(1, 2, 3)).tolist()])
    print("brightest pixel", samples.view(3, -1).argmax(dim=1).tolist())
    _, mu, _ = model(data.images[:4])
    print("means", mu)
