"""Port test: two programs in ordinary PyTorch style, run by PyTorch and by minigrad (passed in
as `torch`) from the same weights: a policy-gradient update on logged actions (a Categorical
head and a Gaussian head, with an entropy bonus), and metric learning of pretrained
embeddings (triplet and cosine-embedding losses, nearest neighbours by cdist). The loss
curves must agree."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def policy_program(torch, states, actions, moves, returns, init=None, steps=25):
    """REINFORCE with a baseline on a logged batch: discrete and continuous actions."""
    nn = torch.nn
    Categorical, Normal = torch.distributions.Categorical, torch.distributions.Normal

    torch.manual_seed(0)

    class Policy(nn.Module):
        def __init__(self, n_state, n_actions, n_moves):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n_state, 32), nn.SiLU(),
                                      nn.Linear(32, 32), nn.Hardswish())
            self.logits = nn.Linear(32, n_actions)
            self.mean = nn.Sequential(nn.Linear(32, n_moves), nn.Hardtanh(-2.0, 2.0))
            self.log_std = nn.Parameter(torch.zeros(n_moves))

        def forward(self, s):
            h = self.body(s)
            return Categorical(logits=self.logits(h)), Normal(self.mean(h), self.log_std.exp())

    policy = Policy(states.shape[1], int(actions.max()) + 1, moves.shape[1])
    if init is not None:
        policy.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(policy)
    opt = torch.optim.Adam(policy.parameters(), lr=1e-2)
    s = torch.tensor(states)
    a = torch.tensor(actions)
    m = torch.tensor(moves)
    ret = torch.tensor(returns)
    adv = (ret - ret.mean()) / (ret.std() + 1e-8)
    losses = []
    for _ in range(steps):
        pick, move = policy(s)
        log_prob = pick.log_prob(a) + move.log_prob(m).sum(-1)
        entropy = pick.entropy().mean() + move.entropy().sum(-1).mean()
        loss = -(log_prob * adv).mean() - 0.01 * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        pick, move = policy(s)
        drawn = pick.sample((3,))  # the draws differ between libraries; their form does not
    return {"init": start, "losses": losses, "drawn": (tuple(drawn.shape), str(drawn.dtype)),
            "kl": torch.distributions.kl_divergence(pick, Categorical(logits=torch.zeros(
                pick.logits.shape[-1]))).mean().item()}


def metric_program(torch, table, triplets, pairs, signs, init=None, steps=20):
    """Fine-tune pretrained embeddings with an encoder so that triplets order and pairs agree."""
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)
    emb = nn.Embedding.from_pretrained(torch.tensor(table), freeze=False)
    encoder = nn.Sequential(nn.Linear(table.shape[1], 16), nn.Mish(), nn.Linear(16, 8))
    model = nn.ModuleDict({"emb": emb, "encoder": encoder})
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    triplet = nn.TripletMarginLoss(margin=0.5)
    cosine = nn.CosineEmbeddingLoss(margin=0.1)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    t = torch.tensor(triplets)
    p = torch.tensor(pairs)
    y = torch.tensor(signs)

    def embed(ids):
        return encoder(emb(ids))

    losses = []
    for _ in range(steps):
        loss = triplet(embed(t[:, 0]), embed(t[:, 1]), embed(t[:, 2]))
        loss = loss + cosine(embed(p[:, 0]), embed(p[:, 1]), y)
        loss = loss + 0.1 * F.smooth_l1_loss(embed(t[:, 0]), embed(t[:, 1]).detach())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        z = embed(torch.arange(table.shape[0]))
        d = torch.cdist(z, z) + torch.eye(table.shape[0]) * 1e9
        neighbours = d.argmin(dim=1).tolist()
    return {"init": start, "losses": losses, "neighbours": neighbours}


def test_policy_gradient_trains_the_same_in_both(torch):
    rng = np.random.default_rng(0)
    states = rng.standard_normal((64, 4)).astype(np.float32)
    actions = rng.integers(0, 3, 64)
    moves = rng.standard_normal((64, 2)).astype(np.float32)
    returns = (states[:, 0] * (actions == 1) - moves[:, 1] ** 2).astype(np.float32)
    expected, got = run_both(policy_program, torch, states, actions, moves, returns)
    assert_curves_match("policy", expected["losses"], got["losses"], rtol=1e-4, every=5)
    assert got["drawn"] == ((3, 64), "int64") and expected["drawn"] == ((3, 64), "torch.int64")
    np.testing.assert_allclose(got["kl"], expected["kl"], rtol=1e-4)
    assert expected["losses"][-1] < expected["losses"][0]


def test_metric_learning_trains_the_same_in_both(torch):
    rng = np.random.default_rng(1)
    table = rng.standard_normal((12, 6)).astype(np.float32)
    triplets = np.stack([rng.permutation(12)[:3] for _ in range(24)])
    pairs = np.stack([rng.permutation(12)[:2] for _ in range(16)])
    signs = np.where(pairs[:, 0] % 2 == pairs[:, 1] % 2, 1, -1)
    expected, got = run_both(metric_program, torch, table, triplets, pairs, signs)
    assert_curves_match("metric", expected["losses"], got["losses"], rtol=1e-4, every=4)
    assert got["neighbours"] == expected["neighbours"]
    assert expected["losses"][-1] < expected["losses"][0]
