"""MultiStepLR, ConstantLR, LinearLR, PolynomialLR, CosineAnnealingLR, MultiplicativeLR,
SequentialLR and ChainedScheduler against PyTorch: the rates of two parameter groups over many
steps, with step(epoch) jumps (the closed form, with PyTorch's warning) in between, resumed with
last_epoch=N, their errors, and state dicts loaded across the two libraries."""
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _opt(lib, kind="SGD"):
    groups = [{"params": [lib.ones(2, requires_grad=True)]},
              {"params": [lib.ones(3, requires_grad=True)], "lr": 0.05}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _steps(sched, n):
    out = []
    for _ in range(n):
        sched.optimizer.step()
        sched.step()
        out.append(sched.get_last_lr())
    return out


def _jump(sched, epoch):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        sched.step(epoch)
    assert any("epoch parameter" in str(w.message) for w in seen)
    return sched.get_last_lr()


def _close(got, want):
    """Rates step by step (lists of per-group rates) equal up to float rounding."""
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=1e-12,
                               atol=1e-15)


def _same_state(got, want):
    """Two state dicts alike: the same keys and kinds, numbers equal up to float rounding."""
    if isinstance(want, dict):
        assert type(got) is type(want) and sorted(got) == sorted(want)
        for k in want:
            _same_state(got[k], want[k])
    elif isinstance(want, (list, tuple)):
        assert type(got) is type(want) and len(got) == len(want)
        for a, b in zip(got, want):
            _same_state(a, b)
    elif isinstance(want, float):
        assert isinstance(got, (int, float)) and got == pytest.approx(want, rel=1e-12, abs=1e-15)
    else:
        assert got == want and type(got) is type(want)


DECAYS = [
    ("MultiStepLR", dict(milestones=[3, 7, 7, 12], gamma=0.5)),
    ("MultiStepLR", dict(milestones=(2,))),
    ("ConstantLR", dict()),
    ("ConstantLR", dict(factor=0.25, total_iters=8)),
    ("LinearLR", dict()),
    ("LinearLR", dict(start_factor=0.1, end_factor=0.6, total_iters=10)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.0, total_iters=7)),
    ("PolynomialLR", dict()),
    ("PolynomialLR", dict(total_iters=12, power=2.5)),
    ("CosineAnnealingLR", dict(T_max=10)),
    ("CosineAnnealingLR", dict(T_max=6, eta_min=0.01)),  # past T_max: climbs back, twice over
    ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.95)),
    ("MultiplicativeLR", dict(lr_lambda=[lambda epoch: 1 / (1 + 0.1 * epoch),
                                         lambda epoch: 0.9 if epoch % 3 else 1.2])),
]


@pytest.mark.parametrize("name,kw", DECAYS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(DECAYS)])
def test_decay_schedules_as_pytorch(name, kw):
    got, states = {}, {}
    for lib in (torch, mg):
        sched = getattr(lib.optim.lr_scheduler, name)(_opt(lib), **kw)
        lrs = [sched.get_last_lr()] + _steps(sched, 30)
        lrs += [_jump(sched, 4)] + _steps(sched, 3) + [_jump(sched, 20)] + _steps(sched, 2)
        got[lib], states[lib] = lrs, sched.state_dict()
        assert all(isinstance(lr, float) for step in lrs for lr in step)
    _close(got[mg], got[torch])
    _same_state(states[mg], states[torch])


@pytest.mark.parametrize("name,kw", DECAYS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(DECAYS)])
def test_decay_schedules_resume_as_pytorch(name, kw):
    """Built with last_epoch=N on an optimizer holding a rate (as a loaded checkpoint leaves
    it), a schedule continues from that rate; a state dict from the other library resumes
    it alike."""
    got, states = {}, {}
    for lib in (torch, mg):
        opt = _opt(lib)
        for g, lr in zip(opt.param_groups, (0.03, 0.02)):
            g["initial_lr"], g["lr"] = g["lr"], lr
        sched = getattr(lib.optim.lr_scheduler, name)(opt, last_epoch=5, **kw)
        got[lib] = [sched.get_last_lr()] + _steps(sched, 8)
        states[lib] = sched.state_dict()
    _close(got[mg], got[torch])
    for lib, other in ((mg, torch), (torch, mg)):
        opt = _opt(lib)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kw)
        sched.load_state_dict(dict(states[other]))
        for g, lr in zip(opt.param_groups, states[other]["_last_lr"]):
            g["lr"] = lr
        got[lib] = _steps(sched, 4)
    _close(got[mg], got[torch])


@pytest.mark.parametrize("name,kw", [
    ("ConstantLR", dict(factor=1.5)), ("ConstantLR", dict(factor=-0.1)),
    ("LinearLR", dict(start_factor=0.0)), ("LinearLR", dict(start_factor=1.2)),
    ("LinearLR", dict(end_factor=-1.0))])
def test_decay_errors_as_pytorch(name, kw):
    with pytest.raises(ValueError) as want:
        getattr(torch.optim.lr_scheduler, name)(_opt(torch), **kw)
    with pytest.raises(ValueError) as got:
        getattr(mg.optim.lr_scheduler, name)(_opt(mg), **kw)
    assert str(got.value) == str(want.value) and "factor" in str(got.value)
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        getattr(mg.optim.lr_scheduler, name)([])


def _warmup_then_cosine(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.LinearLR(opt, start_factor=0.1, total_iters=4),
                                s.CosineAnnealingLR(opt, T_max=10, eta_min=0.001)],
                          milestones=[4])


def _three_stages(lib, opt):
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.ConstantLR(opt, factor=0.5, total_iters=3),
                                s.ExponentialLR(opt, gamma=0.9),
                                s.MultiStepLR(opt, milestones=[2, 5], gamma=0.3)],
                          milestones=[3, 8])


def _chained(lib, opt):
    s = lib.optim.lr_scheduler
    return s.ChainedScheduler([s.LinearLR(opt, start_factor=0.2, total_iters=5),
                               s.ExponentialLR(opt, gamma=0.95),
                               s.PolynomialLR(opt, total_iters=15, power=0.5)])


def _nested(lib, opt):
    """A chain as SequentialLR's first stage (PyTorch cannot restart a chain at a milestone:
    ChainedScheduler has no closed form)."""
    s = lib.optim.lr_scheduler
    return s.SequentialLR(opt, [s.ChainedScheduler([s.StepLR(opt, 3, 0.5),
                                                    s.ExponentialLR(opt, gamma=0.9)]),
                                s.LinearLR(opt, start_factor=0.5, total_iters=3)],
                          milestones=[6])


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step()`")  # the chain's start
@pytest.mark.parametrize("build", [_warmup_then_cosine, _three_stages, _chained, _nested])
def test_composite_schedules_as_pytorch(build):
    got, states = {}, {}
    for lib in (torch, mg):
        sched = build(lib, _opt(lib))
        got[lib] = [sched.get_last_lr()] + _steps(sched, 20)
        states[lib] = sched.state_dict()
    _close(got[mg], got[torch])
    _same_state(states[mg], states[torch])
    want = _steps(build(torch, _opt(torch)), 26)[20:]
    for lib, other in ((mg, torch), (torch, mg)):
        opt = _opt(lib)
        sched = build(lib, opt)
        sched.load_state_dict(states[other])
        for g, lr in zip(opt.param_groups, states[other]["_last_lr"]):
            g["lr"] = lr
        _close(_steps(sched, 6), want)


def test_composite_load_is_all_or_nothing():
    sched = _three_stages(mg, _opt(mg))
    _steps(sched, 5)
    state = sched.state_dict()
    bad = dict(state, _schedulers=[*state["_schedulers"][:2], {"last_epoch": "x"}])
    fresh = _three_stages(mg, _opt(mg))
    before = [dict(s.__dict__) for s in (fresh, *fresh._schedulers)]
    with pytest.raises(ValueError, match="nothing was loaded"):
        fresh.load_state_dict(bad)
    assert [dict(s.__dict__) for s in (fresh, *fresh._schedulers)] == before
    with pytest.raises(ValueError, match="_schedulers"):
        fresh.load_state_dict(dict(state, _schedulers=state["_schedulers"][:1]))


def test_composite_errors_as_pytorch():
    def errors(lib):
        s, opt, other = lib.optim.lr_scheduler, _opt(lib), _opt(lib)
        one = s.ExponentialLR(opt, 0.9)
        calls = [lambda: s.SequentialLR(opt, [], []),
                 lambda: s.SequentialLR(opt, [one, s.ExponentialLR(opt, 0.8)], [2, 4]),
                 lambda: s.SequentialLR(opt, [one, s.ReduceLROnPlateau(opt)], [2]),
                 lambda: s.SequentialLR(opt, [s.ExponentialLR(other, 0.9)], []),
                 lambda: s.SequentialLR(opt, [object()], []),
                 lambda: s.ChainedScheduler([]),
                 lambda: s.ChainedScheduler([one, s.ReduceLROnPlateau(opt)])]
        out = []
        for call in calls:
            with pytest.raises((ValueError, TypeError)) as info:
                call()
            out.append((info.type, str(info.value).split(" has ")[0]))
        return out
    assert errors(mg) == errors(torch)
