"""Port test: a RealNVP normalizing flow on two moons, written as the widely copied notebook
writes it: affine coupling layers with alternating binary masks held in an
`nn.Parameter(masks, requires_grad=False)`, scale and translation networks in `ModuleList`s
built from lambdas, `x.new_zeros` for the log-determinant, a `MultivariateNormal` prior from
`torch.distributions`, the optimizer given `[p for p in flow.parameters() if p.requires_grad
== True]` and `loss.backward(retain_graph=True)`. The moons are made in the program (as
scikit-learn's `make_moons`, with NumPy noise), fresh each step.

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights: the losses, the
log-densities on a grid, the inverse pass (z to x) of fixed normal draws and the final
weights must agree; in each library the inverse undoes the forward pass, and the prior's
log_prob equals that of `Independent(Normal(0, 1), 1)`."""
import math

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def make_moons(n_samples, noise, rng):
    n_out = n_samples // 2
    n_in = n_samples - n_out
    outer = np.stack([np.cos(np.linspace(0, math.pi, n_out)),
                      np.sin(np.linspace(0, math.pi, n_out))], 1)
    inner = np.stack([1 - np.cos(np.linspace(0, math.pi, n_in)),
                      1 - np.sin(np.linspace(0, math.pi, n_in)) - .5], 1)
    X = np.concatenate([outer, inner])
    return X + rng.normal(scale=noise, size=X.shape)


def realnvp_program(torch, init=None, steps=30, hidden=32):
    nn = torch.nn
    distributions = torch.distributions
    torch.manual_seed(0)
    rng = np.random.RandomState(0)

    class RealNVP(nn.Module):
        def __init__(self, nets, nett, mask, prior):
            super(RealNVP, self).__init__()
            self.prior = prior
            self.mask = nn.Parameter(mask, requires_grad=False)
            self.t = torch.nn.ModuleList([nett() for _ in range(len(mask))])
            self.s = torch.nn.ModuleList([nets() for _ in range(len(mask))])

        def g(self, z):
            x = z
            for i in range(len(self.t)):
                x_ = x * self.mask[i]
                s = self.s[i](x_) * (1 - self.mask[i])
                t = self.t[i](x_) * (1 - self.mask[i])
                x = x_ + (1 - self.mask[i]) * (x * torch.exp(s) + t)
            return x

        def f(self, x):
            log_det_J, z = x.new_zeros(x.shape[0]), x
            for i in reversed(range(len(self.t))):
                z_ = self.mask[i] * z
                s = self.s[i](z_) * (1 - self.mask[i])
                t = self.t[i](z_) * (1 - self.mask[i])
                z = (1 - self.mask[i]) * (z - t) * torch.exp(-s) + z_
                log_det_J -= s.sum(dim=1)
            return z, log_det_J

        def log_prob(self, x):
            z, logp = self.f(x)
            return self.prior.log_prob(z) + logp

        def sample(self, batchSize):
            z = self.prior.sample((batchSize, 1))
            x = self.g(z)
            return x

    nets = lambda: nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(),  # noqa: E731
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(),
                                 nn.Linear(hidden, 2), nn.Tanh())
    nett = lambda: nn.Sequential(nn.Linear(2, hidden), nn.LeakyReLU(),  # noqa: E731
                                 nn.Linear(hidden, hidden), nn.LeakyReLU(),
                                 nn.Linear(hidden, 2))
    masks = torch.from_numpy(np.array([[0, 1], [1, 0]] * 3).astype(np.float32))
    prior = distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))
    flow = RealNVP(nets, nett, masks, prior)
    if init is not None:
        flow.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(flow)

    trainable = [p for p in flow.parameters() if p.requires_grad == True]  # noqa: E712
    optimizer = torch.optim.Adam(trainable, lr=3e-3)
    losses = []
    for t in range(steps):
        noisy_moons = make_moons(n_samples=100, noise=.05, rng=rng).astype(np.float32)
        loss = -flow.log_prob(torch.from_numpy(noisy_moons)).mean()
        optimizer.zero_grad()
        loss.backward(retain_graph=True)
        optimizer.step()
        losses.append(loss.item())

    # density on a grid, and samples pushed through the inverse from fixed draws
    xs = np.linspace(-1.5, 2.5, 9, dtype=np.float32)
    grid = torch.from_numpy(np.stack(np.meshgrid(xs, xs), -1).reshape(-1, 2))
    z = torch.from_numpy(np.random.RandomState(1).standard_normal((50, 2)).astype(np.float32))
    with torch.no_grad():
        density = flow.log_prob(grid).exp()
        x = flow.g(z)
        z_back, _ = flow.f(x)
    standard = distributions.Independent(distributions.Normal(torch.zeros(2), torch.ones(2)), 1)
    sample_shape = tuple(flow.sample(5).shape)
    return {"init": start, "losses": losses, "density": density.numpy(), "x": x.numpy(),
            "round_trip": float((z_back - z).abs().max()),
            "prior_matches": float((prior.log_prob(z) - standard.log_prob(z)).abs().max()),
            "n_trainable": sum(p.requires_grad for p in flow.parameters()),
            "mask_grad": flow.mask.grad is None, "sample_shape": sample_shape,
            "final": state_numpy(flow)}


def test_realnvp_on_two_moons(torch):
    expected, got = run_both(realnvp_program, torch)
    assert_curves_match("realnvp", expected["losses"], got["losses"], rtol=1e-4)
    assert expected["losses"][-1] < expected["losses"][0] - 0.5  # it learns
    np.testing.assert_allclose(got["density"], expected["density"], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(got["x"], expected["x"], rtol=1e-4, atol=1e-5)
    for result in (expected, got):
        assert result["round_trip"] < 1e-5
        assert result["prior_matches"] < 1e-5
    assert got["n_trainable"] == expected["n_trainable"] == 72
    assert got["mask_grad"] and expected["mask_grad"]
    assert got["sample_shape"] == expected["sample_shape"] == (5, 1, 2)
    for k, v in expected["final"].items():
        np.testing.assert_allclose(got["final"][k], v, rtol=1e-3, atol=1e-5, err_msg=k)
