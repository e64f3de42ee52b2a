"""Optimizers, learning-rate schedules and gradient clipping.

Updates are checked against textbook NumPy formulas in float64 (tight tolerance), and against
torch.optim on the same numbers when PyTorch is installed.
"""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.module import Module, Parameter
from minigrad.nn.utils import (clip_grad_norm_, clip_grad_value_, parameters_to_vector,
                               vector_to_parameters)
from minigrad.optim import SGD, Adam, AdamW, Optimizer
from minigrad.optim.lr_scheduler import LambdaLR, StepLR, WarmupScheduler, noam_lr


class Toy(Module):
    """Two parameters, enough to exercise groups and state indices."""

    def __init__(self, dtype=np.float64, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = Parameter(rng.standard_normal((4, 3)).astype(dtype))
        self.b = Parameter(rng.standard_normal(3).astype(dtype))


def grads_for(step, params, seed=1):
    """A fixed, different gradient for every step and parameter."""
    rng = np.random.default_rng(seed + 1000 * step)
    return [rng.standard_normal(p.shape).astype(p.dtype) for p in params]


def feed(params, t):
    for p, g in zip(params, grads_for(t, params)):
        p.grad = mg.tensor(g)


def run(opt_factory, steps=5, dtype=np.float64):
    params = list(Toy(dtype).parameters())
    opt = opt_factory(params)
    for t in range(steps):
        feed(params, t)
        opt.step()
    return [p.numpy().copy() for p in params], opt


# --- NumPy references (the formulas as written in PyTorch's documentation) ------------------

def sgd_ref(params, steps, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for t in range(steps):
        for i, g in enumerate(grads_for(t, params)):
            g = g + weight_decay * params[i]
            if momentum:
                bufs[i] = g.copy() if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = params[i] - lr * g
    return params


def adam_ref(params, steps, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
             amsgrad=False, decoupled=False):
    b1, b2 = betas
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    vmax = [np.zeros_like(p) for p in params]
    for t in range(1, steps + 1):
        for i, g in enumerate(grads_for(t - 1, params)):
            if decoupled:
                params[i] = params[i] * (1 - lr * weight_decay)
            else:
                g = g + weight_decay * params[i]
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            vmax[i] = np.maximum(vmax[i], v[i])
            m_hat = m[i] / (1 - b1 ** t)
            v_hat = (vmax[i] if amsgrad else v[i]) / (1 - b2 ** t)
            params[i] = params[i] - lr * m_hat / (np.sqrt(v_hat) + eps)
    return params


SGD_CONFIGS = [dict(lr=0.1), dict(lr=0.05, momentum=0.9),
               dict(lr=0.05, momentum=0.9, dampening=0.3),
               dict(lr=0.05, momentum=0.8, nesterov=True), dict(lr=0.1, weight_decay=0.01),
               dict(lr=0.05, momentum=0.9, weight_decay=0.1, nesterov=True)]
ADAM_CONFIGS = [dict(lr=0.01), dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6),
                dict(lr=0.01, weight_decay=0.1), dict(lr=0.01, amsgrad=True),
                dict(lr=0.01, weight_decay=0.05, amsgrad=True)]


@pytest.mark.parametrize("cfg", SGD_CONFIGS)
def test_sgd_matches_reference(cfg):
    start = [p.numpy().copy() for p in Toy().parameters()]
    got, _ = run(lambda ps: SGD(ps, **cfg), steps=6)
    for a, b in zip(got, sgd_ref(start, 6, **cfg)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("cfg", ADAM_CONFIGS)
@pytest.mark.parametrize("cls", [Adam, AdamW])
def test_adam_and_adamw_match_reference(cls, cfg):
    start = [p.numpy().copy() for p in Toy().parameters()]
    got, opt = run(lambda ps: cls(ps, **cfg), steps=7)
    defaults = {"weight_decay": 1e-2} if cls is AdamW else {}
    expect = adam_ref(start, 7, decoupled=cls is AdamW, **{**defaults, **cfg})
    for a, b in zip(got, expect):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert opt.state[next(iter(opt.state))]["step"] == 7


def test_adamw_default_weight_decay_and_bias_correction_first_step():
    assert AdamW(Toy().parameters()).defaults["weight_decay"] == 1e-2
    # after one step m_hat = g and v_hat = g^2, so every weight moves by lr * g / (|g| + eps)
    p = Parameter(np.array([1.0, -2.0, 3.0]))
    p.grad = mg.tensor(np.array([0.5, -4.0, 1e-3]))
    Adam([p], lr=0.1).step()
    g = np.array([0.5, -4.0, 1e-3])
    np.testing.assert_allclose(p.numpy(), [1.0, -2.0, 3.0] - 0.1 * g / (np.abs(g) + 1e-8),
                               rtol=1e-12)
    q = Parameter(np.ones(2))  # lr = 0 (a schedule starting at zero) moves only the moments
    q.grad = mg.tensor(np.full(2, 2.0))
    opt = Adam([q], lr=0.0)
    opt.step()
    assert (q.numpy() == 1).all() and opt.state[q]["exp_avg"].numpy()[0] == pytest.approx(0.2)


@pytest.mark.parametrize("cls,cfg", [(SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     (Adam, dict(lr=0.01, weight_decay=0.01)),
                                     (AdamW, dict(lr=0.01, weight_decay=0.01))])
def test_float32_large_and_noncontiguous_parameters(cls, cfg):
    """Chunked updates cover every element; dtype, identity and views of p.numpy() survive."""
    rng = np.random.default_rng(3)
    big = Parameter(rng.standard_normal(150_001).astype(np.float32))   # more than 2 chunks
    fortran = Parameter(np.asfortranarray(rng.standard_normal((5, 7)).astype(np.float32)))
    params = [big, fortran]
    start = [p.numpy().astype(np.float64) for p in params]
    ids, view = [id(p.numpy()) for p in params], big.numpy()[10:20]
    opt = cls(params, **cfg)
    for t in range(3):
        feed(params, t)
        before = [p._version for p in params]
        opt.step()
        assert [p._version for p in params] == [v + 1 for v in before]
    ref = sgd_ref(start, 3, **cfg) if cls is SGD else adam_ref(start, 3, decoupled=cls is AdamW,
                                                                   **cfg)
    for p, r in zip(params, ref):
        assert p.numpy().dtype == np.float32 and [id(p.numpy()) for p in params] == ids
        np.testing.assert_allclose(p.numpy(), r, rtol=2e-5, atol=2e-6)
    np.testing.assert_array_equal(view, big.numpy()[10:20])
    assert not fortran.numpy().flags.c_contiguous


def test_params_without_grad_are_skipped_and_grads_untouched():
    m = Toy()
    m.b.grad = mg.tensor(np.ones(3))
    w0 = m.w.numpy().copy()
    opt = Adam(m.parameters(), lr=0.1, weight_decay=0.5)
    opt.step()
    np.testing.assert_array_equal(m.w.numpy(), w0)
    np.testing.assert_array_equal(m.b.grad.numpy(), np.ones(3))  # weight decay did not leak in
    assert m.w not in opt.state and opt.state[m.b]["step"] == 1


def test_zero_grad():
    m = Toy()
    for p in m.parameters():
        p.grad = mg.tensor(np.ones(p.shape))
    opt = SGD(m.parameters(), lr=0.1)
    g = m.w.grad
    opt.zero_grad(set_to_none=False)
    assert m.w.grad is g and not g.numpy().any()
    opt.zero_grad()
    assert m.w.grad is None and m.b.grad is None


def test_backward_and_step_lower_a_loss():
    m = Toy()
    x = mg.tensor(np.random.default_rng(0).standard_normal((8, 4)))
    opt = SGD(m.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = ((x @ m.w + m.b) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.1 * losses[0]


@pytest.mark.parametrize("make,msg", [
    (lambda ps: Adam(ps, betas=(1.5, 0.999)), "Adam: invalid beta parameter at index 0: 1.5"),
    (lambda ps: AdamW(ps, betas=(0.9, -0.1)), "AdamW: invalid beta parameter at index 1: -0.1"),
    (lambda ps: Adam(ps, lr=-1), "Adam: invalid learning rate: -1"),
    (lambda ps: Adam(ps, eps=-1e-8), "Adam: invalid epsilon value"),
    (lambda ps: Adam(ps, weight_decay=-0.1), "Adam: invalid weight_decay value: -0.1"),
    (lambda ps: SGD(ps, lr=-0.1), "SGD: invalid learning rate: -0.1"),
    (lambda ps: SGD(ps, lr=0.1, momentum=-0.5), "SGD: invalid momentum value: -0.5"),
    (lambda ps: SGD(ps, lr=0.1, nesterov=True), "SGD: nesterov momentum requires"),
    (lambda ps: SGD(ps, lr=0.1, momentum=0.9, dampening=0.1, nesterov=True), "zero dampening"),
    (lambda ps: SGD([{"params": ps[:1]}, {"params": ps[1:], "lr": float("nan")}]),
     "invalid learning rate: nan"),
])
def test_bad_hyper_parameters(make, msg):
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        make(list(Toy().parameters()))


def test_bad_params_arguments():
    m = Toy()
    with pytest.raises(ValueError, match="empty parameter list"):
        SGD([], lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        SGD(m.w, lr=0.1)
    with pytest.raises(TypeError, match="iterable"):
        SGD(set(m.parameters()), lr=0.1)
    with pytest.raises(ValueError, match="more than one parameter group"):
        SGD([{"params": [m.w]}, {"params": [m.w, m.b]}], lr=0.1)
    with pytest.raises(ValueError, match="non-leaf"):
        SGD([m.w * 2], lr=0.1)


def test_param_groups_and_add_param_group():
    m = Toy()
    opt = SGD([{"params": [m.w]}, {"params": [m.b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    extra = Parameter(np.zeros(2))
    opt.add_param_group({"params": extra, "momentum": 0.0})
    assert opt.param_groups[2]["lr"] == 0.1 and opt.param_groups[2]["params"][0] is extra
    assert "Parameter Group 2" in repr(opt)


def test_state_dict_format():
    _, opt = run(lambda ps: Adam([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.5}]), steps=2)
    sd = opt.state_dict()
    assert list(sd["state"]) == [0, 1]
    assert sd["state"][0]["step"] == 2 and isinstance(sd["state"][0]["exp_avg"], mg.Tensor)
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5 and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    # a snapshot: stepping again does not change it
    before = sd["state"][0]["exp_avg"].numpy().copy()
    opt.param_groups[0]["params"][0].grad = mg.tensor(np.ones((4, 3)))
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].numpy(), before)


@pytest.mark.parametrize("make", [
    lambda ps: Adam(ps, lr=0.01, amsgrad=True), lambda ps: AdamW(ps, lr=0.01),
    lambda ps: SGD(ps, lr=0.05, momentum=0.9, nesterov=True)])
def test_checkpoint_round_trip_continues_identically(make, tmp_path):
    dtype = np.float32
    full, _ = run(make, steps=6, dtype=dtype)

    model = Toy(dtype)
    params = list(model.parameters())
    opt = make(params)
    sched = StepLR(opt, step_size=2, gamma=0.5)
    for t in range(3):
        feed(params, t)
        opt.step()
    mg.save({"model": model.state_dict(), "optim": opt.state_dict(),
             "sched": sched.state_dict()}, tmp_path / "ckpt.npz")

    ckpt = mg.load(tmp_path / "ckpt.npz")
    model2 = Toy(dtype, seed=99)
    model2.load_state_dict(ckpt["model"])
    params2 = list(model2.parameters())
    opt2 = make(params2)
    opt2.load_state_dict(ckpt["optim"])
    sched2 = StepLR(opt2, step_size=2, gamma=0.5)
    sched2.load_state_dict(ckpt["sched"])
    assert sched2.last_epoch == sched.last_epoch and sched2.get_last_lr() == sched.get_last_lr()
    for t in range(3, 6):
        feed(params2, t)
        opt2.step()
    for a, b in zip(full, params2):
        np.testing.assert_array_equal(a, b.numpy())
    for s in opt2.state.values():
        assert all(v.numpy().dtype == dtype for v in s.values() if isinstance(v, mg.Tensor))


def test_load_state_dict_errors():
    _, opt = run(lambda ps: Adam(ps), steps=1)
    sd = opt.state_dict()
    with pytest.raises(ValueError, match="parameter groups"):
        Adam([{"params": [Parameter(np.ones((4, 3)))]}, {"params": [Parameter(np.ones(3))]}]
             ).load_state_dict(sd)
    with pytest.raises(ValueError, match="shape"):
        Adam([Parameter(np.ones((4, 3))), Parameter(np.ones(5))]).load_state_dict(sd)


# --- schedules ---------------------------------------------------------------------------------

def test_noam_values():
    assert f"{noam_lr(1000, 512, 4000):.3g}" == "0.000175"
    assert f"{noam_lr(4000, 512, 4000):.3g}" == "0.000699"
    assert f"{noam_lr(16000, 512, 4000):.3g}" == "0.000349"
    assert noam_lr(10, 512, 4000, factor=2.0) == 2 * noam_lr(10, 512, 4000)
    with pytest.raises(ValueError, match="from 1"):
        noam_lr(0, 512, 4000)


def test_warmup_scheduler_counts_steps_from_one():
    p = Parameter(np.zeros(1))
    opt = SGD([p], lr=123.0)
    sched = WarmupScheduler(opt, d_model=512, warmup_steps=4000, factor=2.0)
    assert sched.last_epoch == 0 and opt.param_groups[0]["lr"] == noam_lr(1, 512, 4000, 2.0)
    for step in range(1, 6):
        p.grad = mg.tensor(np.ones(1))
        before = p.numpy().copy()
        opt.step()  # step `step` uses that step's rate
        np.testing.assert_allclose(before - p.numpy(), noam_lr(step, 512, 4000, 2.0), rtol=1e-12)
        sched.step()
    assert sched.get_last_lr() == [noam_lr(6, 512, 4000, 2.0)]


def test_lambda_and_step_lr():
    m = Toy()
    opt = SGD([{"params": [m.w]}, {"params": [m.b], "lr": 1.0}], lr=0.1)
    sched = LambdaLR(opt, [lambda e: 0.5 ** e, lambda e: e + 1])
    for e in range(4):
        assert sched.get_last_lr() == pytest.approx([0.1 * 0.5 ** e, 1.0 * (e + 1)])
        assert [g["lr"] for g in opt.param_groups] == sched.get_last_lr()
        sched.step()
    opt2 = SGD(m.parameters(), lr=1.0)
    step = StepLR(opt2, step_size=3, gamma=0.1)
    lrs = []
    for _ in range(7):
        lrs.append(step.get_last_lr()[0])
        step.step()
    assert lrs == pytest.approx([1, 1, 1, 0.1, 0.1, 0.1, 0.01])
    with pytest.raises(ValueError, match="one per parameter group"):
        LambdaLR(opt, [lambda e: 1.0])


def test_scheduler_state_dict_round_trip(tmp_path):
    opt = Adam(Toy().parameters(), lr=1.0)
    sched = WarmupScheduler(opt, d_model=64, warmup_steps=10)
    for _ in range(7):
        sched.step()
    mg.save(sched.state_dict(), tmp_path / "s.npz")
    opt2 = Adam(Toy().parameters(), lr=1.0)
    sched2 = WarmupScheduler(opt2, d_model=1, warmup_steps=1)
    sched2.load_state_dict(mg.load(tmp_path / "s.npz"))
    for _ in range(3):
        sched.step()
        sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr()
        assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"]
    lam = LambdaLR(opt, lambda e: 1.0)
    assert lam.state_dict()["lr_lambdas"] == [None]  # as PyTorch: a function is not saved
    mg.save(lam.state_dict(), tmp_path / "lam.npz")
    LambdaLR(opt2, lambda e: 1.0).load_state_dict(mg.load(tmp_path / "lam.npz"))


# --- gradient clipping -------------------------------------------------------------------------

def test_clip_grad_norm():
    m = Toy()
    gs = grads_for(0, list(m.parameters()))
    for p, g in zip(m.parameters(), gs):
        p.grad = mg.tensor(g * 10)
    total = math.sqrt(sum(np.sum((g * 10) ** 2) for g in gs))
    norm = clip_grad_norm_(m.parameters(), max_norm=1.0)
    assert isinstance(norm, mg.Tensor) and norm.item() == pytest.approx(total, rel=1e-12)
    coef = 1.0 / (total + 1e-6)
    for p, g in zip(m.parameters(), gs):
        np.testing.assert_allclose(p.grad.numpy(), g * 10 * coef, rtol=1e-12)
    after = math.sqrt(sum(np.sum(p.grad.numpy() ** 2) for p in m.parameters()))
    assert after == pytest.approx(1.0, rel=1e-5)
    # below the threshold nothing changes
    before = [p.grad.numpy().copy() for p in m.parameters()]
    clip_grad_norm_(m.parameters(), max_norm=100.0)
    for p, b in zip(m.parameters(), before):
        np.testing.assert_array_equal(p.grad.numpy(), b)
    inf = clip_grad_norm_(m.parameters(), max_norm=100.0, norm_type="inf")
    assert inf.item() == pytest.approx(max(np.abs(b).max() for b in before))
    one = clip_grad_norm_(m.parameters(), max_norm=100.0, norm_type=1)
    assert one.item() == pytest.approx(sum(np.abs(b).sum() for b in before))
    m.b.grad.numpy()[0] = np.nan
    with pytest.raises(RuntimeError, match="non-finite|nan"):
        clip_grad_norm_(m.parameters(), 1.0, error_if_nonfinite=True)
    assert clip_grad_norm_([Parameter(np.ones(2))], 1.0).item() == 0.0  # no grads at all


def test_clip_grad_value_and_vectors():
    m = Toy()
    for p in m.parameters():
        p.grad = mg.tensor(np.linspace(-3, 3, p.numpy().size).reshape(p.shape))
    clip_grad_value_(m.parameters(), 1.0)
    assert all(np.abs(p.grad.numpy()).max() == 1.0 for p in m.parameters())
    vec = parameters_to_vector(m.parameters())
    assert vec.shape == (15,)
    ids = [id(p.numpy()) for p in m.parameters()]
    vector_to_parameters(mg.tensor(np.arange(15.0)), m.parameters())
    np.testing.assert_array_equal(m.b.numpy(), [12, 13, 14])
    assert [id(p.numpy()) for p in m.parameters()] == ids
    with pytest.raises(ValueError, match="15 elements"):
        vector_to_parameters(np.zeros(4), m.parameters())


# --- PyTorch as the reference ------------------------------------------------------------------

def test_parameters_to_vector_is_differentiable_as_pytorch(torch):
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    grads, reprs = {}, {}
    for lib in (torch, mg):
        params = [lib.nn.Parameter(lib.tensor(w)), lib.nn.Parameter(lib.tensor(b))]
        vec = lib.nn.utils.parameters_to_vector(params)
        reprs[lib] = (vec.requires_grad, vec.grad_fn.name(), tuple(vec.shape))
        (vec ** 2).sum().backward()
        grads[lib] = [p.grad.numpy() for p in params]
        with lib.no_grad():
            assert not lib.nn.utils.parameters_to_vector(params).requires_grad
    assert reprs[mg] == reprs[torch] == (True, "CatBackward0", (9,))
    for g, want in zip(grads[mg], grads[torch]):
        np.testing.assert_array_equal(g, want)
    np.testing.assert_array_equal(grads[mg][0], 2 * w)


@pytest.mark.parametrize("name,cfg", [("SGD", c) for c in SGD_CONFIGS] +
                         [(n, c) for n in ("Adam", "AdamW") for c in ADAM_CONFIGS])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_against_torch(name, cfg, dtype):
    torch = pytest.importorskip("torch")
    ours, _ = run(lambda ps: {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}[name](ps, **cfg),
                  steps=6, dtype=dtype)
    tparams = [torch.nn.Parameter(torch.from_numpy(p.numpy().copy())) for p in Toy(dtype).parameters()]
    topt = getattr(torch.optim, name)(tparams, **cfg)
    for t in range(6):
        for p, g in zip(tparams, grads_for(t, [p.detach().numpy() for p in tparams])):
            p.grad = torch.from_numpy(g)
        topt.step()
    tol = dict(rtol=1e-11, atol=1e-12) if dtype == np.float64 else dict(rtol=2e-5, atol=2e-6)
    for a, b in zip(ours, tparams):
        np.testing.assert_allclose(a, b.detach().numpy(), **tol)


def test_clip_grad_norm_against_torch():
    torch = pytest.importorskip("torch")
    m = Toy()
    gs = [g * 7 for g in grads_for(0, list(m.parameters()))]
    tps = [torch.nn.Parameter(torch.from_numpy(p.numpy().copy())) for p in m.parameters()]
    for p, tp, g in zip(m.parameters(), tps, gs):
        p.grad, tp.grad = mg.tensor(g.copy()), torch.from_numpy(g.copy())
    ours = clip_grad_norm_(m.parameters(), 2.0)
    theirs = torch.nn.utils.clip_grad_norm_(tps, 2.0)
    assert ours.item() == pytest.approx(theirs.item(), rel=1e-12)
    for p, tp in zip(m.parameters(), tps):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-12)


def test_optimizer_base_is_abstract():
    opt = Optimizer([Parameter(np.ones(1))], dict(lr=0.1))
    opt.param_groups[0]["params"][0].grad = mg.tensor(np.ones(1))
    with pytest.raises(NotImplementedError):
        opt.step()


@pytest.mark.parametrize("cls,cfg", [(Adam, dict(lr=0.01)), (AdamW, dict(lr=0.01, amsgrad=True)),
                                     (Adam, dict(lr=0.01, weight_decay=0.1))])
def test_adam_small_parameters_together_equal_one_by_one(cls, cfg, monkeypatch):
    """The flat update of small parameters gives exactly the per-parameter update, with
    parameters of two dtypes, one large, and one whose gradient skips steps (its own count).
    Batching is the NumPy path's (the "numba" backend steps each parameter compiled)."""
    import minigrad.optim.adam as adam_mod
    from minigrad import kernels

    monkeypatch.setattr(kernels.policy, "_backend", "numpy")

    shapes = [(3, 4), (5,), (2, 2, 2), (adam_mod.SMALL + 1,), (7,)]

    def make():
        rng = np.random.default_rng(0)
        ps = [Parameter(rng.standard_normal(s)) for s in shapes]
        ps.append(Parameter(rng.standard_normal(6).astype(np.float32)))
        return ps

    def train(ps, opt, steps=5):
        rng = np.random.default_rng(1)
        for t in range(steps):
            for i, p in enumerate(ps):
                p.grad = None if i == 4 and t % 2 else mg.tensor(
                    rng.standard_normal(p.shape).astype(p.numpy().dtype))
            opt.step()
        return [p.numpy().copy() for p in ps], opt.state_dict()

    ps = make()
    together, state_a = train(ps, cls(ps, **cfg))
    monkeypatch.setattr(adam_mod, "SMALL", -1)  # every parameter on its own
    ps = make()
    alone, state_b = train(ps, cls(ps, **cfg))
    for a, b in zip(together, alone):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    assert state_a["state"][4]["step"] == 3 and state_a["state"][0]["step"] == 5
    for k, s in state_a["state"].items():
        for name, v in s.items():
            got, want = (v.numpy(), state_b["state"][k][name].numpy()) if name != "step" else \
                (v, state_b["state"][k][name])
            np.testing.assert_array_equal(got, want)
