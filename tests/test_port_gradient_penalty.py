"""Port test: a Wasserstein GAN with gradient penalty (WGAN-GP), in ordinary PyTorch style: the
penalty takes the critic's gradient at points between real and generated samples with
`torch.autograd.grad(..., create_graph=True)` and is itself differentiated; the critic is
frozen with `requires_grad_(False)` while the generator trains, generated batches are
`detach()`ed for the critic, and both use Adam with betas (0.5, 0.9). Run by PyTorch and by
minigrad (passed in as `torch`) from the same weights; the noise and the interpolation
weights come from NumPy, outside the program, because the libraries' random streams differ."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def wgan_gp_program(torch, real_batches, noise, alphas, init=None, n_critic=3, lambda_gp=10.0):
    nn = torch.nn
    torch.manual_seed(0)

    class Generator(nn.Module):
        def __init__(self, z_dim=4, hidden=32, out_dim=2):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(z_dim, hidden), nn.ReLU(),
                                     nn.Linear(hidden, hidden), nn.ReLU(),
                                     nn.Linear(hidden, out_dim))

        def forward(self, z):
            return self.net(z)

    class Critic(nn.Module):
        def __init__(self, in_dim=2, hidden=32):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(in_dim, hidden), nn.LeakyReLU(0.2),
                                     nn.Linear(hidden, hidden), nn.LeakyReLU(0.2),
                                     nn.Linear(hidden, 1))

        def forward(self, x):
            return self.net(x)

    class GAN(nn.Module):  # one state dict for both, as checkpoints often hold them
        def __init__(self):
            super().__init__()
            self.G, self.D = Generator(), Critic()

    gan = GAN()
    if init is not None:
        gan.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(gan)
    G, D = gan.G, gan.D
    opt_G = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.9))
    opt_D = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.9))

    def gradient_penalty(real, fake, alpha):
        interpolates = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        d_interpolates = D(interpolates)
        gradients = torch.autograd.grad(outputs=d_interpolates, inputs=interpolates,
                                        grad_outputs=torch.ones_like(d_interpolates),
                                        create_graph=True, retain_graph=True,
                                        only_inputs=True)[0]
        gradients = gradients.view(gradients.size(0), -1)
        return ((gradients.norm(2, dim=1) - 1) ** 2).mean()

    d_losses, penalties, g_losses = [], [], []
    k = 0
    for step, real_np in enumerate(real_batches):
        real = torch.from_numpy(real_np)
        for p in D.parameters():
            p.requires_grad_(True)
        for i in range(n_critic):
            z = torch.from_numpy(noise[k])
            alpha = torch.from_numpy(alphas[step * n_critic + i])
            k += 1
            fake = G(z).detach()
            opt_D.zero_grad()
            gp = gradient_penalty(real, fake, alpha)
            d_loss = D(fake).mean() - D(real).mean() + lambda_gp * gp
            d_loss.backward()
            opt_D.step()
            d_losses.append(d_loss.item())
            penalties.append(gp.item())
        for p in D.parameters():
            p.requires_grad_(False)
        critic_grads = [p.grad.clone() for p in D.parameters()]
        opt_G.zero_grad()
        g_loss = -D(G(torch.from_numpy(noise[k]))).mean()
        k += 1
        g_loss.backward()
        opt_G.step()
        g_losses.append(g_loss.item())
        frozen = all(torch.equal(p.grad, g) for p, g in zip(D.parameters(), critic_grads))
    with torch.no_grad():
        samples = G(torch.from_numpy(noise[-1])).numpy()
    return {"init": start, "losses": d_losses, "penalties": penalties, "g_losses": g_losses,
            "samples": samples, "final": state_numpy(gan), "critic_frozen": frozen}


def ring(rng, n, modes=6, radius=2.0, noise=0.05):
    """n points near `modes` equally spaced centres on a circle (the usual GAN toy data)."""
    angle = 2 * np.pi * rng.integers(modes, size=n) / modes
    centres = radius * np.stack([np.cos(angle), np.sin(angle)], axis=1)
    return (centres + noise * rng.standard_normal((n, 2))).astype(np.float32)


def test_wgan_gp_trains_the_same_in_both(torch):
    rng = np.random.default_rng(5)
    steps, batch, n_critic = 10, 32, 3
    real = [ring(rng, batch) for _ in range(steps)]
    noise = rng.standard_normal((steps * (n_critic + 1) + 1, batch, 4)).astype(np.float32)
    alphas = rng.random((steps * n_critic, batch, 1)).astype(np.float32)
    expected, got = run_both(wgan_gp_program, torch, real, noise, alphas, n_critic=n_critic)
    assert_curves_match("wgan-gp critic", expected["losses"], got["losses"], rtol=1e-3, every=3)
    np.testing.assert_allclose(got["penalties"], expected["penalties"], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(got["g_losses"], expected["g_losses"], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(got["samples"], expected["samples"], rtol=1e-3, atol=1e-5)
    assert expected["critic_frozen"] and got["critic_frozen"]
    for k, v in expected["final"].items():
        np.testing.assert_allclose(got["final"][k], v, rtol=1e-3, atol=1e-5, err_msg=k)
