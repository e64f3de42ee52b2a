"""A small ResNet-style CNN on generated 16x16 images: residual blocks with grouped and dilated
3x3 convolutions, BatchNorm2d switched between train and eval, AdaptiveAvgPool2d, weight decay
only on conv/linear weights through parameter groups; then MaxPool2d(return_indices=True) with
MaxUnpool2d, F.interpolate (nearest and bilinear) and fractional max pooling in a small decoder."""
# same-source tolerance: 3e-4 1e-5
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(23)
N = 32
labels = torch.randint(0, 3, (N,))
grid = torch.linspace(-1, 1, 16)
yy, xx = torch.meshgrid(grid, grid, indexing="ij")
patterns = torch.stack([torch.sin(3 * xx), torch.cos(3 * yy), torch.sin(2 * (xx + yy))])
images = patterns[labels].unsqueeze(1).repeat(1, 3, 1, 1) + 0.3 * torch.randn(N, 3, 16, 16)
print("data", labels[:8].tolist(), images[0, 0, 0, :3].tolist())


class Block(nn.Module):
    def __init__(self, c_in, c_out, stride=1, groups=1, dilation=1):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=dilation, dilation=dilation,
                               groups=groups, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1, groups=groups, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.short = nn.Identity() if stride == 1 and c_in == c_out else nn.Sequential(
            nn.Conv2d(c_in, c_out, 1, stride=stride, bias=False), nn.BatchNorm2d(c_out))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.short(x))


class ResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU())
        self.layer1 = Block(8, 8, groups=2)
        self.layer2 = Block(8, 16, stride=2, groups=4, dilation=2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(16, 3)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


model = ResNet()
decay = [p for n, p in model.named_parameters() if p.ndim > 1]
no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
opt = torch.optim.SGD([{"params": decay, "weight_decay": 5e-4}, {"params": no_decay, "weight_decay": 0.0}],
                      lr=0.05, momentum=0.9)
print("groups", len(decay), len(no_decay), sum(p.numel() for p in model.parameters()))
for step in range(12):
    model.train()
    idx = torch.randperm(N)[:16]
    out = model(images[idx])
    loss = F.cross_entropy(out, labels[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step % 4 == 0:
        model.eval()
        with torch.no_grad():
            acc = (model(images).argmax(1) == labels).float().mean().item()
        print("step", step, f"{loss.item():.6f}", acc, f"{model.stem[0].weight.grad.norm().item():.6f}")
bn = model.layer2.bn1
print("bn", bn.running_mean[:3].tolist(), bn.running_var[:3].tolist(), bn.num_batches_tracked.item())

# max-unpooling decoder
pool = nn.MaxPool2d(2, stride=2, return_indices=True)
unpool = nn.MaxUnpool2d(2, stride=2)
feat = torch.randn(2, 4, 8, 8, requires_grad=True)
pooled, indices = pool(feat)
restored = unpool(pooled, indices, output_size=feat.size())
print("unpool", pooled.shape, indices[0, 0, 0].tolist(), (restored != 0).sum().item())
up_n = F.interpolate(pooled, scale_factor=2, mode="nearest")
up_b = F.interpolate(pooled, size=(8, 8), mode="bilinear", align_corners=False)
up_c = F.interpolate(pooled, size=(7, 7), mode="bilinear", align_corners=True)
(restored.sum() + up_b.pow(2).sum() + up_c.mean() + up_n.abs().sum()).backward()
print("interp", up_b[0, 0, 0, :4].tolist(), up_c[1, 2, 3, :3].tolist())
print("grad", feat.grad[0, 0, :2].tolist(), feat.grad.abs().sum().item())

# fractional max pooling: the window offsets are drawn from the global generator
frac = nn.FractionalMaxPool2d(2, output_ratio=(0.7, 0.6), return_indices=True)
fy, fi = frac(feat)
print("fractional", fy.shape, fi[1, 3].tolist(), fy[0, 1, 0].tolist())
fz = F.fractional_max_pool2d(feat, (3, 2), output_size=(4, 5))
feat.grad = None
(fy.sum() + fz.pow(2).sum()).backward()
print("fractional grad", feat.grad[1, 0].sum().item(), torch.randint(0, 100, (4,)).tolist())
