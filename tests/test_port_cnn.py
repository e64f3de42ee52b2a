"""Port test: the first CNN most PyTorch learners write, an MNIST-style classifier (two blocks
of Conv2d, BatchNorm2d, ReLU and MaxPool2d, then Flatten, Linear, Dropout, Linear), trained
with CrossEntropyLoss and Adam or SGD from a DataLoader over a TensorDataset of generated
1x12x12 images, then evaluated with model.eval(), torch.no_grad() and argmax accuracy. The
same source runs under PyTorch and under minigrad (passed in as `torch`) from the same
weights; the losses, the predictions and the trained parameters must agree."""
import numpy as np
import pytest

import minigrad
from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def cnn_program(torch, X, Y, X_test, Y_test, orders, init=None, dropout=0.0, optimizer="adam",
                batch_size=32):
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                nn.MaxPool2d(2),                                   # 8 x 6 x 6
                nn.Conv2d(8, 16, kernel_size=3, padding="same"), nn.ReLU(),
                nn.MaxPool2d(kernel_size=2, stride=2))             # 16 x 3 x 3
            self.classifier = nn.Sequential(
                nn.Flatten(), nn.Linear(16 * 3 * 3, 32), nn.ReLU(), nn.Dropout(dropout),
                nn.Linear(32, num_classes))

        def forward(self, x):
            return self.classifier(self.features(x))

    model = Net(int(Y.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    train = TensorDataset(torch.from_numpy(X), torch.from_numpy(Y).long())
    criterion = nn.CrossEntropyLoss()
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    losses = []
    for order in orders:
        model.train()
        # the batch order comes from NumPy: the libraries' shuffles draw different numbers
        for images, labels in DataLoader(train, batch_size=batch_size, sampler=order.tolist()):
            opt.zero_grad()
            loss = criterion(model(images), labels)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    correct, logits = 0, []
    with torch.no_grad():
        test = DataLoader(TensorDataset(torch.from_numpy(X_test), torch.from_numpy(Y_test)),
                          batch_size=64)
        for images, labels in test:
            out = model(images)
            logits.append(out.numpy())
            correct += (out.argmax(dim=1) == labels).sum().item()
    return {"init": start, "losses": losses, "accuracy": correct / len(X_test),
            "logits": np.concatenate(logits), "final": state_numpy(model)}


def shapes(n, seed):
    """n images 1x12x12 of four classes (a horizontal bar, a vertical bar, a diagonal, a
    square), at random places, with noise."""
    rng = np.random.default_rng(seed)
    X = rng.normal(0.0, 0.5, (n, 1, 12, 12)).astype(np.float32)
    Y = rng.integers(0, 4, n)
    for img, y in zip(X[:, 0], Y):
        r, c = rng.integers(1, 8, 2)
        if y == 0:
            img[r + 2, c:c + 5] += 2.0
        elif y == 1:
            img[r:r + 5, c + 2] += 2.0
        elif y == 2:
            img[np.arange(5) + r, np.arange(5) + c] += 2.0
        else:
            img[r:r + 3, c:c + 3] += 2.0
    return X, Y


def _data(n, epochs):
    X, Y = shapes(n, 0)
    X_test, Y_test = shapes(64, 1)
    rng = np.random.default_rng(2)
    return X, Y, X_test, Y_test, [rng.permutation(n) for _ in range(epochs)]


def _assert_same_run(name, expected, got, tol):
    assert_curves_match(name, expected["losses"], got["losses"], rtol=tol, every=4)
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=tol, atol=tol)
    assert got["accuracy"] == expected["accuracy"]
    assert_states_match(expected["final"], got["final"], rtol=tol, atol=tol)


def test_cnn_trains_the_same_in_both(torch):
    expected, got = run_both(cnn_program, torch, *_data(192, 3), optimizer="sgd")
    # SGD moves every weight by its gradient: the two runs stay within float32 rounding
    _assert_same_run("cnn sgd", expected, got, tol=1e-5)
    assert sorted(k for k in got["final"] if "features.1." in k) == [
        "features.1.bias", "features.1.num_batches_tracked", "features.1.running_mean",
        "features.1.running_var", "features.1.weight"]
    assert got["final"]["features.1.num_batches_tracked"] == 18
    assert np.mean(expected["losses"][-3:]) < 0.9 * np.mean(expected["losses"][:3])  # it learns


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_cnn_learns_the_task_the_same_in_both(torch, optimizer):
    expected, got = run_both(cnn_program, torch, *_data(256, 8), optimizer=optimizer)
    # Adam divides each gradient by its own running size, so the weights that see features a
    # ReLU keeps at zero almost always (gradients near 0) move by each library's rounding
    _assert_same_run(f"cnn {optimizer}", expected, got, tol=1e-2 if optimizer == "adam" else 1e-4)
    assert expected["accuracy"] > 0.8


@pytest.mark.slow
def test_cnn_with_dropout_repeats_and_ends_near_pytorch(torch):
    """Dropout draws from each library's own stream: the runs differ step by step, but
    minigrad's repeats exactly and both learn the task."""
    data = _data(256, 8)
    expected, got = run_both(cnn_program, torch, *data, dropout=0.25)
    again = cnn_program(minigrad, *data, init=expected["init"], dropout=0.25)
    assert got["losses"] == again["losses"]
    assert min(got["accuracy"], expected["accuracy"]) > 0.7
    assert abs(got["accuracy"] - expected["accuracy"]) < 0.2
