"""Port test: a GAN whose discriminator is spectrally normalised (SN-GAN style, with
`torch.nn.utils.parametrizations.spectral_norm` on every layer, so its power iteration
updates the `_u`/`_v` buffers at each training forward), a generator with weight norm
(`parametrizations.weight_norm`), trained with the hinge loss and Adam; then the generator's
weight norm is removed and it is pruned (`prune.l1_unstructured` and `ln_structured`), a
pruned step trained, and the pruning made permanent. Written once in ordinary PyTorch style
and run by PyTorch and by minigrad (passed in as `torch`), from the same initial state dict
(spectral norm's random start included); the noise and the data come from NumPy."""
import importlib

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def sn_gan_program(torch, real_batches, noise, init=None):
    nn = torch.nn
    P = nn.utils.parametrizations
    prune = importlib.import_module(f"{torch.__name__}.nn.utils.prune")
    torch.manual_seed(0)

    class Generator(nn.Module):
        def __init__(self, z_dim=4, hidden=16, out_dim=3):
            super().__init__()
            self.fc1 = P.weight_norm(nn.Linear(z_dim, hidden))
            self.fc2 = P.weight_norm(nn.Linear(hidden, out_dim), dim=None)

        def forward(self, z):
            return self.fc2(torch.tanh(self.fc1(z)))

    class Discriminator(nn.Module):
        def __init__(self, in_dim=3, hidden=16):
            super().__init__()
            self.net = nn.Sequential(P.spectral_norm(nn.Linear(in_dim, hidden)),
                                     nn.LeakyReLU(0.2),
                                     P.spectral_norm(nn.Linear(hidden, hidden),
                                                     n_power_iterations=2),
                                     nn.LeakyReLU(0.2),
                                     P.spectral_norm(nn.Linear(hidden, 1)))

        def forward(self, x):
            return self.net(x)

    class GAN(nn.Module):
        def __init__(self):
            super().__init__()
            self.G, self.D = Generator(), Discriminator()

    gan = GAN()
    if init is not None:
        gan.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(gan)
    G, D = gan.G, gan.D
    opt_G = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.0, 0.9))
    opt_D = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.0, 0.9))
    d_losses, g_losses = [], []
    for step, real_np in enumerate(real_batches):
        real, z = torch.from_numpy(real_np), torch.from_numpy(noise[step])
        opt_D.zero_grad()
        d_loss = (torch.relu(1 - D(real)).mean() + torch.relu(1 + D(G(z).detach())).mean())
        d_loss.backward()
        opt_D.step()
        opt_G.zero_grad()
        g_loss = -D(G(z)).mean()
        g_loss.backward()
        opt_G.step()
        d_losses.append(d_loss.item())
        g_losses.append(g_loss.item())
    trained_keys = list(gan.state_dict())

    # the generator for deployment: weight norm folded in, then pruned and fine-tuned a step
    nn.utils.parametrize.remove_parametrizations(G.fc1, "weight")
    nn.utils.parametrize.remove_parametrizations(G.fc2, "weight")
    prune.l1_unstructured(G.fc1, "weight", amount=0.4)
    prune.ln_structured(G.fc1, "weight", amount=2, n=2, dim=0)
    opt = torch.optim.SGD(G.parameters(), lr=0.05)
    D.eval()  # no power iteration: sigma from the trained u and v
    for step in range(2):
        opt.zero_grad()
        loss = -D(G(torch.from_numpy(noise[step]))).mean()
        loss.backward()
        opt.step()
        g_losses.append(loss.item())
    pruned_keys = list(G.state_dict())
    prune.remove(G.fc1, "weight")
    return {"init": start, "d": d_losses, "g": g_losses, "state": state_numpy(gan),
            "keys": (trained_keys, pruned_keys, list(G.state_dict()))}


def test_sn_gan_with_weight_norm_and_pruning_matches_pytorch(torch):
    rng = np.random.default_rng(0)
    real = [rng.normal([1.0, -1.0, 0.5], 0.3, (16, 3)).astype(np.float32) for _ in range(12)]
    noise = [rng.standard_normal((16, 4)).astype(np.float32) for _ in range(12)]
    expected, got = run_both(sn_gan_program, torch, real, noise)
    assert got["keys"] == expected["keys"]
    assert "D.net.0.parametrizations.weight.0._u" in expected["keys"][0]
    assert "fc1.weight_orig" in expected["keys"][1] and "fc1.weight_mask" in expected["keys"][1]
    assert_curves_match("sn-gan D", expected["d"], got["d"], rtol=2e-4)
    assert_curves_match("sn-gan G", expected["g"], got["g"], rtol=2e-4)
    assert_states_match(expected["state"], got["state"], rtol=2e-3, atol=2e-4)
    assert (got["state"]["G.fc1.weight"] == 0).sum() >= 0.4 * 64
