"""The second-order tutorial's numbers, recomputed with PyTorch.

The tutorial (`tutorials/05_gradients_of_gradients.py`) checks itself against hand formulas and
finite differences; it never imports torch, which is not a run-time dependency. Here it runs
once in small mode, in this process, and the values it computed (derivatives, the Hessian and
Hessian-vector product of its MLP, the loss of every training step with the gradient penalty,
the Jacobians from both modes) are recomputed from the same inputs with PyTorch.
"""
from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

TUTORIAL = Path(__file__).resolve().parents[1] / "tutorials" / "05_gradients_of_gradients.py"


@pytest.fixture(scope="module")
def ns(tmp_path_factory):
    """The tutorial's global variables after a small-mode run."""
    out = tmp_path_factory.mktemp("a2_out")
    saved_common = sys.modules.pop("_common", None)  # it reads the settings when imported
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MINIGRAD_TUTORIAL_SMALL", "1")
        mp.setenv("MINIGRAD_TUTORIAL_OUT", str(out))
        mp.syspath_prepend(str(TUTORIAL.parent))
        try:
            namespace = runpy.run_path(str(TUTORIAL), run_name="a2_tutorial")
        finally:
            sys.modules.pop("_common", None)
            if saved_common is not None:
                sys.modules["_common"] = saved_common
    return namespace


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny tensors: more threads only fight over the cores (a step took 0.2 s instead of 1 ms)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def t64(a, requires_grad=False):
    return torch.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def test_second_and_third_derivatives_match_torch(ns):
    x = t64(ns["X0"], requires_grad=True)
    f = x ** 3 * torch.tanh(x)
    (d1,) = torch.autograd.grad(f, x, create_graph=True)
    (d2,) = torch.autograd.grad(d1, x)
    np.testing.assert_allclose([ns["f0"], ns["df0"], ns["d2f0"]],
                               [f.item(), d1.item(), d2.item()], rtol=1e-13)

    xg = t64(ns["xs"], requires_grad=True)
    (g1,) = torch.autograd.grad((xg ** 3 * torch.tanh(xg)).sum(), xg, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), xg)
    np.testing.assert_allclose(ns["d1_grid"], g1.detach().numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ns["d2_grid"], g2.numpy(), rtol=1e-12, atol=1e-14)

    x2 = t64(2.0, requires_grad=True)
    (a,) = torch.autograd.grad(x2 ** 4, x2, create_graph=True)
    (b,) = torch.autograd.grad(a, x2, create_graph=True)
    (c,) = torch.autograd.grad(b, x2)
    assert (ns["g1"].item(), ns["g2"].item(), ns["g3"].item()) == (a.item(), b.item(), c.item())


def torch_mlp_loss(ns):
    X, Y, width = t64(ns["X_data"]), t64(ns["Y_data"]), ns["WIDTH"]
    shapes = [(width, 4), (width,), (1, width), (1,)]

    def loss(theta):
        parts, i = [], 0
        for shape in shapes:
            size = int(np.prod(shape))
            parts.append(theta[i:i + size].reshape(shape))
            i += size
        W1, b1, W2, b2 = parts
        h = torch.tanh(X @ W1.T + b1)
        return ((h @ W2.T + b2 - Y) ** 2).mean()

    return loss


def test_mlp_hessian_hvp_and_top_eigenvalue_match_torch(ns):
    loss = torch_mlp_loss(ns)
    theta, v = t64(ns["theta0"]), t64(ns["v_np"])
    H = torch.autograd.functional.hessian(loss, theta)
    _, Hv = torch.autograd.functional.hvp(loss, theta, v)
    np.testing.assert_allclose(ns["H_np"], H.numpy(), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(ns["Hv_np"], Hv.numpy(), rtol=1e-10, atol=1e-13)
    eig = torch.linalg.eigvalsh(H)
    top = eig[eig.abs().argmax()].item()
    assert ns["lam_power"] == pytest.approx(top, rel=1e-6)


def test_gradient_penalty_training_matches_torch(ns):
    """The same model, data, random penalty points and Adam steps, in PyTorch."""
    layers = [torch.nn.Linear(1, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32), torch.nn.Tanh(),
              torch.nn.Linear(32, 1)]
    model = torch.nn.Sequential(*layers).double()
    with torch.no_grad():
        for p, value in zip(model.parameters(), ns["init_state"]):
            p.copy_(t64(value))
    opt = torch.optim.Adam(model.parameters(), lr=ns["LR"])
    x, y = t64(ns["x_train"]), t64(ns["y_train"])
    rng = np.random.default_rng(7)  # the tutorial's stream of penalty points
    history = []
    for _ in range(ns["STEPS"]):
        points = t64(rng.uniform(-1, 1, (ns["N_POINTS"], 1)), requires_grad=True)
        opt.zero_grad()
        (gx,) = torch.autograd.grad(model(points).sum(), points, create_graph=True)
        total = ((model(x) - y) ** 2).mean() + ns["LAMBDA"] * (gx ** 2).mean()
        total.backward()
        opt.step()
        history.append(total.item())
    np.testing.assert_allclose(ns["history_pen"], history, rtol=1e-9)

    grid = t64(np.linspace(-1, 1, 101).reshape(-1, 1), requires_grad=True)
    (slope,) = torch.autograd.grad(model(grid).sum(), grid)
    assert ns["slope2_pen"] == pytest.approx(float((slope ** 2).mean()), rel=1e-9)


def test_jacobians_of_both_modes_match_torch(ns):
    k = t64(np.arange(1.0, ns["M_OUT"] + 1))
    t0 = t64(ns["t0"].numpy())

    def fan_out(t):
        return torch.sin(t * k) / k

    J_rev = torch.autograd.functional.jacobian(fan_out, t0)
    J_fwd = torch.autograd.functional.jacobian(fan_out, t0, vectorize=True,
                                               strategy="forward-mode")
    np.testing.assert_allclose(ns["J_out_f"], J_fwd.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ns["J_out_r"], J_rev.numpy(), rtol=1e-13, atol=1e-15)
    import torch.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(fan_out(fwAD.make_dual(t0, torch.ones_like(t0)))).tangent
    np.testing.assert_allclose(ns["J_out_f"].ravel(), tangent.numpy(), rtol=1e-13, atol=1e-15)

    x_in = t64(ns["x_in"].numpy())
    J_in = torch.autograd.functional.jacobian(lambda x: torch.log(1 + x ** 2).sum(), x_in)
    np.testing.assert_allclose(ns["J_in_r"].ravel(), J_in.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ns["J_in_f"].ravel(), J_in.numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(ns["J_lib_f"].ravel(), J_in.numpy(), rtol=1e-13, atol=1e-15)


def test_penalty_of_a_linear_model_matches_torch(ns):
    w = t64(ns["w_q"].detach().numpy(), requires_grad=True)
    x = t64(ns["x_q"].detach().numpy(), requires_grad=True)
    (gx,) = torch.autograd.grad((w * x).sum(), x, create_graph=True)
    penalty = (gx ** 2).sum()
    (gw,) = torch.autograd.grad(penalty, w)
    assert ns["penalty_q"].item() == pytest.approx(penalty.item(), rel=1e-14)
    np.testing.assert_allclose(ns["gw_q"].numpy(), gw.numpy(), rtol=1e-14)
