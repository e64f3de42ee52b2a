"""Port test: reinforcement-learning updates written with torch.distributions, as PyTorch
users write them, run by PyTorch and by minigrad (passed in as `torch`) from the same weights
on the same logged data: REINFORCE with a Categorical policy and a PPO clipped objective with
`kl_divergence` between the old and the new policy; and a SAC-style actor-critic whose policy
is a Normal squashed by `TanhTransform` and scaled by `AffineTransform` to the action bounds
(`TransformedDistribution`), with twin Q networks, a soft target and a learned temperature.
The libraries' random streams differ, so the policy's noise comes from NumPy and enters as
`u = mean + std * eps`, pushed through the cached transforms, so `log_prob` of the action uses
u itself (what `rsample` then `log_prob` does)."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def ppo_program(torch, states, actions, returns, init=None, steps=20):
    nn = torch.nn
    D = torch.distributions
    torch.manual_seed(0)
    policy = nn.Sequential(nn.Linear(states.shape[1], 32), nn.Tanh(), nn.Linear(32, 4))
    value = nn.Sequential(nn.Linear(states.shape[1], 32), nn.Tanh(), nn.Linear(32, 1))
    model = nn.ModuleDict({"policy": policy, "value": value})
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    s, a, ret = torch.tensor(states), torch.tensor(actions), torch.tensor(returns)
    with torch.no_grad():
        old = D.Categorical(logits=policy(s))
        old_log_prob = old.log_prob(a)
    losses, kls = [], []
    for step in range(steps):
        dist = D.Categorical(logits=policy(s))
        v = value(s).squeeze(-1)
        adv = (ret - v).detach()
        if step < steps // 2:  # REINFORCE with a baseline first, then PPO's clipped ratio
            pg = -(dist.log_prob(a) * adv).mean()
        else:
            ratio = (dist.log_prob(a) - old_log_prob).exp()
            pg = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
        kl = D.kl_divergence(old, dist).mean()
        loss = pg + 0.5 * nn.functional.mse_loss(v, ret) - 0.01 * dist.entropy().mean() + 0.1 * kl
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        kls.append(kl.item())
    with torch.no_grad():
        dist = D.Categorical(logits=policy(s))
        greedy = dist.probs.argmax(-1).tolist()
        drawn = dist.sample((2,))
    return {"init": start, "losses": losses, "kl": kls, "greedy": greedy,
            "drawn": (tuple(drawn.shape), str(drawn.dtype).split(".")[-1])}


def sac_program(torch, states, actions, rewards, next_states, noise, init=None, steps=15):
    nn = torch.nn
    D = torch.distributions
    F = torch.nn.functional
    torch.manual_seed(0)
    n_state, n_action = states.shape[1], actions.shape[1]
    bound = 2.0

    class Actor(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n_state, 32), nn.ReLU())
            self.mean = nn.Linear(32, n_action)
            self.log_std = nn.Linear(32, n_action)

        def forward(self, s):
            h = self.body(s)
            log_std = self.log_std(h).clamp(-5, 2)
            base = D.Normal(self.mean(h), log_std.exp())
            squash = [D.TanhTransform(cache_size=1), D.AffineTransform(0.0, bound, cache_size=1)]
            return base, D.TransformedDistribution(base, squash)

    def critic():
        return nn.Sequential(nn.Linear(n_state + n_action, 32), nn.ReLU(), nn.Linear(32, 1))

    model = nn.ModuleDict({"actor": Actor(), "q1": critic(), "q2": critic(),
                           "q1_target": critic(), "q2_target": critic()})
    model.q1_target.load_state_dict(model.q1.state_dict())
    model.q2_target.load_state_dict(model.q2.state_dict())
    model.register_parameter("log_alpha", nn.Parameter(torch.zeros(1)))
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    actor_opt = torch.optim.Adam(model.actor.parameters(), lr=3e-3)
    critic_opt = torch.optim.Adam([*model.q1.parameters(), *model.q2.parameters()], lr=3e-3)
    alpha_opt = torch.optim.Adam([model.log_alpha], lr=3e-3)
    s, a, r = torch.tensor(states), torch.tensor(actions), torch.tensor(rewards)
    s2 = torch.tensor(next_states)
    target_entropy = -float(n_action)

    def act(s, eps):
        """rsample and its log-probability, with the noise given."""
        base, policy = model.actor(s)
        u = base.loc + base.scale * eps
        action = u
        for t in policy.transforms:
            action = t(action)
        return action, policy.log_prob(action).sum(-1), policy

    def q(net, s, a):
        return net(torch.cat([s, a], dim=-1)).squeeze(-1)

    critic_losses, actor_losses, alphas = [], [], []
    for step in range(steps):
        alpha = model.log_alpha.exp().detach()
        with torch.no_grad():
            a2, logp2, _ = act(s2, torch.tensor(noise[step, 0]))
            target_q = torch.min(q(model.q1_target, s2, a2), q(model.q2_target, s2, a2))
            backup = r + 0.9 * (target_q - alpha * logp2)
        critic_loss = F.mse_loss(q(model.q1, s, a), backup) + F.mse_loss(q(model.q2, s, a), backup)
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()

        new_a, logp, policy = act(s, torch.tensor(noise[step, 1]))
        actor_loss = (alpha * logp - torch.min(q(model.q1, s, new_a), q(model.q2, s, new_a))).mean()
        actor_loss = actor_loss - 0.01 * policy.log_prob(a * 0.9).sum(-1).mean()  # logged actions
        actor_opt.zero_grad()
        actor_loss.backward()
        actor_opt.step()

        alpha_loss = -(model.log_alpha * (logp + target_entropy).detach()).mean()
        alpha_opt.zero_grad()
        alpha_loss.backward()
        alpha_opt.step()
        with torch.no_grad():
            for net, target in ((model.q1, model.q1_target), (model.q2, model.q2_target)):
                for p, tp in zip(net.parameters(), target.parameters()):
                    tp.mul_(0.95).add_(0.05 * p)
        critic_losses.append(critic_loss.item())
        actor_losses.append(actor_loss.item())
        alphas.append(model.log_alpha.exp().item())
    with torch.no_grad():
        base, policy = model.actor(s)
        sampled = policy.sample((3,))
        result = {"mode": torch.tanh(base.mean).numpy() * bound,
                  "support": repr(policy.support).replace("torch.", ""),
                  "sampled": (tuple(sampled.shape), bool((sampled.abs() <= bound).all())),
                  "logp_mode": policy.log_prob(torch.tanh(base.mean) * bound * 0.999).numpy()}
    return {"init": start, "critic": critic_losses, "actor": actor_losses, "alpha": alphas,
            **result}


def test_reinforce_and_ppo_train_the_same_in_both(torch):
    rng = np.random.default_rng(4)
    states = rng.standard_normal((64, 5)).astype(np.float32)
    actions = rng.integers(0, 4, 64)
    returns = (states[:, 0] * (actions == 2) - 0.5 * (actions == 0)).astype(np.float32)
    expected, got = run_both(ppo_program, torch, states, actions, returns)
    assert_curves_match("ppo", expected["losses"], got["losses"], rtol=1e-4, every=4)
    np.testing.assert_allclose(got["kl"], expected["kl"], rtol=1e-3, atol=1e-7)
    assert got["greedy"] == expected["greedy"]
    assert got["drawn"] == expected["drawn"] == ((2, 64), "int64")
    assert expected["losses"][-1] < expected["losses"][10] - 0.05  # the clipped phase learns


def test_sac_with_a_tanh_normal_policy_trains_the_same_in_both(torch):
    rng = np.random.default_rng(5)
    states = rng.standard_normal((48, 3)).astype(np.float32)
    actions = rng.uniform(-1.9, 1.9, (48, 2)).astype(np.float32)
    rewards = (-np.abs(actions - states[:, :2]).sum(-1)).astype(np.float32)
    next_states = (states + 0.1 * rng.standard_normal((48, 3))).astype(np.float32)
    noise = rng.standard_normal((15, 2, 48, 2)).astype(np.float32)
    expected, got = run_both(sac_program, torch, states, actions, rewards, next_states, noise)
    for key in ("critic", "actor"):
        assert_curves_match(f"sac-{key}", expected[key], got[key], rtol=1e-4, every=3)
    np.testing.assert_allclose(got["alpha"], expected["alpha"], rtol=1e-5)
    np.testing.assert_allclose(got["mode"], expected["mode"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["logp_mode"], expected["logp_mode"], rtol=1e-4, atol=1e-4)
    assert got["support"] == expected["support"]
    assert got["sampled"] == expected["sampled"] == ((3, 48, 2), True)
    assert expected["critic"][-1] < expected["critic"][0]
