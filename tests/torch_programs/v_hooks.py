"""The hooks a user prints to look inside a small network: register_forward_hook,
register_full_backward_hook, a tensor's register_hook (one returning a replacement gradient),
handles removed before training with SGD and momentum."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^data
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(11)


class TanhNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)


X = torch.randn(48, 8)
w_true = torch.randn(8, 3)
y = (X @ w_true).argmax(dim=1)
print("data", X[0].tolist(), y[:12].tolist())

model = TanhNet()
seen = []


def forward_hook(module, inputs, output):
    seen.append(f"forward {type(module).__name__} in {tuple(inputs[0].shape)} "
                f"out {tuple(output.shape)} mean {output.mean().item():.5f}")


def backward_hook(module, grad_input, grad_output):
    seen.append(f"backward {type(module).__name__} grad_out {tuple(grad_output[0].shape)} "
                f"norm {grad_output[0].norm().item():.5f} grad_in_none {grad_input[0] is None}")


handles = [model.fc1.register_forward_hook(forward_hook),
           model.fc2.register_forward_hook(forward_hook),
           model.fc2.register_full_backward_hook(backward_hook)]

x = torch.randn(4, 8, requires_grad=True)
x.register_hook(lambda g: seen.append(f"x.grad hook norm {g.norm().item():.5f}"))
out = model(x)
out.register_hook(lambda g: g * 2)  # a hook may return a replacement gradient
out.sum().backward()
for line in seen:
    print(line)
print("x.grad", [round(v, 5) for v in x.grad[0].tolist()])
print("fc1 grad norm", f"{model.fc1.weight.grad.norm().item():.5f}")

for h in handles:
    h.remove()
seen.clear()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
for step in range(30):
    opt.zero_grad()
    loss = F.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    if step % 10 == 9:
        print(f"step {step} loss {loss.item():.5f}")
print("hooks removed, seen", len(seen))
with torch.no_grad():
    print("accuracy", (model(X).argmax(1) == y).sum().item(), "of", len(y))
