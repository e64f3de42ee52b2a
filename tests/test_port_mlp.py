"""Port test: an MLP classifier in ordinary PyTorch style, run by PyTorch and by minigrad
(passed in as `torch`) from the same weights; the loss curves must agree."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def mlp_program(torch, X, Y, order, init=None, epochs=6, batch_size=32):
    """Train a 3-layer MLP with SGD + momentum, weight decay, a step schedule and gradient
    clipping; report the loss of every step and the final accuracy."""
    nn = torch.nn
    F = torch.nn.functional
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)

    class MLP(nn.Module):
        def __init__(self, n_in, n_hidden, n_out):
            super().__init__()
            self.net = nn.Sequential(
                nn.Linear(n_in, n_hidden), nn.ReLU(),
                nn.Linear(n_hidden, n_hidden), nn.Tanh(),
                nn.Linear(n_hidden, n_out))
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                nn.init.kaiming_normal_(module.weight, nonlinearity="relu")
                nn.init.zeros_(module.bias)

        def forward(self, x):
            return self.net(x)

    model = MLP(X.shape[1], 32, int(Y.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    # model.to(device) is left out: minigrad's Module.to takes dtypes only (reported)
    x_all = torch.tensor(X, dtype=torch.float32).to(device)
    y_all = torch.from_numpy(Y).long().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=40, gamma=0.5)
    losses = []
    for epoch in range(epochs):
        model.train()
        perm = torch.from_numpy(order[epoch])
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            xb, yb = x_all[idx], y_all[idx]
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_all).argmax(dim=1) == y_all).float().mean().item()
    return {"init": start, "losses": losses, "accuracy": accuracy}


def spiral(n_per_class=64, classes=3, seed=0):
    """Points on interleaved noisy spirals, one arm per class."""
    rng = np.random.default_rng(seed)
    X, Y = [], []
    for c in range(classes):
        r = np.linspace(0.1, 1.0, n_per_class)
        angle = np.linspace(c * 4.0, (c + 1) * 4.0, n_per_class) + rng.normal(0, 0.2, n_per_class)
        X.append(np.stack([r * np.sin(angle), r * np.cos(angle)], 1))
        Y.append(np.full(n_per_class, c))
    return np.concatenate(X).astype(np.float32), np.concatenate(Y)


def test_mlp_trains_the_same_in_both(torch):
    X, Y = spiral()
    rng = np.random.default_rng(1)
    order = [rng.permutation(len(X)) for _ in range(6)]
    expected, got = run_both(mlp_program, torch, X, Y, order)
    assert_curves_match("mlp", expected["losses"], got["losses"], rtol=2e-3, every=6)
    assert abs(expected["accuracy"] - got["accuracy"]) <= 0.02
    assert expected["losses"][-1] < 0.7 * expected["losses"][0]  # it learns
