"""Muon against torch.optim.Muon: the same weights and momentum buffers after several steps
(Nesterov or not, weight decay, both rate adjustments, wide and tall matrices, float32 and
float64), the Newton-Schulz iteration in bfloat16 as PyTorch's, state dicts across the two
libraries, and PyTorch's errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.optim.muon import bfloat16_round, zeropower_via_newtonschulz

torch = pytest.importorskip("torch")
from torch.optim._muon import _zeropower_via_newtonschulz  # noqa: E402

SHAPES = [(6, 10), (12, 4)]  # wide and tall
CONFIGS = [dict(), dict(lr=0.02, nesterov=False, momentum=0.9),
           dict(lr=0.01, weight_decay=0.0, adjust_lr_fn="match_rms_adamw"),
           dict(lr=0.05, ns_steps=3, ns_coefficients=(3.0, -3.2, 1.2), eps=1e-5)]


def _run(lib, arrays, kw, steps, start=0, state=None):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    opt = lib.optim.Muon(params, **kw)
    if state is not None:
        opt.load_state_dict(state)
    for t in range(start, start + steps):
        rng = np.random.default_rng(50 + t)
        for p in params:
            p.grad = lib.tensor(rng.standard_normal(p.shape).astype(p.detach().numpy().dtype))
        opt.step()
    return [p.detach().numpy().copy() for p in params], opt


def test_bfloat16_rounding_and_newton_schulz_as_pytorch():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.standard_normal(500), [0.0, -0.0, 1e-30, 3.0e38]]).astype(np.float32)
    np.testing.assert_array_equal(bfloat16_round(x), torch.tensor(x).bfloat16().float().numpy())
    for shape in [(4, 6), (8, 3), (16, 16)]:
        g = rng.standard_normal(shape).astype(np.float32)
        want = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.775, 2.0315), 5, 1e-7)
        got = zeropower_via_newtonschulz(g, (3.4445, -4.775, 2.0315), 5, 1e-7)
        np.testing.assert_allclose(got, want.float().numpy(), rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", CONFIGS)
def test_steps_match_pytorch(kw, dtype):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    want, t_opt = _run(torch, arrays, kw, steps=4)
    got, m_opt = _run(mg, arrays, kw, steps=4)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)  # bfloat16 updates
    for i, state in t_opt.state_dict()["state"].items():
        np.testing.assert_allclose(m_opt.state_dict()["state"][i]["momentum_buffer"].numpy(),
                                   state["momentum_buffer"].numpy(), rtol=1e-6, atol=1e-6)
    assert m_opt.state_dict()["param_groups"] == t_opt.state_dict()["param_groups"]


def test_state_dict_across_libraries():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    want, _ = _run(torch, arrays, CONFIGS[1], steps=4)
    half, t_opt = _run(torch, arrays, CONFIGS[1], steps=2)
    got, _ = _run(mg, half, CONFIGS[1], steps=2, start=2, state=t_opt.state_dict())
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
    half, m_opt = _run(mg, arrays, CONFIGS[1], steps=2)
    state = m_opt.state_dict()
    state = {"state": {i: {k: torch.tensor(v.numpy()) for k, v in s.items()}
                       for i, s in state["state"].items()},
             "param_groups": state["param_groups"]}
    got, _ = _run(torch, half, CONFIGS[1], steps=2, start=2, state=state)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda lib: lib.optim.Muon([lib.ones(3, requires_grad=True)]),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], lr=-1.0),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], momentum=-0.5),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], weight_decay=-0.1),
    lambda lib: lib.optim.Muon([lib.ones(2, 2, requires_grad=True)], adjust_lr_fn="unit")])
def test_errors_as_pytorch(make):
    with pytest.raises(ValueError) as want:
        make(torch)
    with pytest.raises(ValueError) as got:
        make(mg)
    mine, theirs = str(got.value), str(want.value)
    if "size:" in theirs:  # PyTorch prints torch.Size([3]), minigrad a shape tuple
        assert mine.split("size:")[0] == theirs.split("size:")[0] and mine.endswith("(3,)")
    else:
        assert mine.startswith("Muon: ") and mine.lower().endswith(theirs.lower())
