"""Knowledge distillation on a generated 3-class problem: a teacher trained first, then put in
eval mode and run under torch.no_grad; a smaller student trained on KLDivLoss(batchmean) between
log_softmax and softmax at a temperature, mixed with hard-label cross entropy, through a
DataLoader, with a StepLR schedule; agreement and per-class accuracy printed."""
# same-source tolerance: 2e-4 1e-6
# same-source exact: ^(data|lr)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(17)
n = 240
x = torch.randn(n, 6)
w = torch.randn(6, 3)
y = (x @ w + 0.3 * torch.randn(n, 3)).argmax(dim=1)
print("data", y[:10].tolist(), torch.bincount(y).tolist())
loader = DataLoader(TensorDataset(x, y), batch_size=48, shuffle=True)

teacher = nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 64), nn.ReLU(),
                        nn.Linear(64, 3))
opt = torch.optim.Adam(teacher.parameters(), lr=5e-3)
for epoch in range(6):
    for xb, yb in loader:
        loss = F.cross_entropy(teacher(xb), yb)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print("teacher", epoch, f"{loss.item():.6f}")

teacher.eval()
student = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
sopt = torch.optim.SGD(student.parameters(), lr=0.2, momentum=0.9, nesterov=True)
sched = torch.optim.lr_scheduler.StepLR(sopt, step_size=3, gamma=0.5)
kl = nn.KLDivLoss(reduction="batchmean")
class_weighted = nn.CrossEntropyLoss(weight=torch.bincount(y).float().reciprocal() * n / 3)
print("loss state", list(class_weighted.state_dict()), class_weighted.weight)
T, alpha = 3.0, 0.7
for epoch in range(8):
    for xb, yb in loader:
        with torch.no_grad():
            soft = F.softmax(teacher(xb) / T, dim=1)
        logits = student(xb)
        distill = kl(F.log_softmax(logits / T, dim=1), soft) * T * T
        hard = class_weighted(logits, yb)
        loss = alpha * distill + (1 - alpha) * hard
        sopt.zero_grad()
        loss.backward()
        sopt.step()
    sched.step()
    print("student", epoch, f"{distill.item():.6f}", f"{hard.item():.6f}")
    print("lr", sched.get_last_lr())

with torch.no_grad():
    t_pred = teacher(x).argmax(1)
    s_logits = student(x)
    s_pred = s_logits.argmax(1)
    print("accuracy", (t_pred == y).float().mean().item(), (s_pred == y).float().mean().item())
    print("agreement", (t_pred == s_pred).sum().item())
    for c in range(3):
        sel = y == c
        print("class", c, sel.sum().item(), (s_pred[sel] == c).float().mean().item())
    log_t = F.log_softmax(teacher(x[:4]), 1)
    print("kl none", F.kl_div(F.log_softmax(s_logits[:4], 1), log_t, reduction="none", log_target=True).sum(1).tolist())
    print("kl sum", F.kl_div(F.log_softmax(s_logits, 1), F.softmax(teacher(x), 1), reduction="sum").item())
