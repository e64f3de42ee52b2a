"""Port test: contrastive representation learning in the style of SimCLR tutorials: two noisy
views of each sample (the noise from NumPy, outside the program), an encoder with a projection
head, embeddings `F.normalize`d, the NT-Xent loss written out (`z @ z.T / tau`, the diagonal
removed by `masked_fill_` with an `eye` mask, targets from `torch.arange` and `torch.cat`,
`F.cross_entropy`), Adam with a cosine schedule written as a `LambdaLR` with `math.cos`, and a
k-nearest-neighbour evaluation: `F.cosine_similarity` between broadcast `unsqueeze`d sets,
`topk`, `gather` of the neighbours' labels, a vote by `F.one_hot(...).sum(1).argmax(1)`. Run by
PyTorch and by minigrad (passed in as `torch`) from the same weights: losses, similarities and
votes must agree."""
import math

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def simclr_program(torch, X, Y, noise, init=None, tau=0.5, k=5, epochs=4, batch_size=32):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class SimCLR(nn.Module):
        def __init__(self, n_in, hidden=32, dim=8):
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(n_in, hidden), nn.BatchNorm1d(hidden),
                                         nn.ReLU(), nn.Linear(hidden, hidden))
            self.projector = nn.Sequential(nn.ReLU(), nn.Linear(hidden, dim))

        def forward(self, x):
            h = self.encoder(x)
            return h, F.normalize(self.projector(h), dim=1)

    def nt_xent(z1, z2, temperature):
        n = z1.size(0)
        z = torch.cat([z1, z2], dim=0)
        sim = z @ z.T / temperature
        sim.masked_fill_(torch.eye(2 * n, dtype=torch.bool), -9e15)
        targets = torch.arange(n)
        targets = torch.cat([targets + n, targets])
        return F.cross_entropy(sim, targets)

    model = SimCLR(X.shape[1])
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3, weight_decay=1e-5)
    steps_per_epoch = len(X) // batch_size
    total = epochs * steps_per_epoch
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: 0.5 * (1 + math.cos(math.pi * step / total)))

    x_all = torch.from_numpy(X)
    losses, step = [], 0
    for epoch in range(epochs):
        model.train()
        for b in range(steps_per_epoch):
            x = x_all[b * batch_size:(b + 1) * batch_size]
            v1 = x + torch.from_numpy(noise[step, 0])
            v2 = x + torch.from_numpy(noise[step, 1])
            _, z1 = model(v1)
            _, z2 = model(v2)
            loss = nt_xent(z1, z2, tau)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
            step += 1

    model.eval()
    with torch.no_grad():
        feats, _ = model(x_all)
        labels = torch.from_numpy(Y)
        n_train = len(X) * 3 // 4
        bank, bank_labels = feats[:n_train], labels[:n_train]
        query, query_labels = feats[n_train:], labels[n_train:]
        sim = F.cosine_similarity(query.unsqueeze(1), bank.unsqueeze(0), dim=-1)
        top_sim, top_idx = sim.topk(k, dim=1)
        neighbours = torch.gather(bank_labels.expand(query.size(0), -1), 1, top_idx)
        votes = F.one_hot(neighbours, num_classes=int(Y.max()) + 1).sum(dim=1)
        pred = votes.argmax(dim=1)
        knn_acc = (pred == query_labels).float().mean().item()
    return {"init": start, "losses": losses, "top_sim": top_sim.numpy(),
            "votes": votes.tolist(), "knn_acc": knn_acc, "final": state_numpy(model),
            "lr": optimizer.param_groups[0]["lr"]}


def clusters(n=128, d=6, classes=4, seed=0):
    rng = np.random.default_rng(seed)
    Y = rng.integers(classes, size=n)
    X = (rng.normal(size=(classes, d)) * 2)[Y] + rng.normal(size=(n, d)) * 0.7
    noise = rng.normal(size=(16, 2, 32, d)) * 0.3
    return X.astype(np.float32), Y.astype(np.int64), noise.astype(np.float32)


def test_contrastive_learning_is_the_same_in_both(torch):
    X, Y, noise = clusters()
    expected, got = run_both(simclr_program, torch, X, Y, noise)
    assert_curves_match("simclr", expected["losses"], got["losses"], rtol=1e-4, every=3)
    assert expected["losses"][-1] < 0.8 * expected["losses"][0]  # it learns
    np.testing.assert_allclose(got["top_sim"], expected["top_sim"], rtol=1e-4, atol=1e-5)
    assert got["votes"] == expected["votes"] and got["knn_acc"] == expected["knn_acc"]
    assert expected["knn_acc"] > 0.8
    assert got["lr"] == expected["lr"]
    # the first Linear's bias is undone by the BatchNorm after it: its gradient is rounding
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=1e-5,
                        zero_gradient=("encoder.0.bias",))
