"""A tiny U-Net denoiser on generated images: Conv2d, BatchNorm2d, active Dropout2d,
MaxPool2d with return_indices and MaxUnpool2d, ConvTranspose2d, F.interpolate, PixelShuffle,
skip connections by torch.cat; Adam with amsgrad under OneCycleLR; printed tensor reprs. No
bias before the BatchNorm: its gradient there is rounding noise, which Adam amplifies."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^lr
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(29)

# Clean images: smooth blobs; noisy inputs: the images plus Gaussian noise.
yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
centers = torch.rand(24, 2) * 1.2 - 0.6
clean = torch.exp(-((xx - centers[:, 0, None, None]) ** 2 + (yy - centers[:, 1, None, None]) ** 2)
                  / 0.1).unsqueeze(1)
noisy = clean + 0.2 * torch.randn_like(clean)
print("data", clean[0, 0, 8, ::3].tolist(), noisy[1, 0, 0, :3].tolist())


class TinyUNet(nn.Module):
    def __init__(self, c=8):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, c, 3, padding=1, bias=False), nn.BatchNorm2d(c),
                                 nn.ReLU())
        self.pool = nn.MaxPool2d(2, return_indices=True)
        self.mid = nn.Sequential(nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.Dropout2d(0.2))
        self.unpool = nn.MaxUnpool2d(2)
        self.up = nn.ConvTranspose2d(2 * c, c, kernel_size=2, stride=2)
        self.shuffle = nn.Sequential(nn.Conv2d(2 * c, 4, 3, padding=1), nn.PixelShuffle(2))
        self.out = nn.Conv2d(2 * c + 1, 1, 1)

    def forward(self, x):
        e = self.enc(x)
        p, idx = self.pool(e)
        m = self.mid(p)
        u = self.up(m) + self.unpool(p, idx)
        s = F.interpolate(self.shuffle(m), size=x.shape[-2:], mode="bilinear", align_corners=False)
        return self.out(torch.cat([u, e, s[:, :1]], dim=1))


model = TinyUNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-2, amsgrad=True)
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2, total_steps=10)
for step in range(10):
    model.train()
    idx = torch.randperm(24)[:8]
    loss = F.mse_loss(model(noisy[idx]), clean[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    print(f"step {step} loss {loss.item():.6f}")
    print(f"lr {sched.get_last_lr()[0]:.8f}")

model.eval()
with torch.no_grad():
    den = model(noisy)
    print("mse noisy", f"{F.mse_loss(noisy, clean).item():.6f}", "denoised",
          f"{F.mse_loss(den, clean).item():.6f}")
    print("pixels", [round(v, 5) for v in den[0, 0, 8, ::3].tolist()])
    up = F.interpolate(clean[:1, :, :4, :4], scale_factor=2, mode="nearest")
    print("nearest", up[0, 0, 0].tolist())
    print(F.interpolate(torch.arange(4.0).view(1, 1, 4), scale_factor=1.5, mode="linear"))
x = torch.tensor([[0.5, -1.25], [2.0, 0.0]], requires_grad=True)
print(x * 2)
print(F.pixel_shuffle(torch.arange(8.0).view(1, 4, 1, 2), 2))
print(model.out.weight.shape, model.up.weight.shape)
