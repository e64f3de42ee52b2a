"""Port test: PyTorch's Hogwild example (examples/mnist_hogwild): one model whose parameters
are moved into shared memory with `model.share_memory()`, trained by several real processes
at once (`torch.multiprocessing.Process`), each running SGD on its own data, without locks.
With one process the run is deterministic, so PyTorch and minigrad must end with the same
weights; with several, the updates interleave, so each library must end with weights that
every process moved (the parent sees them) and a lower loss. Processes are forked (the
example's default on Linux) and spawned (the example's choice with CUDA; a slow test, as
each child imports minigrad), where the model is pickled to the child and its parameters
travel by reference to their shared memory (tests/test_multiprocessing.py spawns too)."""
import gc
import importlib
import os

import numpy as np
import pytest


def data(nproc, n=48):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((nproc, n, 4)).astype(np.float32)
    y = np.tanh(x @ np.array([[0.5], [-1.0], [0.25], [2.0]], dtype=np.float32))
    return x, y.astype(np.float32)


def init_state():
    rng = np.random.default_rng(1)
    return {"0.weight": rng.uniform(-0.5, 0.5, (16, 4)), "0.bias": rng.uniform(-0.5, 0.5, 16),
            "2.weight": rng.uniform(-0.25, 0.25, (1, 16)), "2.bias": np.zeros(1)}


def train(rank, libname, model, x, y, steps, lr):
    """The example's `train`: the worker's own optimizer over the shared parameters."""
    torch = importlib.import_module(libname)
    F = torch.nn.functional
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    model.train()
    for _ in range(steps):
        optimizer.zero_grad()
        loss = F.mse_loss(model(x[rank]), y[rank])
        loss.backward()
        optimizer.step()


def hogwild(libname, method, nproc, steps=15, lr=0.05):
    torch = importlib.import_module(libname)
    mp = importlib.import_module(f"{libname}.multiprocessing")
    nn, F = torch.nn, torch.nn.functional
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    model.load_state_dict({k: torch.tensor(v, dtype=torch.float32)
                           for k, v in init_state().items()})
    model.share_memory()
    x, y = (torch.from_numpy(a) for a in data(nproc))
    with torch.no_grad():
        before = F.mse_loss(model(x.reshape(-1, 4)), y.reshape(-1, 1)).item()
    ctx = mp.get_context(method)
    processes = []
    for rank in range(nproc):
        p = ctx.Process(target=train, args=(rank, libname, model, x, y, steps, lr))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
    with torch.no_grad():
        after = F.mse_loss(model(x.reshape(-1, 4)), y.reshape(-1, 1)).item()
    shared = all(p.is_shared() for p in model.parameters())
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return [p.exitcode for p in processes], shared, before, after, state


def own_blocks():
    return [f for f in os.listdir("/dev/shm") if f.startswith(f"minigrad_{os.getpid()}_")]


def test_one_process_trains_the_shared_model_as_pytorch_does(torch):
    codes, shared, before, after, got = hogwild("minigrad", "fork", 1)
    # PyTorch's child is spawned: its OpenMP pool, started by any earlier test in this process,
    # would hang a forked child (GNU OpenMP is not fork-safe)
    t_codes, t_shared, t_before, t_after, want = hogwild("torch", "spawn", 1)
    assert codes == t_codes == [0] and shared and t_shared
    assert before == pytest.approx(t_before, rel=1e-6) and after == pytest.approx(t_after, rel=1e-5)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6)
    assert not np.allclose(got["0.weight"], init_state()["0.weight"])


@pytest.mark.parametrize("method", ["fork", pytest.param("spawn", marks=pytest.mark.slow)])
def test_hogwild_processes_update_one_model(method):
    gc.collect()
    held = set(own_blocks())
    codes, shared, before, after, state = hogwild("minigrad", method, 3)
    assert codes == [0, 0, 0] and shared
    assert after < 0.8 * before
    one = hogwild("minigrad", "fork", 1)[4]  # one process's updates alone move it less
    assert np.abs(state["0.weight"] - init_state()["0.weight"]).sum() > \
        np.abs(one["0.weight"] - init_state()["0.weight"]).sum()
    gc.collect()
    assert set(own_blocks()) <= held  # the model's shared memory went with it
