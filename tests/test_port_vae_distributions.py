"""Port test: a variational autoencoder written with torch.distributions, as PyTorch users
write one: the encoder's output is the posterior `Independent(Normal(mu, sigma), 1)`, the
prior `Independent(Normal(0, 1), 1)`, the decoder's logits `Independent(Bernoulli(logits=...),
2)`, and the loss the negative ELBO `-(log_prob(x) - kl_divergence(q, prior)).mean()`; Adam;
then an importance-sampled log-likelihood with `log_prob` of prior, posterior and decoder,
and a Gaussian-mixture prior (`MixtureSameFamily`) scored on the codes. Run by PyTorch and by
minigrad (passed in as `torch`) from the same weights. The libraries' random streams differ,
so the noise comes from NumPy and enters as `q.mean + q.stddev * eps`, the value
`q.rsample()` would take for that eps."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def vae_program(torch, X, noise, order, init=None, batch_size=32):
    nn = torch.nn
    D = torch.distributions
    torch.manual_seed(0)

    class VAE(nn.Module):
        def __init__(self, side=4, hidden=24, latent=3):
            super().__init__()
            self.latent = latent
            self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(side * side, hidden), nn.ReLU(),
                                         nn.Linear(hidden, 2 * latent))
            self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.Tanh(),
                                         nn.Linear(hidden, side * side),
                                         nn.Unflatten(1, (side, side)))

        def posterior(self, x):
            mu, log_sigma = self.encoder(x).chunk(2, dim=-1)
            return D.Independent(D.Normal(mu, log_sigma.exp()), 1)

        def prior(self, n):
            return D.Independent(D.Normal(torch.zeros(n, self.latent), torch.ones(n, self.latent)),
                                 1)

        def likelihood(self, z):
            return D.Independent(D.Bernoulli(logits=self.decoder(z)), 2)

    model = VAE()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-2)
    x_all = torch.from_numpy(X)
    losses, kls, shapes = [], [], set()
    for epoch in range(len(order)):
        for i in range(0, len(X), batch_size):
            idx = torch.from_numpy(order[epoch][i:i + batch_size])
            xb, eps = x_all[idx], torch.from_numpy(noise[epoch][order[epoch][i:i + batch_size]])
            q = model.posterior(xb)
            z = q.mean + q.stddev * eps                  # = q.rsample() for this eps
            shapes.add((tuple(q.rsample().shape), q.rsample().requires_grad, q.has_rsample))
            kl = D.kl_divergence(q, model.prior(len(xb)))
            elbo = model.likelihood(z).log_prob(xb) - kl
            loss = -elbo.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            kls.append(kl.mean().item())

    with torch.no_grad():
        q = model.posterior(x_all)
        k = noise.shape[0]
        eps = torch.from_numpy(noise[:, :len(X)])             # (K, N, latent)
        z = q.mean + q.stddev * eps
        log_w = (model.likelihood(z.reshape(-1, 3)).log_prob(x_all.repeat(k, 1, 1)).reshape(k, -1)
                 + model.prior(len(X)).log_prob(z) - q.log_prob(z))
        marginal = (torch.logsumexp(log_w, dim=0) - np.log(k)).mean()
        mixture = D.MixtureSameFamily(D.Categorical(logits=torch.zeros(4)), D.Independent(
            D.Normal(torch.tensor(noise[0, :4]), torch.ones(4, 3) * 0.5), 1))
        codes = q.mean
        result = {"marginal": marginal.item(), "entropy": q.entropy().numpy(),
                  "mixture": mixture.log_prob(codes).numpy(),
                  "recon": model.likelihood(codes).mean.numpy(),
                  "prior_kl": D.kl_divergence(q.base_dist, D.Normal(0.0, 1.0)).sum(-1).numpy()}
    return {"init": start, "losses": losses, "kl": kls, "shapes": sorted(shapes), **result}


def binary_images(n=96, side=4, epochs=8, seed=2):
    """Three random binary prototypes with 5% of their pixels flipped, and the noise."""
    rng = np.random.default_rng(seed)
    prototypes = rng.random((3, side, side)) > 0.5
    flips = rng.random((n, side, side)) < 0.05
    X = (prototypes[rng.integers(0, 3, n)] ^ flips).astype(np.float32)
    noise = rng.normal(size=(epochs, n, 3)).astype(np.float32)
    order = [rng.permutation(n) for _ in range(epochs)]
    return X, noise, order


def test_vae_with_distributions_trains_the_same_in_both(torch):
    expected, got = run_both(vae_program, torch, *binary_images())
    assert_curves_match("vae-distributions", expected["losses"], got["losses"], rtol=1e-4,
                        every=2)
    np.testing.assert_allclose(got["kl"], expected["kl"], rtol=1e-4, atol=1e-6)
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
    for key in ("marginal", "entropy", "mixture", "recon", "prior_kl"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert got["shapes"] == expected["shapes"] == [((32, 3), True, True)]
