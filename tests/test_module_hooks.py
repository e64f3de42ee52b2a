"""nn.Module's hooks against PyTorch's: full backward hooks and pre-hooks (tuples, None for
non-tensors and unreached outputs, replacements, errors, which hooks a call captures), forward
hooks with prepend/with_kwargs/always_call, the global hooks, and the state-dict hooks."""
import numpy as np
import pytest


class TwoOut:
    """A module (built in either library) with two tensor inputs, one non-tensor input and
    two outputs, so the hooks' tuples have every kind of slot."""

    @staticmethod
    def build(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.Parameter(lib.tensor([[1.0, 2.0], [3.0, -1.0]]))

            def forward(self, x, scale, y):
                return (x @ self.w) * scale, y.exp()
        return M()


def run_backward_hooks(lib, use_second):
    m = TwoOut.build(lib)
    log = []

    def pre(mod, grad_output):
        log.append(("pre", [None if g is None else g.numpy().tolist() for g in grad_output]))
        return (grad_output[0] + 1, grad_output[1])

    def full(mod, grad_input, grad_output):
        log.append(("full", [None if g is None else g.numpy().tolist() for g in grad_input]))
        return tuple(None if g is None else g * 10 for g in grad_input)

    m.register_full_backward_pre_hook(pre)
    m.register_full_backward_hook(full)
    x = lib.tensor([[0.5, -0.5]], requires_grad=True)
    y = lib.tensor([0.1, 0.2], requires_grad=True)
    a, b = m(x, 3.0, y)
    loss = a.sum() + (b.sum() if use_second else 0)
    loss.backward()
    return log, x.grad.numpy().tolist(), None if y.grad is None else y.grad.numpy().tolist()


@pytest.mark.parametrize("use_second", [True, False])
def test_full_backward_hooks_as_pytorch(torch, use_second):
    import minigrad
    assert run_backward_hooks(minigrad, use_second) == run_backward_hooks(torch, use_second)


def test_hooks_of_a_call_are_those_registered_before_it(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        m = lib.nn.Linear(2, 2)
        calls = []
        h = m.register_full_backward_hook(lambda *a: calls.append("h"))
        out = m(lib.ones(1, 2, requires_grad=True))
        h.remove()
        m.register_full_backward_pre_hook(lambda *a: calls.append("late"))
        out.sum().backward()
        m(lib.ones(1, 2, requires_grad=True)).sum().backward()
        results.append(calls)
    assert results[0] == results[1] == ["h", "late"]


def test_forward_hook_options_and_errors(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        m = lib.nn.Identity()
        log = []
        m.register_forward_hook(lambda mod, a, out: log.append("b"))
        m.register_forward_hook(lambda mod, a, out: log.append("a"), prepend=True)
        m.register_forward_pre_hook(lambda mod, a: log.append("pre-b"))
        m.register_forward_pre_hook(lambda mod, a: (a[0] * 2,), prepend=True)
        with m.register_forward_hook(lambda mod, a, kw, out: log.append(sorted(kw)),
                                     with_kwargs=True):
            out = m(lib.ones(1))
        out2 = m(lib.ones(1))
        bad = m.register_forward_pre_hook(lambda mod, a, kw: a, with_kwargs=True)
        try:
            m(lib.ones(1))
        except RuntimeError as e:
            log.append(str(e)[:45])
        bad.remove()
        results.append((log, out.tolist(), out2.tolist()))
    assert results[0] == results[1]


def test_global_hooks_run_first_and_for_every_module(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        mm = lib.nn.modules.module
        net = lib.nn.Sequential(lib.nn.Identity(), lib.nn.Identity())
        log = []
        net[0].register_forward_hook(lambda m, a, out: log.append("own"))
        handles = [mm.register_module_forward_hook(lambda m, a, out: log.append(
            type(m).__name__)), mm.register_module_forward_pre_hook(lambda m, a: log.append(
                "pre")), mm.register_module_full_backward_hook(lambda m, gi, go: log.append(
                    ("back", type(m).__name__)))]
        try:
            net(lib.ones(2, requires_grad=True)).sum().backward()
        finally:
            for h in handles:
                h.remove()
        net(lib.ones(2))
        results.append(log)
    assert results[0] == results[1]


def test_always_call_hook_runs_when_forward_raises(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("broken forward")
        m = Bad()
        log = []
        m.register_forward_hook(lambda mod, a, out: log.append(("always", out)),
                                always_call=True)
        m.register_forward_hook(lambda mod, a, out: log.append("never"))
        m.register_forward_hook(lambda mod, a, out: 1 / 0, always_call=True)
        with pytest.warns(UserWarning, match="silenced"), pytest.raises(ValueError,
                                                                        match="broken"):
            m(lib.ones(1))
        results.append(log)
    assert results[0] == results[1] == [("always", None)]


def test_state_dict_hooks(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        net = lib.nn.Sequential(lib.nn.Linear(2, 2))
        with lib.no_grad():
            net[0].weight.fill_(1.0)
            net[0].bias.fill_(0.5)
        log = []
        net[0]._register_state_dict_hook(
            lambda m, sd, prefix, meta: {k.upper(): v for k, v in sd.items()})
        keys = list(net.state_dict())
        with pytest.raises(RuntimeError, match="must return None"):
            net.register_state_dict_post_hook(lambda m, sd, p, meta: sd)
            net.state_dict()

        def pre(sd, prefix, meta, strict, missing, unexpected, errors):
            log.append(("pre", prefix, sorted(sd)))
            sd[prefix + "bias"] = sd.pop(prefix + "b")
        net[0]._register_load_state_dict_pre_hook(pre)
        net.register_load_state_dict_post_hook(lambda m, keys: log.append(
            ("post", type(m).__name__, list(keys.missing_keys),
             list(keys.unexpected_keys))))
        net.load_state_dict({"0.weight": lib.zeros(2, 2), "0.b": lib.full((2,), 3.0)})
        with pytest.raises(RuntimeError, match="Unexpected key|unexpected keys"):
            net.load_state_dict({"0.weight": lib.zeros(2, 2), "0.b": lib.zeros(2),
                                 "extra": lib.zeros(1)})

        def errs(sd, prefix, meta, strict, missing, unexpected, errors):
            errors.append("refused by a hook")
        net[0]._register_load_state_dict_pre_hook(errs)
        with pytest.raises(RuntimeError, match="refused by a hook"):
            net.load_state_dict({"0.weight": lib.zeros(2, 2), "0.b": lib.zeros(2)})
        results.append((keys, log, net[0].bias.detach().numpy().tolist()))
    assert results[0] == results[1]


def test_hooked_module_gradients_match_gradcheck():
    import minigrad as mg
    from minigrad.autograd import gradcheck
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    y = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    m = mg.nn.Bilinear(2, 3, 2).double()
    hooks = [m.register_full_backward_hook(lambda mod, gi, go: None),
             m.register_full_backward_pre_hook(lambda mod, go: None)]
    assert gradcheck(m, (x, y))  # hooks that change nothing leave the gradients exact
    x.grad = y.grad = None
    m(x, y).sum().backward()
    want = x.grad.numpy().copy(), y.grad.numpy().copy()
    for h in hooks:
        h.remove()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2, gi[1]))
    x.grad = y.grad = None
    m(x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * want[0])
    np.testing.assert_allclose(y.grad.numpy(), want[1])


def test_hooked_module_in_a_gradient_penalty(torch):
    """create_graph=True through a module with a full backward hook: the gradient is
    differentiated again, and the hook runs in both passes, as in PyTorch."""
    import minigrad
    results = []
    for lib in (torch, minigrad):
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [0.5, -1.0]]))
            m.bias.fill_(0.1)
        seen = []
        m.register_full_backward_hook(lambda mod, gi, go: seen.append(gi[0].sum().item()))
        x = lib.tensor([[0.3, -0.7]], requires_grad=True)
        g, = lib.autograd.grad(m(x).tanh().square().sum(), x, create_graph=True)
        g.square().sum().backward()
        results.append((g.detach().numpy(), x.grad.numpy(), m.weight.grad.numpy(),
                        np.array(seen)))
    for want, got in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_registration_hooks_replace_what_is_registered(torch):
    import minigrad
    results = []
    for lib in (torch, minigrad):
        mm = lib.nn.modules.module
        handles = [mm.register_module_parameter_registration_hook(
                       lambda m, name, p: lib.nn.Parameter(p.detach() * 0 + 2)),
                   mm.register_module_buffer_registration_hook(
                       lambda m, name, b: None if b is None else b + 1),
                   mm.register_module_module_registration_hook(
                       lambda m, name, sub: lib.nn.Identity() if name == "drop" else None)]
        m = lib.nn.Module()
        try:
            m.w = lib.nn.Parameter(lib.ones(2))
            m.register_buffer("b", lib.zeros(2))
            m.drop = lib.nn.Dropout()
        finally:
            for h in handles:
                h.remove()
        m.v = lib.nn.Parameter(lib.ones(1))
        results.append((m.w.tolist(), m.b.tolist(), type(m.drop).__name__, m.v.tolist(),
                        [n for n, _ in m.named_parameters()]))
    assert results[0] == results[1]
