"""A small Vision Transformer on generated 16x16 images of two kinds of stripes, as users write
it: patches embedded by a Conv2d with stride = patch size, a learned cls token and position
embedding, nn.TransformerEncoder(norm_first=True, activation="gelu", batch_first=True) with a
final LayerNorm, cross-entropy with label smoothing, AdamW with weight decay on the matrices
only, OneCycleLR stepped per batch and gradient clipping."""
# same-source tolerance: 2e-4 1e-5
# same-source exact: ^lr
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def make_images(n):
    labels = torch.randint(0, 3, (n,))
    grid = torch.arange(16).float()
    rows = torch.sin(grid * 0.8).view(1, 16, 1).expand(n, 16, 16)
    cols = torch.sin(grid * 0.8).view(1, 1, 16).expand(n, 16, 16)
    diag = torch.sin((grid.view(16, 1) + grid.view(1, 16)) * 0.5).expand(n, 16, 16)
    images = torch.where(labels.view(n, 1, 1) == 0, rows,
                         torch.where(labels.view(n, 1, 1) == 1, cols, diag))
    images = images + 0.3 * torch.randn(n, 16, 16)
    return images.unsqueeze(1), labels


x_train, y_train = make_images(96)
x_test, y_test = make_images(48)
print("data", x_train[0, 0, 0, :4].tolist(), y_train[:10].tolist())


class ViT(nn.Module):
    def __init__(self, patch=4, dim=32, depth=2, heads=4, classes=3):
        super().__init__()
        self.patch_embed = nn.Conv2d(1, dim, kernel_size=patch, stride=patch)
        n_patches = (16 // patch) ** 2
        self.cls_token = nn.Parameter(torch.zeros(1, 1, dim))
        self.pos_embed = nn.Parameter(torch.randn(1, n_patches + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=64, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, depth, norm=nn.LayerNorm(dim),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        tokens = self.patch_embed(x).flatten(2).transpose(1, 2)  # (B, N, D)
        cls = self.cls_token.expand(x.shape[0], -1, -1)
        tokens = torch.cat([cls, tokens], dim=1) + self.pos_embed
        return self.head(self.encoder(tokens)[:, 0])


model = ViT()
print("parameters", sum(p.numel() for p in model.parameters()))
# the same patch embedding by unfold: (B, 1*4*4, 16 patches) times the flattened kernels
patches = F.unfold(x_train[:2], kernel_size=4, stride=4).transpose(1, 2)  # (B, N, 16)
conv = model.patch_embed
by_unfold = patches @ conv.weight.flatten(1).T + conv.bias
by_conv = conv(x_train[:2]).flatten(2).transpose(1, 2)
print("unfold", list(patches.shape), torch.allclose(by_unfold, by_conv, atol=1e-5),
      [round(v, 5) for v in by_unfold[0, 3, :4].tolist()])
decay = [p for n, p in model.named_parameters() if p.ndim >= 2 and "embed" not in n]
no_decay = [p for n, p in model.named_parameters() if p.ndim < 2 or "embed" in n]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.05},
                         {"params": no_decay, "weight_decay": 0.0}], lr=3e-3)
epochs, batch = 4, 16
sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, epochs=epochs,
                                            steps_per_epoch=len(x_train) // batch)
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
gen = torch.Generator().manual_seed(1)
for epoch in range(epochs):
    model.train()
    order = torch.randperm(len(x_train), generator=gen)
    total = 0.0
    for i in range(0, len(x_train), batch):
        idx = order[i:i + batch]
        loss = criterion(model(x_train[idx]), y_train[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        total += loss.item()
    print("epoch", epoch, f"{total / (len(x_train) // batch):.5f}", f"{norm.item():.5f}")
    print("lr", sched.get_last_lr())

model.eval()
with torch.no_grad():
    logits = model(x_test)
    probs = F.softmax(logits, dim=-1)
    acc = (logits.argmax(-1) == y_test).float().mean()
print("test accuracy", f"{acc.item():.4f}")
print("probs", [round(v, 5) for v in probs[:3].flatten().tolist()])
print("cls", [round(v, 5) for v in model.cls_token.flatten()[:4].tolist()])
