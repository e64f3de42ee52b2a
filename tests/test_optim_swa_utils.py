"""torch.optim.swa_utils against PyTorch: AveragedModel with the default mean, an EMA
(multi_avg_fn and avg_fn), averaged buffers, its state dict; SWALR's rates on its own and
after another schedule, resumed from the other library's state dict; the errors."""
import numpy as np
import pytest

import minigrad as mg
from helpers import assert_same_state

torch = pytest.importorskip("torch")


def _model(lib, start):
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Linear(4, 2))
    net.load_state_dict({k: lib.tensor(v) for k, v in start.items()})
    return net


def _start():
    net = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                              torch.nn.Linear(4, 2))
    return {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}


def _averaged(lib, start, make, steps=5):
    """Train with SGD on fixed batches, averaging after each step; returns the averaged
    model's state dict and its output."""
    swa = lib.optim.swa_utils
    model = _model(lib, start)
    averaged = make(swa, model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = lib.tensor(rng.standard_normal((8, 3)).astype(np.float32))
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        averaged.update_parameters(model)
    averaged.eval()
    out = averaged(lib.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)))
    state = {k: np.asarray(v.detach().numpy()) for k, v in averaged.state_dict().items()}
    return state, out.detach().numpy()


MAKERS = {
    "mean": lambda swa, m: swa.AveragedModel(m),
    "ema_multi": lambda swa, m: swa.AveragedModel(m, multi_avg_fn=swa.get_ema_multi_avg_fn(0.7)),
    "ema": lambda swa, m: swa.AveragedModel(m, avg_fn=swa.get_ema_avg_fn(0.6)),
    "swa_multi": lambda swa, m: swa.AveragedModel(m, multi_avg_fn=swa.get_swa_multi_avg_fn()),
    # PyTorch's running mean fails on an integer buffer (num_batches_tracked); its EMA works
    "ema_multi_buffers": lambda swa, m: swa.AveragedModel(
        m, multi_avg_fn=swa.get_ema_multi_avg_fn(0.7), use_buffers=True),
    "swa_fn": lambda swa, m: swa.AveragedModel(m, avg_fn=swa.get_swa_avg_fn()),
}


@pytest.mark.parametrize("kind", sorted(MAKERS))
def test_averaged_model_as_pytorch(kind):
    start = _start()
    want, want_out = _averaged(torch, start, MAKERS[kind])
    got, got_out = _averaged(mg, start, MAKERS[kind])
    assert sorted(got) == sorted(want)
    for k in want:
        assert got[k].dtype == want[k].dtype, k
        # float32 after five steps of training: the last bits follow each library's sums
        np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(got_out, want_out, rtol=1e-5, atol=1e-6)
    assert int(got["n_averaged"]) == 5


def test_the_average_is_not_the_last_weights():
    start = _start()
    mean, _ = _averaged(mg, start, MAKERS["mean"], steps=3)
    last, _ = _averaged(mg, start, MAKERS["mean"], steps=1)  # one update copies the weights
    for k in ("module.0.weight", "module.2.bias"):
        assert not np.allclose(mean[k], last[k])


def test_averaged_model_state_dict_loads_across_libraries():
    start = _start()
    want, _ = _averaged(torch, start, MAKERS["ema_multi"])
    model = mg.optim.swa_utils.AveragedModel(_model(mg, start))
    model.load_state_dict({k: mg.tensor(v) for k, v in want.items()})
    assert int(model.n_averaged.item()) == 5
    np.testing.assert_array_equal(model.module[0].weight.detach().numpy(),
                                  want["module.0.weight"])


def test_averaging_function_errors_as_pytorch():
    for fn in ("get_ema_multi_avg_fn", "get_ema_avg_fn"):
        with pytest.raises(ValueError) as want:
            getattr(torch.optim.swa_utils, fn)(1.5)
        with pytest.raises(ValueError) as got:
            getattr(mg.optim.swa_utils, fn)(1.5)
        assert str(got.value) == str(want.value)
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        swa = mg.optim.swa_utils
        swa.AveragedModel(mg.nn.Linear(2, 2), avg_fn=swa.get_swa_avg_fn(),
                          multi_avg_fn=swa.get_swa_multi_avg_fn())


def _opt(lib):
    return lib.optim.SGD([{"params": [lib.ones(2, requires_grad=True)]},
                          {"params": [lib.ones(1, requires_grad=True)], "lr": 0.5}], lr=1.0)


def _swalr_run(lib, kw, before=0):
    """`before` steps of a cosine decay, then SWALR (as PyTorch's SWA recipe switches)."""
    s = lib.optim.lr_scheduler
    opt = _opt(lib)
    lrs = []
    if before:
        cosine = s.CosineAnnealingLR(opt, T_max=10)
        for _ in range(before):
            opt.step()
            cosine.step()
            lrs.append(cosine.get_last_lr())
    swa = lib.optim.swa_utils.SWALR(opt, **kw)
    lrs.append(swa.get_last_lr())
    for _ in range(8):
        opt.step()
        swa.step()
        lrs.append(swa.get_last_lr())
    return lrs, swa


@pytest.mark.parametrize("kw,before", [(dict(swa_lr=0.05), 0),
                                       (dict(swa_lr=[0.1, 0.01], anneal_epochs=3,
                                             anneal_strategy="linear"), 4),
                                       (dict(swa_lr=0.2, anneal_epochs=0), 2)])
def test_swalr_as_pytorch(kw, before):
    want, t_sched = _swalr_run(torch, kw, before)
    got, m_sched = _swalr_run(mg, kw, before)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-12)
    t_state = t_sched.state_dict()
    assert_same_state(m_sched.state_dict(), t_state)
    m_state = m_sched.state_dict()
    going_on = []  # the uninterrupted run
    for _ in range(3):
        t_sched.optimizer.step()
        t_sched.step()
        going_on.append(t_sched.get_last_lr())
    for lib, state in ((mg, t_state), (torch, m_state)):  # each from the other's state dict
        opt = _opt(lib)
        resumed = lib.optim.swa_utils.SWALR(opt, **kw)
        resumed.load_state_dict(dict(state))
        for g, lr in zip(opt.param_groups, state["_last_lr"]):
            g["lr"] = lr
        lrs = []
        for _ in range(3):
            opt.step()
            resumed.step()
            lrs.append(resumed.get_last_lr())
        np.testing.assert_allclose(np.array(lrs), np.array(going_on), rtol=1e-12)


def test_swalr_errors_as_pytorch():
    for kw in (dict(swa_lr=0.1, anneal_strategy="exp"), dict(swa_lr=0.1, anneal_epochs=-1),
               dict(swa_lr=0.1, anneal_epochs=2.0), dict(swa_lr=[0.1])):
        with pytest.raises(ValueError) as want:
            torch.optim.swa_utils.SWALR(_opt(torch), **kw)
        with pytest.raises(ValueError) as got:
            mg.optim.swa_utils.SWALR(_opt(mg), **kw)
        assert str(got.value) == str(want.value)


def test_update_bn_as_pytorch():
    """The SWA recipe's last step: the averaged model's batch-norm statistics recomputed from
    the data (an equal-weight average over batches), its mode and momentum restored."""
    start = _start()
    rng = np.random.default_rng(3)
    batches = [rng.standard_normal((n, 3)).astype(np.float32) for n in (8, 5, 11)]
    got = {}
    for lib in (torch, mg):
        averaged = lib.optim.swa_utils.AveragedModel(_model(lib, start))
        averaged.eval()
        loader = [(lib.tensor(b), lib.zeros(len(b))) for b in batches]  # (input, target)
        lib.optim.swa_utils.update_bn(loader, averaged)
        norm = averaged.module[1]
        got[lib] = (norm.running_mean.numpy().copy(), norm.running_var.numpy().copy(),
                    int(norm.num_batches_tracked), norm.momentum, averaged.training)
        lib.optim.swa_utils.update_bn([lib.tensor(b) for b in batches[:1]], averaged.module)
        got[lib] += (norm.running_mean.numpy().copy(),)
    for g, w in zip(got[mg], got[torch]):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)
    assert got[mg][2] == 3 and got[mg][4] is False
