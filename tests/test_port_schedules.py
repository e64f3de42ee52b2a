"""Port test: three training recipes in ordinary PyTorch style, run by PyTorch and by minigrad
(passed in as `torch`) from the same weights: RMSprop (centered, with momentum and weight
decay) under a per-batch OneCycleLR that also cycles the momentum; Adagrad with two parameter
groups under a ReduceLROnPlateau watching the validation loss, its state saved and loaded
mid-run; Adadelta under StepLR(step_size=1, gamma=0.7), as PyTorch's MNIST example trains.
The loss curves and the learning rates must agree."""
import io

import numpy as np
import pytest

from port_runner import assert_curves_match, run_both, state_numpy


def schedule_program(torch, X, Y, Xv, Yv, order, recipe, init=None, batch_size=32):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)
    epochs = len(order)

    class Classifier(nn.Module):
        def __init__(self, n_in, n_hidden, n_out):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(n_in, n_hidden), nn.ReLU(),
                                      nn.Linear(n_hidden, n_hidden), nn.Tanh())
            self.head = nn.Linear(n_hidden, n_out)

        def forward(self, x):
            return self.head(self.body(x))

    model = Classifier(X.shape[1], 32, int(Y.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    x_all, y_all = torch.from_numpy(X), torch.from_numpy(Y).long()
    x_val, y_val = torch.from_numpy(Xv), torch.from_numpy(Yv).long()
    steps_per_epoch = (len(X) + batch_size - 1) // batch_size

    if recipe == "rmsprop":
        optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3, alpha=0.9, momentum=0.9,
                                        centered=True, weight_decay=1e-4)
        scheduler = torch.optim.lr_scheduler.OneCycleLR(
            optimizer, max_lr=5e-3, epochs=epochs, steps_per_epoch=steps_per_epoch,
            pct_start=0.25)
    elif recipe == "adadelta":
        optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    else:
        optimizer = torch.optim.Adagrad([
            {"params": model.body.parameters()},
            {"params": model.head.parameters(), "lr": 0.05}], lr=0.2, lr_decay=1e-3)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="min", factor=0.5, patience=1, threshold=0.02)

    losses, lrs, val_losses = [], [], []
    for epoch in range(epochs):
        model.train()
        perm = torch.from_numpy(order[epoch])
        for i in range(0, len(perm), batch_size):
            idx = perm[i:i + batch_size]
            loss = F.cross_entropy(model(x_all[idx]), y_all[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if recipe == "rmsprop":
                scheduler.step()
            losses.append(loss.item())
            lrs.append(optimizer.param_groups[0]["lr"])
        model.eval()
        with torch.no_grad():
            val_loss = F.cross_entropy(model(x_val), y_val).item()
        val_losses.append(val_loss)
        if recipe == "adadelta":
            scheduler.step()
        if recipe == "adagrad":
            scheduler.step(val_loss)
            if epoch == epochs // 2:  # a checkpoint of the schedule, as a resumable run keeps
                buf = io.BytesIO()
                torch.save(scheduler.state_dict(), buf)
                buf.seek(0)
                scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
                scheduler.load_state_dict(torch.load(buf))
    return {"init": start, "losses": losses, "lrs": lrs, "val": val_losses,
            "last_lr": scheduler.get_last_lr()}


def blobs(n, seed):
    """Three overlapping Gaussian classes in 6 dimensions."""
    rng = np.random.default_rng(seed)
    centers = np.random.default_rng(7).standard_normal((3, 6)) * 1.5
    y = rng.integers(0, 3, n)
    return (centers[y] + rng.standard_normal((n, 6))).astype(np.float32), y


@pytest.mark.parametrize("recipe", ["rmsprop", "adagrad", "adadelta"])
def test_schedules_train_the_same_in_both(recipe, torch):
    X, Y = blobs(192, 0)
    Xv, Yv = blobs(96, 1)
    rng = np.random.default_rng(2)
    order = [rng.permutation(len(X)) for _ in range(10)]
    expected, got = run_both(schedule_program, torch, X, Y, Xv, Yv, order, recipe)
    assert_curves_match(recipe, expected["losses"], got["losses"], rtol=2e-4, every=6)
    np.testing.assert_allclose(got["val"], expected["val"], rtol=2e-4)
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-9)
    np.testing.assert_allclose(got["last_lr"], expected["last_lr"], rtol=1e-9)
    assert expected["losses"][-1] < 0.6 * expected["losses"][0]  # it learns
    if recipe == "adagrad":  # the plateau was reached: the rate was cut at least once
        assert expected["lrs"][-1] < expected["lrs"][0]
    elif recipe == "adadelta":  # recorded after each batch: epoch e trains at 0.7 ** e
        assert expected["lrs"][-1] == pytest.approx(0.7 ** 9)
    else:  # one cycle: up to max_lr, then down far below where it started (max_lr / 25)
        assert max(expected["lrs"]) == pytest.approx(5e-3)
        assert expected["lrs"][-1] < 5e-3 / 25 / 10
