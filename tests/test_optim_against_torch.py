"""RMSprop, Adagrad, Adamax, NAdam, RAdam, Adadelta, Rprop, ASGD and Adafactor against
torch.optim: the same parameters and state after several steps on the same gradients (float32
and float64, every option, several groups, a parameter walked in slices), PyTorch's errors for
bad hyper-parameters, and state dicts that each library loads from the other and continues
from exactly as the uninterrupted run."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

RMSPROP = [dict(), dict(lr=0.01, alpha=0.9), dict(lr=0.01, weight_decay=0.1),
           dict(lr=0.01, momentum=0.9), dict(lr=0.01, centered=True),
           dict(lr=0.005, alpha=0.3, centered=True),  # lerp's formula for weights >= 0.5
           dict(lr=0.01, momentum=0.5, centered=True, weight_decay=0.05, eps=1e-6),
           dict(lr=0.01, momentum=0.9, centered=True, maximize=True)]
ADAGRAD = [dict(), dict(lr=0.1, lr_decay=0.05), dict(lr=0.1, weight_decay=0.1),
           dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6),
           dict(lr=0.1, lr_decay=0.01, weight_decay=0.01, maximize=True)]
ADAMAX = [dict(), dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3),
          dict(lr=0.01, weight_decay=0.1, maximize=True)]
NADAM = [dict(), dict(lr=0.01, betas=(0.8, 0.95), momentum_decay=0.1),
         dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, weight_decay=0.1,
                                               decoupled_weight_decay=True, maximize=True)]
RADAM = [dict(), dict(lr=0.01, betas=(0.8, 0.5)),  # rho_t > 5 from step 1: always rectified
         dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1),  # rectified from step 6
         dict(lr=0.01, betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True,
              maximize=True)]
ADADELTA = [dict(), dict(lr=0.5, rho=0.5, eps=1e-4), dict(weight_decay=0.1, maximize=True)]
RPROP = [dict(), dict(lr=0.1, etas=(0.3, 1.5), step_sizes=(0.01, 0.2)),
         dict(lr=0.05, maximize=True)]
ASGD = [dict(), dict(lr=0.05, lambd=0.01, alpha=0.5, t0=3, weight_decay=0.1),
        dict(lr=0.05, t0=0, maximize=True)]
ADAFACTOR = [dict(), dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5),
             dict(lr=0.05, weight_decay=0.1, maximize=True)]
CASES = ([("Adafactor", kw) for kw in ADAFACTOR] + [("ASGD", kw) for kw in ASGD]
         + [("Adadelta", kw) for kw in ADADELTA] + [("Rprop", kw) for kw in RPROP]
         + [("RMSprop", kw) for kw in RMSPROP] + [("Adagrad", kw) for kw in ADAGRAD]
         + [("Adamax", kw) for kw in ADAMAX] + [("NAdam", kw) for kw in NADAM]
         + [("RAdam", kw) for kw in RADAM])
SHAPES = [(3, 4), (5,)]


def _grads(step, arrays):
    rng = np.random.default_rng(100 + step)
    return [rng.standard_normal(a.shape).astype(a.dtype) for a in arrays]


def _make(lib, name, arrays, kw):
    params = [lib.tensor(a.copy(), requires_grad=True) for a in arrays]
    groups = [{"params": params[:1]}, {"params": params[1:], "lr": 0.02, "weight_decay": 0.05}]
    return params, getattr(lib.optim, name)(groups, **kw)


def _run(lib, params, opt, steps, start=0):
    for t in range(start, start + steps):
        for p, g in zip(params, _grads(t, [p.detach().numpy() for p in params])):
            p.grad = lib.tensor(g)
        opt.step()
    return [p.detach().numpy().copy() for p in params]


def _arrays(dtype, shapes=SHAPES):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,kw", CASES)
def test_steps_match_pytorch(name, kw, dtype):
    arrays = _arrays(dtype)
    t_params, t_opt = _make(torch, name, arrays, kw)
    want = _run(torch, t_params, t_opt, steps=6)
    params, opt = _make(mg, name, arrays, kw)
    got = _run(mg, params, opt, steps=6)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, **tol)
    t_state, m_state = t_opt.state_dict(), opt.state_dict()
    assert m_state["param_groups"] == t_state["param_groups"]
    for i, t_values in t_state["state"].items():  # the state too, e.g. ASGD's average
        assert sorted(m_state["state"][i]) == sorted(t_values)
        for k, v in t_values.items():
            np.testing.assert_allclose(np.asarray(m_state["state"][i][k]), v.numpy(), **tol,
                                       err_msg=k)


STATEFUL = [("RMSprop", RMSPROP[6]), ("Adagrad", ADAGRAD[4]), ("Adamax", ADAMAX[2]),
            ("NAdam", NADAM[3]), ("RAdam", RADAM[3]), ("Adadelta", ADADELTA[2]),
            ("Rprop", RPROP[1]), ("ASGD", ASGD[1]), ("Adafactor", ADAFACTOR[2])]


@pytest.mark.parametrize("name,kw", STATEFUL)
def test_large_and_noncontiguous_parameters(name, kw):
    """Cache-sized slices of a large parameter (two of CHUNK) and a Fortran-ordered one
    update alike."""
    rng = np.random.default_rng(2)
    arrays = [np.asfortranarray(rng.standard_normal((5, 7))), rng.standard_normal(70_001)]
    want = _run(torch, *_make(torch, name, arrays, kw), steps=3)
    got = _run(mg, *_make(mg, name, arrays, kw), steps=3)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name,kw", [
    ("RMSprop", dict(lr=-1)), ("RMSprop", dict(alpha=-0.5)), ("RMSprop", dict(eps=-1.0)),
    ("RMSprop", dict(momentum=-0.1)), ("RMSprop", dict(weight_decay=-1e-3)),
    ("Adagrad", dict(lr=-0.1)), ("Adagrad", dict(lr_decay=-1.0)),
    ("Adagrad", dict(weight_decay=-2.0)), ("Adagrad", dict(initial_accumulator_value=-1.0)),
    ("Adagrad", dict(eps=-1e-10)), ("Adamax", dict(betas=(1.0, 0.9))),
    ("Adamax", dict(betas=(0.9, -0.1))), ("NAdam", dict(momentum_decay=-1.0)),
    ("NAdam", dict(eps=-1.0)), ("RAdam", dict(weight_decay=-0.5)), ("RAdam", dict(lr=-2.0)),
    ("Adadelta", dict(rho=1.5)), ("Adadelta", dict(eps=-1.0)), ("Rprop", dict(etas=(1.5, 2.0))),
    ("Rprop", dict(etas=(0.5, 0.9))), ("ASGD", dict(weight_decay=-0.1)),
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(d=0.5))])
def test_bad_hyper_parameters_as_pytorch(name, kw):
    with pytest.raises(ValueError) as want:
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ValueError) as got:
        getattr(mg.optim, name)([mg.zeros(2, requires_grad=True)], **kw)
    assert str(got.value).startswith(f"{name}: ")
    assert str(got.value).lower().endswith(str(want.value).lower())


def _to_torch(state_dict):
    state = {i: {k: torch.tensor(v.numpy()) if isinstance(v, mg.Tensor) else v
                 for k, v in s.items()} for i, s in state_dict["state"].items()}
    return {"state": state, "param_groups": state_dict["param_groups"]}


@pytest.mark.parametrize("name,kw", STATEFUL)
def test_state_dict_across_libraries(name, kw, tmp_path):
    arrays = _arrays(np.float32)
    want = _run(torch, *_make(torch, name, arrays, kw), steps=5)
    tp, topt = _make(torch, name, arrays, kw)
    half = _run(torch, tp, topt, steps=2)
    t_state = topt.state_dict()
    torch.save(t_state, tmp_path / "opt.pt")
    for loaded in (t_state, mg.load(tmp_path / "opt.pt")):
        mp, mopt = _make(mg, name, half, kw)
        mopt.load_state_dict(loaded)
        m_state = mopt.state_dict()
        assert [sorted(s) for s in m_state["state"].values()] == \
            [sorted(s) for s in t_state["state"].values()]
        got = _run(mg, mp, mopt, steps=3, start=2)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    mp, mopt = _make(mg, name, arrays, kw)
    half = _run(mg, mp, mopt, steps=2)
    tp, topt = _make(torch, name, half, kw)
    topt.load_state_dict(_to_torch(mopt.state_dict()))
    for g, w in zip(_run(torch, tp, topt, steps=3, start=2), want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_adagrad_state_exists_before_the_first_step():
    """As PyTorch's: every parameter has 'step' 0 and 'sum' at the initial value."""
    for lib in (torch, mg):
        p = lib.ones(3, requires_grad=True)
        opt = lib.optim.Adagrad([p], initial_accumulator_value=0.25)
        state = opt.state_dict()["state"]
        assert list(state) == [0] and float(state[0]["step"]) == 0
        np.testing.assert_array_equal(np.asarray(state[0]["sum"].numpy()), [0.25] * 3)


def test_rmsprop_momentum_switched_on_later():
    """A schedule may give RMSprop a momentum after its first step (PyTorch then fails with a
    KeyError for the missing buffer); minigrad starts the buffer at zero."""
    p = mg.tensor([1.0, -2.0], requires_grad=True, dtype=mg.float64)
    opt = mg.optim.RMSprop([p], lr=0.1)
    g, v, want = np.array([0.5, -3.0]), 0.0, np.array([1.0, -2.0])
    for momentum in (0.0, 0.9):
        opt.param_groups[0]["momentum"] = momentum
        p.grad = mg.tensor(g)
        opt.step()
        v = 0.99 * v + 0.01 * g * g
        want = want - 0.1 * g / (np.sqrt(v) + 1e-8)  # the buffer, from zero, is g / avg
    np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(),
                               g / (np.sqrt(v) + 1e-8), rtol=1e-12)
