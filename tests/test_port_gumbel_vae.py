"""Port test: a Gumbel-softmax (Concrete) VAE written with torch.distributions, as in Jang et
al. and Maddison et al.: the encoder gives logits of L categorical latents of K classes, the
code is a RelaxedOneHotCategorical sample, the decoder's likelihood an Independent Bernoulli,
and the KL term the single-sample estimate log q(z) - log p(z) of the relaxed posterior
against the relaxed uniform prior (both `RelaxedOneHotCategorical.log_prob`); the temperature
anneals. Adam. Run by PyTorch and by minigrad (passed in as `torch`) from the same weights;
the libraries' streams differ, so the Gumbel noise comes from NumPy and the code is computed
as softmax((logits + g) / t), what rsample draws for that noise (checked against the
distribution's own rsample shape and support)."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def gumbel_vae_program(torch, X, gumbels, order, init=None, batch_size=24):
    nn, F, D = torch.nn, torch.nn.functional, torch.distributions
    torch.manual_seed(0)
    latents, classes = 3, 4

    class GumbelVAE(nn.Module):
        def __init__(self, pixels=16, hidden=32):
            super().__init__()
            self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(pixels, hidden), nn.ReLU(),
                                         nn.Linear(hidden, latents * classes))
            self.decoder = nn.Sequential(nn.Linear(latents * classes, hidden), nn.ReLU(),
                                         nn.Linear(hidden, pixels), nn.Unflatten(1, (4, 4)))

        def posterior(self, x, temperature):
            logits = self.encoder(x).view(-1, latents, classes)
            return D.RelaxedOneHotCategorical(temperature, logits=logits)

    model = GumbelVAE()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    x_all = torch.from_numpy(X)
    losses, kls, checks = [], [], set()
    step = 0
    for epoch in range(len(order)):
        for i in range(0, len(X), batch_size):
            temperature = torch.tensor(max(0.5, 2.0 * float(np.exp(-0.02 * step))))
            idx = order[epoch][i:i + batch_size]
            xb = x_all[torch.from_numpy(idx)]
            q = model.posterior(xb, temperature)
            g = torch.from_numpy(gumbels[epoch][idx])
            z = F.softmax((q.logits + g) / temperature, dim=-1)    # = q.rsample() for g
            drawn = q.rsample()
            checks.add((tuple(drawn.shape), drawn.requires_grad,
                        bool(D.constraints.simplex.check(drawn.detach()).all())))
            prior = D.RelaxedOneHotCategorical(temperature, probs=torch.full((latents, classes),
                                                                             1.0 / classes))
            kl = (q.log_prob(z) - prior.log_prob(z)).sum(-1)
            likelihood = D.Independent(D.Bernoulli(logits=model.decoder(z.flatten(1))), 2)
            loss = (kl - likelihood.log_prob(xb)).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            kls.append(kl.mean().item())
            step += 1
    with torch.no_grad():
        q = model.posterior(x_all, torch.tensor(0.5))
        codes = F.one_hot(q.logits.argmax(-1), classes).float()
        recon = D.Independent(D.Bernoulli(logits=model.decoder(codes.flatten(1))), 2)
        result = {"probs": q.probs.numpy(), "recon": recon.log_prob(x_all).numpy()}
    return {"init": start, "losses": losses, "kl": kls, "checks": sorted(checks), **result}


def binary_images(n=96, epochs=6, seed=4):
    rng = np.random.default_rng(seed)
    prototypes = rng.random((4, 4, 4)) > 0.5
    X = (prototypes[rng.integers(0, 4, n)] ^ (rng.random((n, 4, 4)) < 0.05)).astype(np.float32)
    u = rng.uniform(1e-6, 1 - 1e-6, (epochs, n, 3, 4))
    gumbels = (-np.log(-np.log(u))).astype(np.float32)
    order = [rng.permutation(n) for _ in range(epochs)]
    return X, gumbels, order


def test_gumbel_softmax_vae_trains_the_same_in_both(torch):
    expected, got = run_both(gumbel_vae_program, torch, *binary_images())
    assert_curves_match("gumbel-vae", expected["losses"], got["losses"], rtol=1e-4, every=2)
    np.testing.assert_allclose(got["kl"], expected["kl"], rtol=1e-3, atol=1e-4)
    assert np.mean(expected["losses"][-4:]) < 0.9 * np.mean(expected["losses"][:4])  # it learns
    for key in ("probs", "recon"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-3, atol=1e-4, err_msg=key)
    assert got["checks"] == expected["checks"] == [((24, 3, 4), True, True)]
