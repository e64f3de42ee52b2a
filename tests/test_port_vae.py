"""Port test: a variational autoencoder on small binary images, in the style of PyTorch's VAE
example: an encoder `nn.Sequential(nn.Flatten(), ...)` whose output is `chunk`ed into mean and
log-variance, the reparameterisation `mu + eps * torch.exp(0.5 * logvar)`, a decoder ending in
`nn.Unflatten`, the loss `binary_cross_entropy_with_logits(reduction="sum")` plus the KL term
written out with `pow`/`exp`/`torch.sum`, AdamW with an epoch `LambdaLR`, and evaluation under
`no_grad`: reconstructions through `sigmoid`, `mse_loss`, `l1_loss(reduction="none")`,
`binary_cross_entropy`, a walk between two latent codes, `cosine_similarity` and
`pairwise_distance` between codes. Run by PyTorch and by minigrad (passed in as `torch`) from
the same weights; the noise eps comes from NumPy, outside the program, because the libraries'
random streams differ."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def vae_program(torch, X, noise, order, init=None, batch_size=32):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self, side=4, hidden=32, latent=4):
            super().__init__()
            self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(side * side, hidden), nn.Tanh(),
                                         nn.Linear(hidden, 2 * latent))
            self.fc = nn.Linear(latent, hidden)
            self.out = nn.Sequential(nn.Linear(hidden, side * side), nn.Unflatten(1, (side, side)))

        def encode(self, x):
            mu, logvar = self.encoder(x).chunk(2, dim=-1)
            return mu, logvar

        def decode(self, z):
            return self.out(F.softplus(self.fc(z)))  # logits

        def forward(self, x, eps):
            mu, logvar = self.encode(x)
            z = mu + eps * torch.exp(0.5 * logvar)
            return self.decode(z), mu, logvar

    model = VAE()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-2, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.9 ** epoch)
    x_all, eps_all = torch.from_numpy(X), torch.from_numpy(noise)
    losses, reconstruction, kl_terms, lrs = [], [], [], []
    for epoch in range(len(order)):
        model.train()
        for i in range(0, len(X), batch_size):
            idx = torch.from_numpy(order[epoch][i:i + batch_size])
            xb, eps = x_all[idx], eps_all[epoch][idx]
            recon, mu, logvar = model(xb, eps)
            rec = F.binary_cross_entropy_with_logits(recon, xb, reduction="sum") / xb.size(0)
            kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp()) / xb.size(0)
            loss = rec + 0.5 * kl
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            reconstruction.append(rec.item())
            kl_terms.append(kl.item())
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    model.eval()
    with torch.no_grad():
        mu, logvar = model.encode(x_all)
        recon = torch.sigmoid(model.decode(mu))
        weights = torch.linspace(0, 1, 5).unsqueeze(1)
        walk = torch.sigmoid(model.decode(mu[0] + weights * (mu[1] - mu[0])))
        result = {
            "mse": F.mse_loss(recon, x_all).item(),
            "l1": F.l1_loss(recon, x_all, reduction="none").mean(dim=(1, 2)).numpy(),
            "bce": F.binary_cross_entropy(recon, x_all).item(),
            "walk": walk.numpy(), "variance": logvar.exp().mean(0).numpy(),
            "cosine": F.cosine_similarity(mu[:10], mu[10:20], dim=1).numpy(),
            "distance": F.pairwise_distance(mu[:10], mu[10:20]).numpy(),
            "pixel_accuracy": ((recon > 0.5).float() == x_all).float().mean().item(),
        }
    return {"init": start, "losses": losses, "reconstruction": reconstruction,
            "kl": kl_terms, "lrs": lrs, **result}


def binary_images(n=128, side=4, epochs=6, seed=0):
    """Four random binary prototypes with 5% of their pixels flipped."""
    rng = np.random.default_rng(seed)
    prototypes = rng.random((4, side, side)) > 0.5
    flips = rng.random((n, side, side)) < 0.05
    X = (prototypes[rng.integers(0, 4, n)] ^ flips).astype(np.float32)
    noise = rng.normal(size=(epochs, n, 4)).astype(np.float32)
    order = [rng.permutation(n) for _ in range(epochs)]
    return X, noise, order


def test_vae_trains_the_same_in_both(torch):
    expected, got = run_both(vae_program, torch, *binary_images())
    assert_curves_match("vae", expected["losses"], got["losses"], rtol=1e-4, every=3)
    for key in ("reconstruction", "kl", "lrs"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, err_msg=key)
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
    for key in ("mse", "l1", "bce", "walk", "variance", "cosine", "distance", "pixel_accuracy"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert got["walk"].shape == (5, 4, 4)
