"""Optimizers' `maximize=` and Adam's `decoupled_weight_decay=` against PyTorch: the same
parameters after a few steps, on each update path (compiled, flat batch of small parameters,
cache-sized slices of a large one), and the same param_groups keys in the state dict."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import kernels

torch = pytest.importorskip("torch")

CASES = [
    ("SGD", dict(lr=0.1, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.1, maximize=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.5, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01, amsgrad=True, maximize=True)),
]
SHAPES = [(3, 4), (5,), (70_000,)]  # two small ones (batched) and one walked in slices


def _steps(lib, name, kw, arrays, steps=3):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    opt = getattr(lib.optim, name)(params, **kw)
    for _ in range(steps):
        opt.zero_grad()
        sum(((p * p * p) / 3 - p).sum() for p in params).backward()  # grad p^2 - 1: both signs
        opt.step()
    return [p.detach().numpy() for p in params], opt


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("name,kw", CASES)
def test_update_matches_pytorch(name, kw, backend, monkeypatch):
    monkeypatch.setattr(kernels.policy, "_backend", backend)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    want, t_opt = _steps(torch, name, kw, arrays)
    got, m_opt = _steps(mg, name, kw, arrays)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    t_group, m_group = t_opt.state_dict()["param_groups"][0], m_opt.state_dict()["param_groups"][0]
    assert sorted(m_group) == sorted(t_group)
    for k in ("maximize", "decoupled_weight_decay"):
        assert m_group.get(k) == t_group.get(k)


def test_maximize_climbs():
    w = mg.zeros(1, requires_grad=True)
    opt = mg.optim.SGD([w], lr=0.1, maximize=True)
    (-(w - 1) ** 2).sum().backward()
    opt.step()
    assert w.item() == pytest.approx(0.2)
