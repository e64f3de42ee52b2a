"""Optimizer state dicts across the two libraries: a run resumed in the other library (from
the state dict itself, or from a `torch.save` file read by `minigrad.load`) continues exactly
as the uninterrupted PyTorch run. Only the type of Adam's `step` differs (an int here, a 0-d
float32 tensor in PyTorch); each library reads the other's."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

KW = dict(lr=0.1, weight_decay=0.01, amsgrad=True)
START = np.random.default_rng(0).standard_normal(5).astype(np.float32)


def _run(lib, name, p, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        (p * p * p).sum().backward()
        opt.step()


def _start(lib, name, values=START):
    p = lib.tensor(values.copy(), requires_grad=True)
    return p, getattr(lib.optim, name)([p], **KW)


def _to_torch(state_dict):
    """A minigrad optimizer state dict with its tensors as PyTorch tensors (no file format)."""
    state = {i: {k: torch.tensor(v.numpy()) if isinstance(v, mg.Tensor) else v
                 for k, v in s.items()} for i, s in state_dict["state"].items()}
    return {"state": state, "param_groups": state_dict["param_groups"]}


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_resume_in_the_other_library(name, tmp_path):
    tp, topt = _start(torch, name)
    _run(torch, name, tp, topt, 4)
    want = tp.detach().numpy()

    half_p, half = _start(torch, name)
    _run(torch, name, half_p, half, 2)
    assert isinstance(half.state_dict()["state"][0]["step"], torch.Tensor)
    torch.save(half.state_dict(), tmp_path / "opt.pt")
    for loaded in (half.state_dict(), mg.load(tmp_path / "opt.pt")):
        mp, mopt = _start(mg, name, half_p.detach().numpy())
        mopt.load_state_dict(loaded)
        assert mopt.state_dict()["state"][0]["step"] == 2
        _run(mg, name, mp, mopt, 2)
        np.testing.assert_allclose(mp.numpy(), want, rtol=1e-6, atol=1e-6)

    mp, mopt = _start(mg, name)
    _run(mg, name, mp, mopt, 2)
    tp2, topt2 = _start(torch, name, mp.numpy())
    topt2.load_state_dict(_to_torch(mopt.state_dict()))
    _run(torch, name, tp2, topt2, 2)
    np.testing.assert_allclose(tp2.detach().numpy(), want, rtol=1e-6, atol=1e-6)
    assert float(topt2.state[tp2]["step"]) == 4
