"""Port test: a regression script as tutorials write one: the device idiom
(`torch.device("cuda" if torch.cuda.is_available() else "cpu")`, `.to(device)` on the model
and on every batch), `TensorDataset` cut by `random_split` with a seeded `Generator`, a
`Standardize` module keeping the training set's mean and std in registered buffers, an
`nn.Sequential` of Linear/BatchNorm1d/LeakyReLU/Dropout initialised by `model.apply(init_fn)`
with `kaiming_normal_`, `xavier_uniform_` with `calculate_gain` and `zeros_`, then printed,
`MSELoss` to train and `L1Loss`/R^2 to report, SGD with Nesterov momentum and weight decay,
`StepLR` by epoch, and predictions gathered under `torch.no_grad()` and brought back with
`.cpu().numpy()`. Run by PyTorch and by minigrad (passed in as `torch`)
from the same weights.

The split and the shuffle come from each library's own random stream (see
docs/pytorch-api.md); the strict comparison gives the program the split's indices and the
batch order from NumPy, and the run with `random_split` and `shuffle=True` is compared by
its end (and must repeat itself exactly under the same seeds)."""
import numpy as np

import minigrad
from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def regression_program(torch, X, Y, init=None, split=None, orders=None, dropout=0.0, epochs=6,
                       batch_size=32):
    nn = torch.nn
    data = torch.utils.data
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)

    dataset = data.TensorDataset(torch.tensor(X, dtype=torch.float32),
                                 torch.tensor(Y, dtype=torch.float32).unsqueeze(1))
    if split is None:
        train_set, val_set = data.random_split(dataset, [0.8, 0.2],
                                               generator=torch.Generator().manual_seed(42))
    else:
        train_set, val_set = data.Subset(dataset, split[0]), data.Subset(dataset, split[1])

    class Standardize(nn.Module):
        def __init__(self, x):
            super().__init__()
            self.register_buffer("mean", x.mean(dim=0))
            self.register_buffer("std", x.std(dim=0) + 1e-6)

        def forward(self, x):
            return (x - self.mean) / self.std

    x_train = torch.stack([train_set[i][0] for i in range(len(train_set))])
    model = nn.Sequential(
        Standardize(x_train),
        nn.Linear(X.shape[1], 64), nn.BatchNorm1d(64), nn.LeakyReLU(0.2), nn.Dropout(dropout),
        nn.Linear(64, 32), nn.BatchNorm1d(32), nn.LeakyReLU(0.2), nn.Dropout(dropout),
        nn.Linear(32, 1),
    )

    def init_fn(m):
        if isinstance(m, nn.Linear):
            if m.out_features == 1:
                nn.init.xavier_uniform_(m.weight, gain=nn.init.calculate_gain("linear"))
            else:
                nn.init.kaiming_normal_(m.weight, a=0.2, mode="fan_out",
                                        nonlinearity="leaky_relu")
            nn.init.zeros_(m.bias)

    model.apply(init_fn)
    model = model.to(device)
    printed = str(model)  # print(model), as scripts do before training
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)

    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                                weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    val_loader = data.DataLoader(val_set, batch_size=64)

    def evaluate():
        model.eval()
        preds, targets = [], []
        with torch.no_grad():
            for xb, yb in val_loader:
                xb, yb = xb.to(device), yb.to(device)
                preds.append(model(xb))
                targets.append(yb)
        pred, target = torch.cat(preds), torch.cat(targets)
        r2 = 1 - ((target - pred) ** 2).sum() / ((target - target.mean()) ** 2).sum()
        return {"mse": criterion(pred, target).item(), "mae": nn.L1Loss()(pred, target).item(),
                "r2": r2.item(),
                "pred": pred.squeeze(1).cpu().numpy()}

    losses, history, lrs = [], [], []
    for epoch in range(epochs):
        model.train()
        if orders is None:
            loader = data.DataLoader(train_set, batch_size=batch_size, shuffle=True,
                                     drop_last=True, generator=torch.Generator().manual_seed(epoch))
        else:
            loader = data.DataLoader(data.Subset(train_set, orders[epoch].tolist()),
                                     batch_size=batch_size, drop_last=True)
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        metrics = evaluate()
        scheduler.step()
        history.append(metrics)
        lrs.append(optimizer.param_groups[0]["lr"])
    return {"init": start, "losses": losses, "history": history, "lrs": lrs,
            "final": state_numpy(model), "sizes": (len(train_set), len(val_set)),
            "printed": printed,
            "split": sorted(list(train_set.indices) + list(val_set.indices)),
            "device": (str(device), next(model.parameters()).device.type)}


def regression_data(n=240, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 20, d) + rng.uniform(-5, 5, d)
    z = (X - X.mean(0)) / X.std(0)
    Y = np.sin(z[:, 0]) + z[:, 1] * z[:, 2] - 0.5 * np.abs(z[:, 3]) + 0.1 * rng.normal(size=n)
    return X.astype(np.float32), Y.astype(np.float32)


def test_regression_trains_the_same_in_both(torch):
    X, Y = regression_data()
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(X))
    split = (perm[:192].tolist(), perm[192:].tolist())
    orders = [rng.permutation(192) for _ in range(6)]
    expected, got = run_both(regression_program, torch, X, Y, split=split, orders=orders)
    assert got["device"] == expected["device"] == ("cpu", "cpu")
    assert got["printed"] == expected["printed"]
    assert_curves_match("regression", expected["losses"], got["losses"], rtol=1e-4, every=6)
    for want, have in zip(expected["history"], got["history"]):
        for key in ("mse", "mae", "r2"):
            np.testing.assert_allclose(have[key], want[key], rtol=1e-4, err_msg=key)
        np.testing.assert_allclose(have["pred"], want["pred"], rtol=1e-4, atol=1e-5)
    assert got["lrs"] == expected["lrs"]
    assert expected["history"][-1]["r2"] > 0.5  # it learns
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=1e-5)


def test_random_split_and_shuffle_run_repeats_and_ends_near_pytorch(torch):
    """The split and the batches differ between the libraries (their own streams) and dropout
    draws from them too: the end must be alike, and minigrad's run must repeat exactly."""
    X, Y = regression_data()
    expected, got = run_both(regression_program, torch, X, Y, dropout=0.1)
    again = regression_program(minigrad, X, Y, init=expected["init"], dropout=0.1)
    assert got["losses"] == again["losses"]
    assert got["sizes"] == expected["sizes"] == (192, 48)
    assert got["split"] == expected["split"] == list(range(240))
    print(f"\nshuffled regression, validation R^2: PyTorch {expected['history'][-1]['r2']:.3f}, "
          f"minigrad {got['history'][-1]['r2']:.3f}")
    # 48 validation rows drawn by different streams: R^2 moves by several hundredths
    assert min(got["history"][-1]["r2"], expected["history"][-1]["r2"]) > 0.55
    assert abs(got["history"][-1]["r2"] - expected["history"][-1]["r2"]) < 0.15
