"""LBFGS against torch.optim.LBFGS: the same iterates on Rosenbrock's function and on a small
least-squares network, with a fixed step and with the strong Wolfe line search, a short
history (pairs dropped), float32 and float64; the counts of iterations and evaluations; state
dicts loaded across the two libraries; the errors."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _rosenbrock_run(lib, kw, dtype, steps=4, start=(-1.5, 2.0)):
    xy = lib.tensor(np.array(start, dtype), requires_grad=True)
    opt = lib.optim.LBFGS([xy], **kw)

    def closure():
        opt.zero_grad()
        x, y = xy[0], xy[1]
        loss = (1 - x) ** 2 + 100 * (y - x * x) ** 2
        loss.backward()
        return loss
    trace = []
    for _ in range(steps):
        loss = opt.step(closure)
        state = opt.state[xy]
        trace.append([float(loss.detach()), *xy.detach().numpy().tolist(), state["n_iter"],
                      state["func_evals"]])
    return trace, opt


CONFIGS = [dict(), dict(line_search_fn="strong_wolfe"),
           dict(lr=0.5, max_iter=7, history_size=3),
           dict(line_search_fn="strong_wolfe", history_size=2, max_iter=30, max_eval=40),
           dict(lr=0.1, max_iter=5, tolerance_change=1e-3)]


@pytest.mark.parametrize("kw", CONFIGS)
def test_rosenbrock_as_pytorch(kw):
    """Two steps in float64 (up to 60 iterations): the same iterates and counts. Rosenbrock's
    valley amplifies rounding (the gradients' own last bits differ between the libraries), so
    longer runs drift apart slowly, and float32 ones quickly, in both directions alike."""
    want, _ = _rosenbrock_run(torch, kw, np.float64, steps=2)
    got, _ = _rosenbrock_run(mg, kw, np.float64, steps=2)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("kw", [CONFIGS[2], CONFIGS[4]])
def test_rosenbrock_float32_as_pytorch(kw):
    want, _ = _rosenbrock_run(torch, kw, np.float32, steps=2)
    got, _ = _rosenbrock_run(mg, kw, np.float32, steps=2)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-7)


def _net_run(lib, line_search, dtype, steps):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((32, 3)).astype(dtype)
    Y = np.sin(X.sum(1, keepdims=True)).astype(dtype)
    w1 = lib.tensor((rng.standard_normal((3, 8)) * 0.5).astype(dtype), requires_grad=True)
    w2 = lib.tensor((rng.standard_normal((8, 1)) * 0.5).astype(dtype), requires_grad=True)
    b = lib.tensor(np.zeros(1, dtype), requires_grad=True)
    x, y = lib.tensor(X), lib.tensor(Y)
    opt = lib.optim.LBFGS([w1, w2, b], lr=1, max_iter=10, history_size=5,
                          line_search_fn=line_search)

    def closure():
        opt.zero_grad()
        loss = ((lib.tanh(x @ w1) @ w2 + b - y) ** 2).mean()
        loss.backward()
        return loss
    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    return losses + [float(closure().detach())], opt


@pytest.mark.parametrize("dtype,steps,rtol", [(np.float64, 3, 1e-7), (np.float32, 2, 1e-4)])
@pytest.mark.parametrize("line_search", [None, "strong_wolfe"])
def test_network_as_pytorch(line_search, dtype, steps, rtol):
    want, _ = _net_run(torch, line_search, dtype, steps)
    got, _ = _net_run(mg, line_search, dtype, steps)
    np.testing.assert_allclose(got, want, rtol=rtol)
    assert want[-1] < 0.3 * want[0]  # it minimises


def _to_torch(value):
    if isinstance(value, list):
        return [_to_torch(v) for v in value]
    return torch.tensor(value.numpy()) if isinstance(value, mg.Tensor) else value


@pytest.mark.parametrize("kw", [CONFIGS[2], CONFIGS[3]])
def test_state_dict_across_libraries(kw):
    dtype = np.float64
    want, _ = _rosenbrock_run(torch, kw, dtype, steps=4)
    for first, second in ((torch, mg), (mg, torch)):
        half, opt = _rosenbrock_run(first, kw, dtype, steps=2)
        state = opt.state_dict()
        if first is mg:
            state = {"state": {i: {k: _to_torch(v) for k, v in s.items()}
                               for i, s in state["state"].items()},
                     "param_groups": state["param_groups"]}
        rest, _ = _rosenbrock_run(second, kw, dtype, steps=0, start=half[-1][1:3])
        xy = second.tensor(np.array(half[-1][1:3], dtype), requires_grad=True)
        opt2 = second.optim.LBFGS([xy], **kw)
        opt2.load_state_dict(state)

        def closure():
            opt2.zero_grad()
            loss = (1 - xy[0]) ** 2 + 100 * (xy[1] - xy[0] * xy[0]) ** 2
            loss.backward()
            return loss
        for expected in want[2:]:
            loss = opt2.step(closure)
            got = [float(loss.detach()), *xy.detach().numpy().tolist(), opt2.state[xy]["n_iter"],
                   opt2.state[xy]["func_evals"]]
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_state_dict_is_a_snapshot_of_tensors():
    _, opt = _rosenbrock_run(mg, CONFIGS[2], np.float64, steps=2)
    state = opt.state_dict()["state"][0]
    assert isinstance(state["d"], mg.Tensor) and isinstance(state["old_dirs"][0], mg.Tensor)
    before = state["d"].numpy().copy()
    n_pairs = len(state["old_dirs"])
    xy = opt.param_groups[0]["params"][0]

    def closure():
        opt.zero_grad()
        loss = (xy * xy).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_array_equal(state["d"].numpy(), before)
    assert len(state["old_dirs"]) == n_pairs


def test_errors_as_pytorch():
    for make in (lambda lib: lib.optim.LBFGS([{"params": [lib.ones(1, requires_grad=True)]},
                                              {"params": [lib.ones(1, requires_grad=True)]}]),):
        with pytest.raises(ValueError) as want:
            make(torch)
        with pytest.raises(ValueError) as got:
            make(mg)
        assert str(got.value) == str(want.value)
    with pytest.raises(ValueError, match="LBFGS: invalid learning rate: -1"):
        mg.optim.LBFGS([mg.ones(1, requires_grad=True)], lr=-1)
    w = mg.ones(1, requires_grad=True)
    opt = mg.optim.LBFGS([w], line_search_fn="backtracking")

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)
