"""ReduceLROnPlateau, OneCycleLR and CyclicLR against PyTorch: rates (and the cycled momentum
or beta1) step by step for every mode, their errors, and state dicts loaded across the two
libraries (a plateau's best value is infinite before its first step)."""
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

# a noisy loss that falls, stalls, wobbles within the threshold, then falls again
METRICS = [1.0, 0.9, 0.85, 0.86, 0.85, 0.8499, 0.87, 0.9, 0.6, 0.61, 0.62, 0.63, 0.64, 0.5,
           0.5, 0.5, 0.5, 0.5, 0.5, 0.4, 0.41, 0.42, 0.43, 0.44, 0.45, 0.46]


def _opt(lib, kind="SGD", lr=0.1):
    groups = [{"params": [lib.ones(2, requires_grad=True)]},
              {"params": [lib.ones(3, requires_grad=True)], "lr": lr / 2}]
    if kind == "Adam":
        return lib.optim.Adam(groups, lr=lr)
    if kind == "Adagrad":
        return lib.optim.Adagrad(groups, lr=lr)
    return lib.optim.SGD(groups, lr=lr, momentum=0.9)


def _close(got, want):
    np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=1e-12,
                               atol=1e-15)


PLATEAU = [dict(), dict(patience=1), dict(patience=0, factor=0.5, cooldown=2),
           dict(mode="max", patience=1, factor=0.3), dict(threshold_mode="abs", threshold=0.02,
                                                           patience=1),
           dict(mode="max", threshold_mode="abs", threshold=0.05, patience=0),
           dict(patience=0, factor=0.5, min_lr=[0.02, 0.01]),
           dict(patience=0, factor=0.9, min_lr=0.06, eps=0.005)]


@pytest.mark.parametrize("kw", PLATEAU)
def test_plateau_as_pytorch(kw):
    got, states = {}, {}
    metrics = METRICS if kw.get("mode") != "max" else [-m for m in METRICS]
    for lib in (torch, mg):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        first = sched.state_dict()
        lrs = [sched.get_last_lr()]
        for m in metrics:
            opt.step()
            sched.step(m)
            lrs.append([g["lr"] for g in opt.param_groups])
            lrs.append(sched.get_last_lr())
        got[lib], states[lib] = lrs, (first, sched.state_dict())
    _close(got[mg], got[torch])
    for m_state, t_state in zip(states[mg], states[torch]):
        assert m_state == t_state
    assert math.isinf(states[mg][0]["best"])
    # resumed from the other's state dict (before and after the first step) it goes on alike
    for index, done in ((0, 0), (1, len(metrics))):
        resumed = {}
        for lib, other in ((mg, torch), (torch, mg)):
            opt = _opt(lib)
            sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
            sched.load_state_dict(dict(states[other][index]))
            for g, lr in zip(opt.param_groups, states[other][index]["_last_lr"]):
                g["lr"] = lr
            resumed[lib] = []
            for m in metrics[done:] + metrics[:6]:
                sched.step(m)
                resumed[lib].append(sched.get_last_lr())
        _close(resumed[mg], resumed[torch])
        if done == 0:
            _close(resumed[mg][:len(metrics)], got[torch][2::2])


def test_plateau_tensor_metric_and_epoch_argument():
    got = {}
    for lib in (torch, mg):
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(_opt(lib), patience=0)
        sched.step(lib.tensor(2.0))
        with pytest.warns(UserWarning, match="epoch parameter"):
            sched.step(lib.tensor(3.0), 7)
        got[lib] = (sched.last_epoch, sched.get_last_lr(), sched.best, sched.in_cooldown)
    assert got[mg] == got[torch]


def test_plateau_errors_as_pytorch():
    def errors(lib):
        s, out = lib.optim.lr_scheduler, []
        for kw in (dict(factor=1.0), dict(mode="up"), dict(threshold_mode="ratio"),
                   dict(min_lr=[0.1])):
            with pytest.raises(ValueError) as info:
                s.ReduceLROnPlateau(_opt(lib), **kw)
            out.append(str(info.value))
        opt = _opt(lib)
        sched = s.ReduceLROnPlateau(opt, patience=0, min_lr=[0.0, 0.0])
        opt.add_param_group({"params": [lib.ones(1, requires_grad=True)]})
        sched.step(1.0)
        with pytest.raises(RuntimeError) as info:
            sched.step(2.0)
        return out + [str(info.value)]
    assert errors(mg) == errors(torch)
    sched = mg.optim.lr_scheduler.ReduceLROnPlateau(_opt(mg))
    before = sched.state_dict()
    with pytest.raises(ValueError, match="mode up is unknown"):
        sched.load_state_dict(dict(before, mode="up"))
    with pytest.raises(ValueError, match="nothing was loaded"):
        sched.load_state_dict(dict(before, best=float("nan")))
    assert sched.state_dict() == before
    opt = _opt(mg)  # a default min_lr follows the groups added later
    sched = mg.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0)
    opt.add_param_group({"params": [mg.ones(1, requires_grad=True)], "lr": 1.0})
    sched.step(1.0)
    sched.step(2.0)
    assert sched.get_last_lr() == pytest.approx([0.01, 0.005, 0.1])


ONE_CYCLE = [("SGD", dict(max_lr=1.0, total_steps=20)),
             ("SGD", dict(max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=7, pct_start=0.4,
                          anneal_strategy="linear", base_momentum=0.8, max_momentum=[0.9, 0.99])),
             ("SGD", dict(max_lr=0.3, total_steps=25, three_phase=True, div_factor=10.0,
                          final_div_factor=100.0)),
             ("Adam", dict(max_lr=0.01, total_steps=16)),
             ("Adam", dict(max_lr=0.01, total_steps=30, three_phase=True,
                           anneal_strategy="linear")),
             ("Adagrad", dict(max_lr=0.1, total_steps=12, cycle_momentum=False)),
             ("RMSprop", dict(max_lr=0.05, total_steps=10))]


def _momentum(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum", 0.0) for g in opt.param_groups]


@pytest.mark.parametrize("kind,kw", ONE_CYCLE)
def test_one_cycle_as_pytorch(kind, kw):
    got, states, groups = {}, {}, {}
    total = kw.get("total_steps") or kw["epochs"] * kw["steps_per_epoch"]
    for lib in (torch, mg):
        if kind == "RMSprop":
            opt = lib.optim.RMSprop([lib.ones(2, requires_grad=True)], lr=0.1)
        else:
            opt = _opt(lib, kind)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, **kw)
        trace = [sched.get_last_lr() + _momentum(opt)]
        for _ in range(total - 1):
            opt.step()
            sched.step()
            trace.append(sched.get_last_lr() + _momentum(opt))
        with pytest.raises(ValueError) as info:
            sched.step()
            sched.step()  # one step past the cycle's last is allowed, the next is not
        assert f"Tried to step {total + 1} times" in str(info.value)
        got[lib], states[lib] = trace, sched.state_dict()
        groups[lib] = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    _close(got[mg], got[torch])
    assert states[mg] == states[torch]
    assert groups[mg] == groups[torch]


def test_one_cycle_resumes_across_libraries():
    """Half a cycle in one library, the rest in the other: the optimizer's state dict carries
    the groups' bounds, the schedule's its step."""
    kw = dict(max_lr=0.5, total_steps=14, three_phase=True)

    def half(lib):
        opt = _opt(lib)
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, **kw)
        for _ in range(6):
            opt.step()
            sched.step()
        return opt, sched
    want = []
    opt, sched = half(torch)
    for _ in range(7):
        opt.step()
        sched.step()
        want.append(sched.get_last_lr() + _momentum(opt))
    for lib, other in ((mg, torch), (torch, mg)):
        o_opt, o_sched = half(other)
        opt = _opt(lib)
        opt.load_state_dict({"state": {}, "param_groups": o_opt.state_dict()["param_groups"]})
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, last_epoch=5, **kw)
        sched.load_state_dict(o_sched.state_dict())
        got = []
        for _ in range(7):
            opt.step()
            sched.step()
            got.append(sched.get_last_lr() + _momentum(opt))
        _close(got, want)


def test_one_cycle_errors_as_pytorch():
    def errors(lib):
        s, out = lib.optim.lr_scheduler, []
        for kind, kw in (("SGD", dict(max_lr=1.0)), ("SGD", dict(max_lr=1.0, total_steps=0)),
                         ("SGD", dict(max_lr=1.0, total_steps=2.5)),
                         ("SGD", dict(max_lr=1.0, epochs=0, steps_per_epoch=3)),
                         ("SGD", dict(max_lr=1.0, epochs=2, steps_per_epoch=-1)),
                         ("SGD", dict(max_lr=1.0, total_steps=9, pct_start=1)),
                         ("SGD", dict(max_lr=1.0, total_steps=9, pct_start=1.5)),
                         ("SGD", dict(max_lr=1.0, total_steps=9, anneal_strategy="exp")),
                         ("SGD", dict(max_lr=[1.0], total_steps=9)),
                         ("SGD", dict(max_lr=1.0, total_steps=9, max_momentum=[0.9] * 3)),
                         ("Adagrad", dict(max_lr=1.0, total_steps=9))):
            with pytest.raises(ValueError) as info:
                s.OneCycleLR(_opt(lib, kind), **kw)
            out.append(str(info.value))
        return out
    assert errors(mg) == errors(torch)


class Shrink:
    """A custom scale function with an attribute: CyclicLR's state dict saves it."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x):
        return self.rate ** x


CYCLIC = [("SGD", dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
          ("SGD", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=3, step_size_down=5,
                       mode="triangular2", base_momentum=[0.7, 0.8], max_momentum=0.95)),
          ("Adam", dict(base_lr=0.001, max_lr=0.01, step_size_up=5, mode="exp_range",
                        gamma=0.97)),
          ("SGD", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, scale_fn=Shrink(0.9),
                       scale_mode="iterations")),
          ("Adagrad", dict(base_lr=0.05, max_lr=0.5, step_size_up=3, mode="triangular2",
                           cycle_momentum=False))]


def _cyclic(lib, kind, kw):
    kw = dict(kw, scale_fn=Shrink(0.9)) if "scale_fn" in kw else kw  # one object per run
    return lib.optim.lr_scheduler.CyclicLR(_opt(lib, kind), **kw)


@pytest.mark.parametrize("kind,kw", CYCLIC)
def test_cyclic_as_pytorch(kind, kw):
    got, states, scheds = {}, {}, {}
    for lib in (torch, mg):
        sched = _cyclic(lib, kind, kw)
        trace = [sched.get_last_lr() + _momentum(sched.optimizer)]
        for _ in range(30):
            sched.optimizer.step()
            sched.step()
            trace.append(sched.get_last_lr() + _momentum(sched.optimizer))
        if "scale_fn" in kw:
            sched._scale_fn_custom.rate = 0.8  # changed in training: the state dict keeps it
        got[lib], states[lib], scheds[lib] = trace, sched.state_dict(), sched
    _close(got[mg], got[torch])
    assert states[mg] == states[torch]
    resumed = {}  # each from the other's state dict
    for lib, other in ((mg, torch), (torch, mg)):
        sched = _cyclic(lib, kind, kw)
        sched.load_state_dict(dict(states[other]))
        if "scale_fn" in kw:
            assert sched._scale_fn_custom.rate == 0.8
        resumed[lib] = []
        for _ in range(5):
            sched.optimizer.step()
            sched.step()
            resumed[lib].append(sched.get_last_lr() + _momentum(sched.optimizer))
    going_on = []  # the uninterrupted run
    for _ in range(5):
        scheds[torch].optimizer.step()
        scheds[torch].step()
        going_on.append(scheds[torch].get_last_lr() + _momentum(scheds[torch].optimizer))
    _close(resumed[mg], going_on)
    _close(resumed[torch], going_on)


def test_cyclic_errors_as_pytorch():
    def errors(lib):
        out = []
        for kind, kw in (("SGD", dict(base_lr=0.1, max_lr=1.0, mode="sawtooth")),
                         ("SGD", dict(base_lr=[0.1], max_lr=1.0)),
                         ("Adagrad", dict(base_lr=0.1, max_lr=1.0))):
            with pytest.raises(ValueError) as info:
                lib.optim.lr_scheduler.CyclicLR(_opt(lib, kind), **kw)
            out.append(str(info.value))
        return out
    assert errors(mg) == errors(torch)


def test_cycles_step_epoch_as_pytorch():
    """Neither has a closed form: step(epoch) sets last_epoch and evaluates the schedule
    there (with PyTorch's warning), and plain steps go on from it."""
    got = {}
    for lib in (torch, mg):
        s = lib.optim.lr_scheduler
        one = s.OneCycleLR(_opt(lib), max_lr=0.5, total_steps=20)
        cyc = s.CyclicLR(_opt(lib, "Adam"), 0.001, 0.01, step_size_up=4, mode="exp_range",
                         gamma=0.9)
        trace = []
        for sched in (one, cyc):
            for epoch in (7, 3):
                with pytest.warns(UserWarning, match="epoch parameter"):
                    sched.step(epoch)
                sched.optimizer.step()
                sched.step()
                trace.append(sched.get_last_lr() + _momentum(sched.optimizer) + [sched.last_epoch])
        got[lib] = trace
    _close(got[mg], got[torch])
