"""Custom autograd Functions as PyTorch users write them, with tensor methods inside: a
straight-through sign (binarised weights), a clipped ReLU saving its input, a function with two
outputs, and a once_differentiable backward; trained for a few steps of Adam on a small
classification task, printing losses and gradients."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import Function, once_differentiable

torch.manual_seed(5)


class SignSTE(Function):
    """sign(x) forward; the gradient passes where |x| <= 1 (the straight-through estimator)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.sign(x)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x.abs() <= 1).to(grad.dtype)


class ClippedReLU(Function):
    @staticmethod
    def forward(ctx, x, top):
        ctx.top = top
        ctx.save_for_backward(x)
        return x.clamp(min=0, max=top)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        inside = (x > 0) & (x < ctx.top)
        return grad * inside.float(), None


class ScaleShift(Function):
    """(x * s, x + s) with s a learned scalar: two outputs, one node."""

    @staticmethod
    def forward(x, s):
        return x * s, x + s

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, s = inputs
        ctx.save_for_backward(x, s)

    @staticmethod
    def backward(ctx, g_scaled, g_shifted):
        x, s = ctx.saved_tensors
        gx = g_scaled * s + g_shifted
        gs = (g_scaled * x).sum() + g_shifted.sum()
        return gx, gs.reshape(s.shape)


class BinaryNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 12)
        self.fc2 = nn.Linear(12, 3)
        self.s = nn.Parameter(torch.ones(1))

    def forward(self, x):
        w = SignSTE.apply(self.fc1.weight)
        h = ClippedReLU.apply(F.linear(x, w, self.fc1.bias), 2.0)
        scaled, shifted = ScaleShift.apply(h, self.s)
        return self.fc2(scaled + 0.1 * shifted)


X = torch.randn(40, 6)
y = (X[:, 0] + X[:, 1] > 0).long() + (X[:, 2] > 1).long()
print("data", [round(v, 6) for v in X[0].tolist()], y[:10].tolist())

x = torch.tensor([-1.5, -0.5, 0.25, 1.5], requires_grad=True)
out = SignSTE.apply(x)
print("sign", out.tolist(), type(out.grad_fn).__name__)
out.sum().backward()
print("ste grad", x.grad.tolist())

a, b = ScaleShift.apply(x, torch.tensor([2.0], requires_grad=True))
print("two outputs", a.grad_fn.name(), b.grad_fn.name(), a.requires_grad, b.requires_grad)

model = BinaryNet()
opt = torch.optim.Adam(model.parameters(), lr=0.02)
for step in range(12):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.5f} "
              f"fc1 grad {model.fc1.weight.grad.norm().item():.5f} "
              f"s grad {model.s.grad.item():.5f}")
    opt.step()
print("final loss", f"{F.cross_entropy(model(X), y).item():.5f}")
print("accuracy", (model(X).argmax(1) == y).float().mean().item())
