"""The switches at the top of a real training script, on a machine without a GPU: the device
chosen by torch.cuda.is_available() (and MPS's check), cudnn.benchmark/deterministic, TF32 and
float32 matmul precision, thread count, deterministic algorithms, CUDA seeding and cache
calls, torch.compile behind a flag (the eager backend, for a machine without a compiler),
autocast and GradScaler behind an AMP flag that is off on the CPU, pin_memory only for CUDA,
.to(device, non_blocking=True), inference_mode for evaluation, and the default dtype."""
# same-source tolerance: 1e-4 1e-6
# same-source exact: ^(device|flags|threads|dtype)
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

COMPILE = True
device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cpu" and torch.backends.mps.is_available():
    device = "mps"
use_amp = device == "cuda"
amp_dtype = torch.bfloat16 if device == "cuda" else torch.float32
print("device", device, torch.device(device), torch.device(device).type, torch.cuda.device_count(), use_amp)

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = False
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
torch.set_float32_matmul_precision("high")
print("flags", torch.backends.cudnn.benchmark, torch.backends.cuda.matmul.allow_tf32,
      torch.get_float32_matmul_precision(), torch.backends.cudnn.is_available() in (True, False))
torch.set_float32_matmul_precision("highest")
torch.set_num_threads(1)
print("threads", torch.get_num_threads())
torch.use_deterministic_algorithms(True, warn_only=True)
print("flags", torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled())
torch.use_deterministic_algorithms(False)

torch.manual_seed(3)
torch.cuda.manual_seed_all(3)
if device == "cuda":
    torch.cuda.empty_cache()
X = torch.randn(96, 10)
y = (X[:, :3].sum(1) > 0).long()
loader = DataLoader(TensorDataset(X, y), batch_size=16, shuffle=True, pin_memory=(device == "cuda"),
                    num_workers=0, generator=torch.Generator().manual_seed(1))

model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.1), nn.Linear(32, 2)).to(device)
print("device", next(model.parameters()).device, next(model.parameters()).is_cuda, X.to(device).device.type)
if COMPILE:
    model = torch.compile(model, backend="eager")
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
scaler = torch.amp.GradScaler(device, enabled=use_amp)
print("flags", scaler.is_enabled(), torch.is_autocast_enabled())

for epoch in range(3):
    model.train()
    total = 0.0
    for xb, yb in loader:
        xb, yb = xb.to(device, non_blocking=True), yb.to(device, non_blocking=True)
        with torch.autocast(device_type=device, dtype=amp_dtype, enabled=use_amp):
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(opt)
        scaler.update()
        total += loss.item()
    print(f"epoch {epoch} loss {total / len(loader):.6f} scale {scaler.get_scale()}")

model.eval()
with torch.inference_mode():
    logits = model(X.to(device))
    print("inference", logits.requires_grad, f"{(logits.argmax(1) == y).float().mean().item():.4f}",
          [round(v, 5) for v in logits[0].tolist()])
with torch.no_grad(), torch.autocast("cpu", enabled=False):
    print("autocast off", model(X[:2]).dtype == torch.float32, torch.is_autocast_enabled())
raw = getattr(model, "_orig_mod", model)  # the module under torch.compile's wrapper
state = raw.state_dict()
print("state", list(state)[:2], state["0.weight"].device.type)

torch.set_default_dtype(torch.float64)
print("dtype", torch.get_default_dtype() == torch.float64, torch.tensor([1.5]).dtype == torch.float64,
      torch.zeros(2).dtype == torch.float64)
torch.set_default_dtype(torch.float32)
print("dtype", torch.get_default_dtype() == torch.float32, torch.randn(2).dtype == torch.float32)
