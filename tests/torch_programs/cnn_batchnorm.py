"""A small CNN with BatchNorm and pooling on generated 12x12 images (a horizontal, vertical or
diagonal bar in noise): SGD with Nesterov momentum and weight decay, CosineAnnealingLR,
evaluation with the running statistics, the batch-norm buffers printed."""
# same-source tolerance: 2e-4 1e-5
# same-source exact: ^pixels
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)


def make_images(n):
    images = torch.randn(n, 1, 12, 12) * 0.3
    kinds = torch.randint(0, 3, (n,))
    offsets = torch.randint(2, 10, (n,))
    for i in range(n):
        k, o = kinds[i].item(), offsets[i].item()
        if k == 0:
            images[i, 0, o, :] += 1.0
        elif k == 1:
            images[i, 0, :, o] += 1.0
        else:
            images[i, 0] += torch.eye(12)
    return images, kinds


train_x, train_y = make_images(192)
test_x, test_y = make_images(64)
print("pixels", train_x[0, 0, 5].tolist())

model = nn.Sequential(
    nn.Conv2d(1, 8, kernel_size=3, padding=1),
    nn.BatchNorm2d(8),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(8, 16, kernel_size=3),
    nn.BatchNorm2d(16),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(16, 3),
)
loader = DataLoader(TensorDataset(train_x, train_y), batch_size=32, shuffle=True)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                            weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=5)

for epoch in range(5):
    model.train()
    losses = []
    for images, targets in loader:
        out = model(images)
        loss = F.cross_entropy(out, targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    scheduler.step()
    print(f"epoch {epoch}", " ".join(f"{l:.5f}" for l in losses))

model.eval()
with torch.no_grad():
    logits = model(test_x)
    pred = logits.argmax(dim=1)
accuracy = (pred == test_y).float().mean().item()
print("test accuracy", accuracy)
print("predictions", pred.tolist())
bn = model[1]
print("running_mean", [round(v, 5) for v in bn.running_mean.tolist()])
print("running_var", [round(v, 5) for v in bn.running_var.tolist()])
print("num_batches_tracked", bn.num_batches_tracked.item())
print("weight norms", [round(p.norm().item(), 5) for p in model.parameters()])
