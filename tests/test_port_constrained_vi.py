"""Port test: variational inference on constrained parameters, as PyTorch (and Pyro's
AutoNormal) users write it. A Gaussian mixture's weights (a simplex), component scales
(positive), a shared correlation (a Cholesky factor) and means are each given a mean-field
Normal posterior in unconstrained space, pushed onto its constraint by
`biject_to(constraint)` in a `TransformedDistribution`, so that `log_prob` includes the
log |det J|; the ELBO is the mixture's likelihood (MixtureSameFamily of MultivariateNormal)
plus Dirichlet, Normal and LogNormal priors minus the posterior's log_prob. Adam; then a MAP
fit of the same model through `transform_to`, with RelaxedOneHotCategorical /
RelaxedBernoulli scores of the soft assignments. Run by PyTorch and by minigrad (passed in as
`torch`) from the same initial parameters; the noise comes from NumPy and enters as
mu + sigma * eps, what rsample would draw for that eps."""
import numpy as np

from port_runner import assert_curves_match, run_both


def vi_program(torch, X, noise, init=None, steps=60):
    D = torch.distributions
    C = D.constraints
    k, dim = 3, 2
    sites = {"weights": (C.simplex, (k,)), "scales": (C.positive, (k,)),
             "corr": (C.corr_cholesky, (dim, dim)), "means": (C.real, (k, dim))}

    def unconstrained_shape(constraint, shape):
        return tuple(D.biject_to(constraint).inverse_shape(shape))

    if init is None:
        rng = np.random.default_rng(0)
        init = {name: (rng.normal(0, 0.3, unconstrained_shape(c, s)).astype(np.float32),
                       np.full(unconstrained_shape(c, s), -2.0, np.float32))
                for name, (c, s) in sites.items()}
    params = {name: [torch.tensor(mu, requires_grad=True), torch.tensor(rho, requires_grad=True)]
              for name, (mu, rho) in init.items()}
    optimizer = torch.optim.Adam([p for pair in params.values() for p in pair], lr=0.05)
    x = torch.from_numpy(X)

    def posterior(name):
        constraint, _ = sites[name]
        mu, rho = params[name]
        base = D.Normal(mu, torch.nn.functional.softplus(rho))
        return D.TransformedDistribution(D.Independent(base, len(base.batch_shape)),
                                         D.biject_to(constraint))

    def log_joint(v):
        cov_tril = v["scales"][:, None, None] * v["corr"]          # (k, dim, dim)
        mixture = D.MixtureSameFamily(D.Categorical(probs=v["weights"]),
                                      D.MultivariateNormal(v["means"], scale_tril=cov_tril))
        prior = (D.Dirichlet(torch.full((k,), 2.0)).log_prob(v["weights"])
                 + D.LogNormal(0.0, 1.0).log_prob(v["scales"]).sum()
                 + D.Normal(0.0, 3.0).log_prob(v["means"]).sum())
        return mixture.log_prob(x).sum() + prior

    losses = []
    for step in range(steps):
        values, log_q = {}, 0.0
        for name in sites:
            q = posterior(name)
            mu, rho = params[name]
            eps = torch.from_numpy(noise[name][step])
            z = mu + torch.nn.functional.softplus(rho) * eps          # q.base_dist.rsample()
            values[name] = D.biject_to(sites[name][0])(z)
            log_q = log_q + q.log_prob(values[name])
        loss = -(log_joint(values) - log_q)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())

    with torch.no_grad():
        means = {name: D.biject_to(sites[name][0])(params[name][0]) for name in sites}
        fitted_corr = means["corr"] @ means["corr"].mT

    # MAP through transform_to (softmax for the simplex, exp for the scales)
    raw = {"weights": torch.zeros(k, requires_grad=True),
           "scales": torch.zeros(k, requires_grad=True),
           "corr": torch.zeros(1, requires_grad=True),
           "means": torch.tensor(init["means"][0], requires_grad=True)}
    map_opt = torch.optim.Adam(list(raw.values()), lr=0.05)
    map_losses = []
    for step in range(30):
        v = {name: D.transform_to(sites[name][0])(raw[name]) for name in sites}
        loss = -log_joint(v)
        map_opt.zero_grad()
        loss.backward()
        map_opt.step()
        map_losses.append(loss.item())

    with torch.no_grad():
        v = {name: D.transform_to(sites[name][0])(raw[name]) for name in sites}
        comp = D.MultivariateNormal(v["means"], scale_tril=v["scales"][:, None, None] * v["corr"])
        resp = (comp.log_prob(x[:, None, :]) + v["weights"].log()).softmax(-1)  # (n, k)
        soft = D.RelaxedOneHotCategorical(torch.tensor(0.5), probs=v["weights"])
        relaxed = soft.log_prob(resp.clamp(1e-4, 1) / resp.clamp(1e-4, 1).sum(-1, keepdim=True))
        first = D.RelaxedBernoulli(torch.tensor(0.5), probs=v["weights"][0])
        relaxed_b = first.log_prob(resp[:, 0].clamp(1e-3, 1 - 1e-3))
    return {"init": init, "losses": losses, "map_losses": map_losses,
            "weights": means["weights"].numpy(), "scales": means["scales"].numpy(),
            "corr": fitted_corr.numpy(), "relaxed": relaxed.numpy(),
            "relaxed_b": relaxed_b.numpy()}


def mixture_data(n=120, steps=60, seed=3):
    rng = np.random.default_rng(seed)
    centres = np.array([[-2.0, 0.0], [2.0, 1.0], [0.0, 3.0]])
    corr = np.linalg.cholesky(np.array([[1.0, 0.6], [0.6, 1.0]]))
    labels = rng.choice(3, n, p=[0.5, 0.3, 0.2])
    X = (centres[labels] + 0.5 * rng.normal(size=(n, 2)) @ corr.T).astype(np.float32)
    shapes = {"weights": (2,), "scales": (3,), "corr": (1,), "means": (3, 2)}
    noise = {k: rng.normal(size=(steps,) + s).astype(np.float32) for k, s in shapes.items()}
    return X, noise


def test_constrained_vi_trains_the_same_in_both(torch):
    expected, got = run_both(vi_program, torch, *mixture_data())
    assert_curves_match("constrained-vi", expected["losses"], got["losses"], rtol=2e-5, every=6)
    assert_curves_match("constrained-map", expected["map_losses"], got["map_losses"],
                        rtol=2e-5, every=3)
    assert np.mean(expected["losses"][-10:]) < np.mean(expected["losses"][:10])  # it learns
    for key in ("weights", "scales", "corr", "relaxed", "relaxed_b"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-3, atol=1e-4, err_msg=key)
    np.testing.assert_allclose(got["weights"].sum(), 1.0, rtol=1e-5)
