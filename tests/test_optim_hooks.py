"""Optimizer hooks against PyTorch: step pre- and post-hooks (an optimizer's own and the
global ones, in PyTorch's order, with the optimizer first in `args`, a pre-hook replacing the
arguments), on built-in optimizers and on a custom subclass that overrides `step`; the
state-dict hooks (pre, post replacing the dict, prepend) and the load hooks; removal."""
import importlib

import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def _events(lib):
    log = []
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    optimizer_module = importlib.import_module(f"{lib.__name__}.optim.optimizer")

    class Halving(lib.optim.Optimizer):  # a custom optimizer, as users write them
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        def step(self, closure=None):
            log.append("Halving.step")
            with lib.no_grad():
                for group in self.param_groups:
                    for p in group["params"]:
                        p.mul_(1 - group["lr"])

    for opt in (lib.optim.SGD([w], lr=0.1), lib.optim.RMSprop([w]), Halving([w])):
        name = type(opt).__name__

        def pre(o, args, kwargs, name=name):
            log.append(("pre", name, o is args[0], len(args), sorted(kwargs)))
            if kwargs.get("closure") == "replace me":
                return (args[0],), {"closure": lambda: log.append("new closure") or 1.0}

        handles = [opt.register_step_pre_hook(pre),
                   opt.register_step_post_hook(
                       lambda o, args, kwargs, name=name: log.append(("post", name, len(args)))),
                   optimizer_module.register_optimizer_step_pre_hook(
                       lambda o, a, k: log.append("global pre")),
                   optimizer_module.register_optimizer_step_post_hook(
                       lambda o, a, k: log.append("global post"))]
        w.grad = lib.tensor([0.5, 0.5])
        opt.step()
        if name != "Halving":
            log.append(("loss", opt.step(closure="replace me")))
        handles[0].remove()
        handles[2].remove()
        opt.step()
        for h in handles:
            h.remove()
        opt.step()  # no hooks left
    return log, w.detach().numpy().tolist()


def test_step_hooks_as_pytorch():
    want, t_w = _events(torch)
    got, m_w = _events(mg)
    assert got == want
    assert m_w == pytest.approx(t_w)


def _state_events(lib):
    log = []
    w = lib.tensor([1.0, -2.0], requires_grad=True)
    opt = lib.optim.Adam([w], lr=0.1)
    w.grad = lib.tensor([0.5, 0.5])
    opt.step()
    opt.register_state_dict_pre_hook(lambda o: log.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: log.append("pre first"), prepend=True)
    opt.register_state_dict_post_hook(
        lambda o, sd: {**sd, "param_groups": [{**g, "note": "hooked"} for g in sd["param_groups"]]})
    handle = opt.register_state_dict_post_hook(lambda o, sd: log.append(sorted(sd)))
    state = opt.state_dict()
    log.append(state["param_groups"][0]["note"])
    handle.remove()

    def load_pre(o, sd):
        log.append(("load pre", sorted(sd)))
        return {**sd, "param_groups": [{**g, "lr": 0.01} for g in sd["param_groups"]]}
    opt.register_load_state_dict_pre_hook(load_pre)
    opt.register_load_state_dict_post_hook(lambda o: log.append(("load post",
                                                                 o.param_groups[0]["lr"])))
    opt.load_state_dict(state)
    log.append(state["param_groups"][0]["lr"])  # the caller's dict is not changed
    return log


def test_state_dict_hooks_as_pytorch():
    assert _state_events(mg) == _state_events(torch)


def test_a_bad_pre_hook_result_is_refused():
    opt = mg.optim.SGD([mg.ones(1, requires_grad=True)], lr=0.1)
    opt.register_step_pre_hook(lambda o, args, kwargs: "oops")
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
