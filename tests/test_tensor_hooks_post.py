"""Tensor.register_post_accumulate_grad_hook beside PyTorch's: when it runs, what it sees, its
errors, and the pattern it exists for, an optimizer stepped inside backward one parameter at a
time."""
import numpy as np
import pytest


def _train_with_optimizer_in_backward(lib, steps=3):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 1))
    optimizers = {p: lib.optim.Adam([p], lr=0.05) for p in model.parameters()}

    def step(p):
        optimizers[p].step()
        optimizers[p].zero_grad()
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    x = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4))
    losses = []
    for _ in range(steps):
        loss = (model(x) - 0.5).square().mean()
        loss.backward()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()], [
        p.grad for p in model.parameters()]


def test_an_optimizer_stepped_in_backward_trains_as_pytorchs(torch):
    import minigrad as mg
    ours, theirs = _train_with_optimizer_in_backward(mg), _train_with_optimizer_in_backward(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert all(g is None for g in ours[2]) and all(g is None for g in theirs[2])


@pytest.mark.parametrize("how", ["backward", "inputs", "create_graph", "grad"])
def test_when_the_hook_runs_and_what_it_sees(torch, how):
    import minigrad as mg
    seen = {}
    for lib in (torch, mg):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        calls = []
        handle = x.register_post_accumulate_grad_hook(
            lambda t: calls.append((t is x, t.grad.detach().numpy().tolist())))
        for k in (2.0, 3.0):
            y = (x ** 2 * k).sum()
            if how == "backward":
                y.backward()
            elif how == "inputs":
                lib.autograd.backward(y, inputs=[x])
            elif how == "create_graph":
                x.grad = None
                import warnings
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")   # PyTorch's reference-cycle warning
                    y.backward(create_graph=True)
            else:
                lib.autograd.grad(y, x)   # accumulates nothing: no call
        handle.remove()
        (x * 1).sum().backward()          # removed: no call
        seen[lib] = calls
    assert seen[mg] == seen[torch]


def test_errors_as_pytorchs(torch):
    import minigrad as mg
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
            (lib.ones(1, requires_grad=True) * 2).register_post_accumulate_grad_hook(print)
        with pytest.raises(RuntimeError, match="doesn't require gradient"):
            lib.ones(1).register_post_accumulate_grad_hook(print)
