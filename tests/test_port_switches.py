"""Port test: the scaffolding of a GPT training script (distributed guard, TF32 and cuDNN
flags, autocast context, loss scaler, compile, fused AdamW, checkpoint of the whole model),
run by PyTorch and by minigrad (passed in as `torch`) from the same weights on a CPU; the loss
curves must agree and the checkpoint must reload."""
import inspect
import io
import os
from contextlib import nullcontext

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def gpt_scaffolding_program(torch, X, Y, init=None, steps=12):
    nn = torch.nn
    ddp = int(os.environ.get("RANK", -1)) != -1  # torchrun sets RANK; not here
    if ddp:
        torch.distributed.init_process_group(backend="nccl")
    master_process = not (torch.distributed.is_available()
                          and torch.distributed.is_initialized()) or \
        torch.distributed.get_rank() == 0
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = "cuda" if torch.cuda.is_available() else "cpu"
    device_type = "cuda" if "cuda" in device else "cpu"
    dtype = "float32"
    ptdtype = {"float32": torch.float32, "float16": torch.float16}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(device_type=device_type,
                                                                        dtype=ptdtype)
    torch.manual_seed(1337)

    model = nn.Sequential(nn.Linear(X.shape[1], 16), nn.GELU(), nn.LayerNorm(16),
                          nn.Linear(16, 1))
    if init is not None:
        model.load_state_dict({k: torch.tensor(v) for k, v in init.items()})
    start = state_numpy(model)
    model.to(device)
    scaler = torch.amp.GradScaler(device_type, enabled=(dtype == "float16"))
    fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-2, betas=(0.9, 0.95),
                                  weight_decay=0.1, fused=fused_available and device_type == "cuda")
    model = torch.compile(model, disable=True)  # PyTorch's compiler would take seconds here
    if ddp:
        model = nn.parallel.DistributedDataParallel(model)
    x, y = torch.tensor(X).to(device), torch.tensor(Y).to(device)
    losses = []
    for _ in range(steps):
        with ctx:
            loss = ((model(x) - y) ** 2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if device_type == "cuda":
            torch.cuda.synchronize()
        losses.append(loss.item())
    buf = io.BytesIO()
    if master_process:
        torch.save({"model": model, "optimizer": optimizer.state_dict()}, buf)
    buf.seek(0)
    back = torch.load(buf, weights_only=False)["model"]
    same = bool(((back(x) - model(x)).abs().max() == 0).item())
    return {"init": start, "losses": losses, "reloaded": same}


def test_gpt_scaffolding_runs_unchanged(torch):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((64, 5)).astype(np.float32)
    Y = (X[:, :1] * 0.5 - X[:, 1:2] ** 2).astype(np.float32)
    expected, got = run_both(gpt_scaffolding_program, torch, X, Y)
    assert_curves_match("gpt-scaffolding", expected["losses"], got["losses"], rtol=1e-4)
    assert expected["reloaded"] and got["reloaded"]
