"""Every schedule's state dict through a file: saved by `torch.save` and read by
`minigrad.load` (weights_only, the default), or saved and read by minigrad, it resumes a
minigrad schedule, which then goes on as PyTorch's uninterrupted one."""
import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _opt(lib):
    return lib.optim.SGD([{"params": [lib.ones(2, requires_grad=True)]},
                          {"params": [lib.ones(1, requires_grad=True)], "lr": 0.05}],
                         lr=0.1, momentum=0.9)


BUILDERS = {
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, [2, 6, 6], 0.5),
    "ConstantLR": lambda s, o: s.ConstantLR(o, 0.5, total_iters=7),
    "LinearLR": lambda s, o: s.LinearLR(o, 0.2, total_iters=8),
    "PolynomialLR": lambda s, o: s.PolynomialLR(o, 10, 2.0),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, 7, 0.001),
    "MultiplicativeLR": lambda s, o: s.MultiplicativeLR(o, lambda epoch: 0.9),
    "SequentialLR": lambda s, o: s.SequentialLR(o, [s.LinearLR(o, 0.1, total_iters=3),
                                                    s.ExponentialLR(o, 0.9)], [3]),
    "ChainedScheduler": lambda s, o: s.ChainedScheduler([s.ConstantLR(o, 0.5, total_iters=6),
                                                         s.ExponentialLR(o, 0.9)]),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, 0.5, total_steps=12, three_phase=True),
    "CyclicLR": lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3, mode="triangular2"),
    "ReduceLROnPlateau": lambda s, o: s.ReduceLROnPlateau(o, patience=0, factor=0.5),
}
LOSSES = [1.0, 0.8, 0.9, 0.95, 0.7, 0.75, 0.8, 0.85, 0.9, 0.6]


def _step(sched, i):
    sched.optimizer.step()
    if isinstance(sched, (torch.optim.lr_scheduler.ReduceLROnPlateau,
                          mg.optim.lr_scheduler.ReduceLROnPlateau)):
        sched.step(LOSSES[i])
    else:
        sched.step()
    return sched.get_last_lr() + [g.get("momentum") for g in sched.optimizer.param_groups]


@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step()`")
@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_state_through_files(name, tmp_path):
    build = BUILDERS[name]
    sched = build(torch.optim.lr_scheduler, _opt(torch))
    for i in range(5):
        _step(sched, i)
    torch.save({"optimizer": sched.optimizer.state_dict(), "scheduler": sched.state_dict()},
               tmp_path / "torch.pt")
    want = [_step(sched, i) for i in range(5, 10)]

    mine = build(mg.optim.lr_scheduler, _opt(mg))
    for i in range(5):
        _step(mine, i)
    mg.save({"optimizer": mine.optimizer.state_dict(), "scheduler": mine.state_dict()},
            tmp_path / "mine.pt")
    for path in ("torch.pt", "mine.pt"):
        ckpt = mg.load(tmp_path / path)
        opt = _opt(mg)
        resumed = build(mg.optim.lr_scheduler, opt)
        opt.load_state_dict(ckpt["optimizer"])
        resumed.load_state_dict(ckpt["scheduler"])
        got = [_step(resumed, i) for i in range(5, 10)]
        np.testing.assert_allclose(np.array(got, float), np.array(want, float), rtol=1e-12,
                                   atol=1e-15, err_msg=path)
