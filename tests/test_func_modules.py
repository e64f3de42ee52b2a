"""functional_call (torch.func and torch.nn.utils.stateless) and stack_module_state against
PyTorch: values, tied weights, strict mode, several dicts, buffers, errors, and the module's
own tensors put back after the call."""
import numpy as np
import pytest

import minigrad

RNG = np.random.default_rng(9)
X = RNG.standard_normal((4, 3)).astype(np.float32)


def _weights(lib, module, seed):
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for p in module.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    return module


def _tied(lib):
    class Tied(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = lib.nn.Linear(3, 3)
            self.b = lib.nn.Linear(3, 3)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))
    return _weights(lib, Tied(), 1)


def _net(lib):
    return _weights(lib, lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.BatchNorm1d(5),
                                           lib.nn.ReLU(), lib.nn.Linear(5, 2)), 2)


def _Scaled(lib):
    class Scaled(lib.nn.Module):  # keyword arguments reach forward
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(3))

        def forward(self, x, scale=1.0):
            return x * self.w * scale
    return Scaled


def _np(t):
    return t.detach().numpy()


def _same(torch, program):
    want, got = program(torch), program(minigrad)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        if hasattr(w, "detach"):
            assert tuple(g.shape) == tuple(w.shape)
            np.testing.assert_allclose(_np(g), _np(w), rtol=1e-4, atol=1e-5)
        else:
            assert g == w


def test_functional_call_replaces_parameters_and_buffers(torch):
    def program(lib):
        net = _net(lib)
        x = lib.tensor(X)
        zeros = {"0.weight": lib.zeros(5, 3), "1.running_mean": lib.ones(5)}
        net.eval()
        a = lib.func.functional_call(net, zeros, (x,))
        net.train()
        b = lib.func.functional_call(net, ({"3.bias": lib.ones(2)}, {"0.bias": lib.ones(5)}), x)
        c = lib.nn.utils.stateless.functional_call(_Scaled(lib)(), {"w": lib.ones(3) * 2}, (),
                                                   kwargs={"x": x, "scale": 3.0})
        return a, b, c, net[0].weight, net[1].running_mean, net(x)
    _same(torch, program)


def test_functional_call_ties_weights_unless_asked_not_to(torch):
    def program(lib):
        m, x = _tied(lib), lib.tensor(X)
        w = lib.tensor(np.eye(3, dtype=np.float32) * 2)
        same = lib.func.functional_call(m, {"a.weight": w, "b.weight": w}, (x,))
        return (lib.func.functional_call(m, {"a.weight": w}, (x,)),
                lib.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False), same)
    _same(torch, program)


def test_functional_call_gradients_reach_the_given_tensors(torch):
    def program(lib):
        net = _net(lib)
        params = {k: v.detach().requires_grad_() for k, v in net.named_parameters()}
        loss = lib.func.functional_call(net, params, (lib.tensor(X),)).pow(2).sum()
        loss.backward()
        return [params[k].grad for k in sorted(params)] + [net[0].weight.grad is None]
    _same(torch, program)


def test_functional_call_puts_the_weights_back_after_an_error(torch):
    for lib in (torch, minigrad):
        net = _net(lib)
        before = net[0].weight
        with pytest.raises((RuntimeError, ValueError)):  # minigrad's Linear: a ValueError
            lib.func.functional_call(net, {"0.weight": lib.zeros(5, 4)}, (lib.tensor(X),))
        assert net[0].weight is before and dict(net.named_parameters())["0.weight"] is before


ERRORS = {
    "strict": (lambda lib: lib.func.functional_call(
        lib.nn.Linear(3, 2), {"weight": lib.zeros(2, 3), "foo": lib.zeros(1)},
        (lib.tensor(X),), strict=True), RuntimeError),
    "two dicts": (lambda lib: lib.func.functional_call(
        lib.nn.Linear(3, 2), ({"weight": lib.zeros(2, 3)}, {"weight": lib.zeros(2, 3)}),
        (lib.tensor(X),)), ValueError),
    "tied conflict": (lambda lib: lib.func.functional_call(
        _tied(lib), {"a.weight": lib.zeros(3, 3), "b.weight": lib.ones(3, 3)},
        (lib.tensor(X),)), ValueError),
    "not a dict": (lambda lib: lib.func.functional_call(lib.nn.Linear(3, 2), 3,
                                                        (lib.tensor(X),)), ValueError),
    "no models": (lambda lib: lib.func.stack_module_state([]), RuntimeError),
    "modes": (lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2),
                                                       lib.nn.Linear(2, 2).eval()]),
              RuntimeError),
    "classes": (lambda lib: lib.func.stack_module_state([lib.nn.Linear(2, 2),
                                                         lib.nn.Conv1d(2, 2, 1)]), RuntimeError),
    "requires_grad": (lambda lib: lib.func.stack_module_state(
        [lib.nn.Linear(2, 2), lib.nn.Linear(2, 2).requires_grad_(False)]), RuntimeError),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name, torch):
    program, exc = ERRORS[name]
    with pytest.raises(exc) as want:
        program(torch)
    with pytest.raises(exc) as got:
        program(minigrad)
    assert str(got.value) == str(want.value)


def test_stack_module_state(torch):
    def program(lib):
        models = [_weights(lib, lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4)),
                           s) for s in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        return ([params[k] for k in params] + [buffers[k] for k in buffers]
                + [list(params), list(buffers)]
                + [p.requires_grad and p.grad_fn is None for p in params.values()]
                + [b.requires_grad for b in buffers.values()])
    _same(torch, program)
