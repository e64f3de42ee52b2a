"""Learning-rate schedulers against PyTorch: StepLR resumed with last_epoch=N (chained from
the optimizer's current rate), step(epoch) (the closed form, with PyTorch's warning), and
LambdaLR's state dict (`lr_lambdas`: None for a function, a callable object's attributes),
loaded across the two libraries."""
import warnings

import pytest

import minigrad as mg
from helpers import assert_same_state

torch = pytest.importorskip("torch")


class Decay:
    """A callable object: its attributes are saved in LambdaLR's state dict."""

    def __init__(self, rate):
        self.rate = rate

    def __call__(self, epoch):
        return self.rate ** epoch


def _opt(lib, lr=0.1):
    return lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=lr)


def _lrs(sched, n):
    out = []
    for _ in range(n):
        sched.optimizer.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


@pytest.mark.parametrize("lr", [0.1, 0.025])  # an undecayed and an already decayed rate
def test_steplr_built_with_last_epoch_continues_as_pytorch(lr):
    got = {}
    for lib in (torch, mg):
        opt = _opt(lib, lr)
        opt.param_groups[0]["initial_lr"] = 0.1
        sched = lib.optim.lr_scheduler.StepLR(opt, 2, 0.5, last_epoch=4)
        got[lib] = [sched.get_last_lr()[0]] + _lrs(sched, 6)
    assert got[mg] == pytest.approx(got[torch], rel=1e-12)


def test_steplr_step_epoch_is_the_closed_form_with_pytorch_warning():
    got, warned = {}, {}
    for lib in (torch, mg):
        sched = lib.optim.lr_scheduler.StepLR(_opt(lib), 3, 0.1)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            sched.step(7)
        got[lib] = sched.get_last_lr()[0]
        warned[lib] = [str(w.message) for w in seen if "epoch parameter" in str(w.message)]
    assert got[mg] == pytest.approx(got[torch], rel=1e-12) and got[mg] == pytest.approx(1e-3)
    assert warned[mg] == warned[torch] and warned[mg]


def test_lambdalr_state_dict_as_pytorch_and_across_libraries():
    scheds = {}
    for lib in (torch, mg):
        sched = lib.optim.lr_scheduler.LambdaLR(_opt(lib), [Decay(0.5)])
        _lrs(sched, 3)
        sched.lr_lambdas[0].rate = 0.8  # changed during training: the state dict keeps it
        scheds[lib] = sched
    t_state, m_state = scheds[torch].state_dict(), scheds[mg].state_dict()
    assert_same_state(m_state, t_state)
    assert m_state["lr_lambdas"] == [{"rate": 0.8}]
    assert mg.optim.lr_scheduler.LambdaLR(_opt(mg), lambda e: 1.0).state_dict()["lr_lambdas"] \
        == torch.optim.lr_scheduler.LambdaLR(_opt(torch), lambda e: 1.0).state_dict()["lr_lambdas"]
    # each resumes from the other's state dict (after the optimizer's) and continues alike
    want = _lrs(scheds[torch], 3)
    for lib, state, other in ((mg, t_state, torch), (torch, m_state, mg)):
        opt = _opt(lib)
        opt.load_state_dict(
            {"state": {}, "param_groups": scheds[other].optimizer.state_dict()["param_groups"]})
        resumed = lib.optim.lr_scheduler.LambdaLR(opt, [Decay(0.5)])
        resumed.load_state_dict(dict(state))
        assert resumed.lr_lambdas[0].rate == 0.8
        opt.param_groups[0]["lr"] = state["_last_lr"][0]
        assert _lrs(resumed, 3) == pytest.approx(want, rel=1e-12)
    with pytest.raises(ValueError, match="lr_lambdas"):
        scheds[mg].load_state_dict({**m_state, "lr_lambdas": [None, None]})


@pytest.mark.parametrize("T_mult,eta_min", [(1, 0.0), (2, 0.01), (3, 0.0)])
def test_cosine_warm_restarts_as_pytorch(T_mult, eta_min):
    got, states = {}, {}
    for lib in (torch, mg):
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(lib), 2, T_mult, eta_min)
        lrs = [sched.get_last_lr()[0]] + _lrs(sched, 12)
        for epoch in range(6):  # PyTorch's documented per-batch use: fractional epochs
            for batch in range(3):
                sched.step(epoch + batch / 3)
                lrs.append(sched.get_last_lr()[0])
        sched.step(20)
        lrs.append(sched.get_last_lr()[0])
        got[lib], states[lib] = lrs, sched.state_dict()
    assert got[mg] == pytest.approx(got[torch], rel=1e-12, abs=1e-15)
    assert_same_state(states[mg], states[torch])


def test_cosine_warm_restarts_resume_and_errors():
    got = {}
    for lib in (torch, mg):
        opt = _opt(lib)
        opt.param_groups[0]["initial_lr"] = 0.1
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, 3, last_epoch=4)
        got[lib] = [sched.get_last_lr()[0]] + _lrs(sched, 5)
    assert got[mg] == pytest.approx(got[torch], rel=1e-12)
    for args in ((0,), (2.0,), (2, 0), (2, 1, "0")):
        with pytest.raises(ValueError) as want:
            torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(torch), *args)
        with pytest.raises(ValueError, match="Expected") as have:
            mg.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(mg), *args)
        assert str(have.value) == str(want.value)
    sched = mg.optim.lr_scheduler.CosineAnnealingWarmRestarts(_opt(mg), 2)
    with pytest.raises(ValueError, match="non-negative epoch"):
        sched.step(-1)


def test_exponential_lr_as_pytorch():
    got = {}
    for lib in (torch, mg):
        sched = lib.optim.lr_scheduler.ExponentialLR(_opt(lib), 0.7)
        lrs = [sched.get_last_lr()[0]] + _lrs(sched, 4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.step(6)
        lrs.append(sched.get_last_lr()[0])
        opt = _opt(lib, lr=0.05)  # resumed: continues from the optimizer's rate
        opt.param_groups[0]["initial_lr"] = 0.1
        resumed = lib.optim.lr_scheduler.ExponentialLR(opt, 0.7, last_epoch=3)
        lrs += [resumed.get_last_lr()[0]] + _lrs(resumed, 2)
        got[lib] = lrs
        assert "_constructing" not in resumed.state_dict()
    assert got[mg] == pytest.approx(got[torch], rel=1e-12)


# every scheduler class of both libraries, built as a user builds it (an optimizer whose
# momentum the cyclic schedules drive)
BUILDS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, lambda e: 0.9),
    "StepLR": lambda S, o: S.StepLR(o, 2),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, [1, 3]),
    "ConstantLR": lambda S, o: S.ConstantLR(o),
    "LinearLR": lambda S, o: S.LinearLR(o),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, 0.9),
    "SequentialLR": lambda S, o: S.SequentialLR(o, [S.ConstantLR(o), S.ExponentialLR(o, 0.9)],
                                                [2]),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, 10),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler([S.ConstantLR(o),
                                                         S.ExponentialLR(o, 0.9)]),
    "ReduceLROnPlateau": lambda S, o: S.ReduceLROnPlateau(o, patience=0),
    "CyclicLR": lambda S, o: S.CyclicLR(o, 0.01, 0.1, step_size_up=2),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, 3),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, 0.1, total_steps=10),
}


def _run(lib, name, steps):
    opt = lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1, momentum=0.9)
    sched = BUILDS[name](lib.optim.lr_scheduler, opt)
    for i in range(steps):
        opt.step()
        if name == "ReduceLROnPlateau":
            sched.step(1.0 + i)
        else:
            sched.step()
    return sched


def test_every_scheduler_class_is_listed():
    module = torch.optim.lr_scheduler
    names = {n for n in dir(module) if not n.startswith("_") and n != "LRScheduler"
             and isinstance(getattr(module, n), type)
             and issubclass(getattr(module, n), module.LRScheduler)}
    assert names == set(BUILDS)


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_state_dict_has_pytorchs_keys_and_bookkeeping(name):
    for steps in (0, 3):
        want, got = _run(torch, name, steps).state_dict(), _run(mg, name, steps).state_dict()
        assert sorted(got) == sorted(want)
        for key in ("_step_count", "_is_initial", "_get_lr_called_within_step", "last_epoch"):
            assert got.get(key) == want.get(key), key
        for inner_got, inner_want in zip(got.get("_schedulers", []),
                                         want.get("_schedulers", [])):
            assert sorted(inner_got) == sorted(inner_want)
            assert inner_got["_step_count"] == inner_want["_step_count"]


@pytest.mark.parametrize("name", sorted(BUILDS))
def test_pytorchs_state_dict_loads_and_the_schedule_goes_on_alike(name):
    saved = _run(torch, name, 3)
    state, opt_state = saved.state_dict(), saved.optimizer.state_dict()
    rates = {}
    for lib in (torch, mg):
        sched = _run(lib, name, 0)
        sched.optimizer.load_state_dict(opt_state if lib is torch else {
            "state": {}, "param_groups": opt_state["param_groups"]})
        sched.load_state_dict(dict(state))
        assert sched.state_dict()["_step_count" if "_step_count" in state else "_last_lr"] \
            == state["_step_count" if "_step_count" in state else "_last_lr"]
        rates[lib] = []
        for i in range(4):
            sched.optimizer.step()
            sched.step(2.0) if name == "ReduceLROnPlateau" else sched.step()
            rates[lib] += sched.get_last_lr()
    assert rates[mg] == pytest.approx(rates[torch], rel=1e-12)


def test_get_lr_within_step_is_true_only_while_step_computes_the_rates():
    seen = {}
    for lib in (torch, mg):
        class Watched(lib.optim.lr_scheduler.StepLR):
            def get_lr(self):
                seen.setdefault(lib, []).append(self._get_lr_called_within_step)
                return super().get_lr()
        sched = Watched(_opt(lib), 2)
        sched.optimizer.step()
        sched.step()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sched.get_lr()
        assert sched._get_lr_called_within_step is False
    assert seen[mg] == seen[torch] == [True, True, False]
