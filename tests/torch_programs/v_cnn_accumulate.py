"""A text-free CNN on generated images and signals: Conv1d and Conv2d, GroupNorm and
LayerNorm, Dropout2d (in eval), AdaptiveAvgPool2d, torch.flatten; trained with gradient
accumulation over micro-batches (loss / k, optimizer.zero_grad(set_to_none=True))."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(21)

# Images: a bright square in one of four quadrants (the label) over noise; a 1-D signal too.
n = 64
labels = torch.randint(0, 4, (n,))
images = 0.3 * torch.randn(n, 1, 12, 12)
for i in range(n):
    r, c = divmod(labels[i].item(), 2)
    images[i, 0, r * 6 + 1:r * 6 + 5, c * 6 + 1:c * 6 + 5] += 1.0
signals = torch.sin(torch.arange(16.0) * (labels.float().unsqueeze(1) + 1) * 0.4).unsqueeze(1)
print("data", images[0, 0, 1, :6].tolist(), labels[:10].tolist())


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.gn = nn.GroupNorm(2, 8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.drop = nn.Dropout2d(0.25)
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.conv1d = nn.Conv1d(1, 4, kernel_size=5, padding=2)
        self.ln = nn.LayerNorm(16 * 4 + 4)
        self.head = nn.Linear(16 * 4 + 4, 4)

    def forward(self, img, sig):
        x = F.relu(self.gn(self.conv1(img)))
        x = self.drop(F.relu(self.conv2(x)))
        x = torch.flatten(self.pool(x), 1)
        s = F.relu(self.conv1d(sig)).mean(dim=2)
        return self.head(self.ln(torch.cat([x, s], dim=1)))


model = Net()
model.eval()  # Dropout2d off: only the accumulation is trained here
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True)
accum, micro = 4, 8
for step in range(6):
    optimizer.zero_grad(set_to_none=True)
    total = 0.0
    for k in range(accum):
        lo = ((step * accum + k) * micro) % n
        out = model(images[lo:lo + micro], signals[lo:lo + micro])
        loss = F.cross_entropy(out, labels[lo:lo + micro]) / accum
        loss.backward()
        total += loss.item()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
    optimizer.step()
    print(f"step {step} loss {total:.6f} grad_norm {grad_norm.item():.5f}")
print("grad none after zero_grad", end=" ")
optimizer.zero_grad(set_to_none=True)
print(all(p.grad is None for p in model.parameters()))

with torch.no_grad():
    logits = model(images, signals)
    print("accuracy", (logits.argmax(1) == labels).sum().item(), "of", n)
    print("logits", [round(v, 5) for v in logits[0].tolist()])
    print("pooled shape", tuple(model.pool(torch.ones(2, 3, 5, 7)).shape),
          torch.flatten(torch.ones(2, 3, 4), start_dim=0, end_dim=1).shape)
print("gn", [round(v, 5) for v in model.gn.weight[:4].tolist()],
      "ln", f"{model.ln.bias.norm().item():.5f}")
