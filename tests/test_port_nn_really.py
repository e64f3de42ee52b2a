"""Port test: the tutorial "What is torch.nn really?", its MNIST refactoring step by step, on
generated 16x16 digit-like images instead of MNIST: a logistic regression from raw tensors
(`torch.randn(...) / math.sqrt(n)`, `requires_grad_()`, a hand-written `log_softmax` and
`nll` indexing `input[range(n), target]`, `weights -= weights.grad * lr` and `grad.zero_()`
under `torch.no_grad()`), then `F.cross_entropy`, an `nn.Module` of `nn.Parameter`s updated
through `model.parameters()` and `model.zero_grad()`, `nn.Linear`, `optim.SGD`,
`TensorDataset` and `DataLoader` with the validation loader at twice the batch size,
`loss_batch`/`fit`/`get_data` with `np.sum(np.multiply(losses, nums)) / np.sum(nums)`,
a CNN of strided `F.conv2d` layers and `F.avg_pool2d`, the same as `nn.Sequential` with a
`Lambda` layer, a `WrappedDataLoader` that preprocesses each batch, `nn.AdaptiveAvgPool2d`,
and at the end the examples' `with open(path, 'wb') as f: torch.save(model, f)` loaded back
with `torch.load(f, weights_only=False)`. Run by PyTorch and by minigrad (passed in as
`torch`) from the same weights; the shuffled order of each epoch comes from NumPy (the two
libraries' random streams differ), given to the `DataLoader` as its sampler."""
import math

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy

SIDE = 16


def nn_really_program(torch, x_train, y_train, x_valid, y_valid, orders, tmp_dir, init=None,
                      bs=32, lr=0.5, epochs=2):
    nn = torch.nn
    F = torch.nn.functional
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    torch.manual_seed(0)
    x_train, y_train, x_valid, y_valid = map(torch.tensor, (x_train, y_train, x_valid, y_valid))
    n, c = x_train.shape
    out = {"init": {}, "losses": {}, "valid": {}}
    out["shapes"] = (tuple(x_train.shape), y_train.min().item(), y_train.max().item(),
                     x_train.dtype == torch.float32, y_train.dtype == torch.int64)

    def loaded(name, model):
        if init is not None:
            model.load_state_dict({k: torch.from_numpy(v) for k, v in init[name].items()})
        out["init"][name] = state_numpy(model)
        return model

    class EpochOrders:
        """A sampler giving each epoch its own order (NumPy's, the same in both runs)."""

        def __init__(self):
            self.epoch = 0

        def __iter__(self):
            order = orders[self.epoch % len(orders)]
            self.epoch += 1
            return iter(order.tolist())

        def __len__(self):
            return len(orders[0])

    # --- neural net from scratch ----------------------------------------------------------
    if init is None:
        weights = torch.randn(c, 10) / math.sqrt(c)
    else:
        weights = torch.from_numpy(init["weights"])
    out["init"]["weights"] = weights.numpy().copy()
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()

    loss_func = nll

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    xb = x_train[0:bs]
    preds = model(xb)
    out["preds0"] = (preds[0].detach().numpy().copy(), tuple(preds.shape))
    yb = y_train[0:bs]
    out["first"] = (loss_func(preds, yb).item(), accuracy(preds, yb).item())

    losses = []
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            losses.append(loss.item())
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    out["losses"]["scratch"] = losses
    out["scratch"] = (loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())

    # --- torch.nn.functional ----------------------------------------------------------------
    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias

    out["functional"] = (loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())

    # --- nn.Module --------------------------------------------------------------------------
    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(c, 10) / math.sqrt(c))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = loaded("logistic", Mnist_Logistic())

    def fit():
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)
                losses.append(loss.item())
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()

    losses = []
    fit()
    out["losses"]["module"] = losses

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(c, 10)

        def forward(self, xb):
            return self.lin(xb)

    model = loaded("linear", Mnist_Logistic())
    losses = []
    fit()
    out["losses"]["linear"] = losses

    # --- optim, Dataset, DataLoader, validation -------------------------------------------------
    train_ds = TensorDataset(x_train, y_train)
    valid_ds = TensorDataset(x_valid, y_valid)

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl, name):
        valid = []
        for epoch in range(epochs):
            model.train()
            for xb, yb in train_dl:
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                batch_losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl])
            val_loss = np.sum(np.multiply(batch_losses, nums)) / np.sum(nums)
            valid.append(float(val_loss))
        out["valid"][name] = valid

    def get_data(train_ds, valid_ds, bs):
        return (DataLoader(train_ds, batch_size=bs, sampler=EpochOrders()),
                DataLoader(valid_ds, batch_size=bs * 2))

    def get_model(name):
        model = loaded(name, Mnist_Logistic())
        return model, torch.optim.SGD(model.parameters(), lr=lr)

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    model, opt = get_model("dataloader")
    losses = []
    fit(epochs, model, loss_func, opt, train_dl, valid_dl, "logistic")
    out["losses"]["dataloader"] = losses

    # --- a CNN ------------------------------------------------------------------------------
    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, SIDE, SIDE)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 2)
            return xb.view(-1, xb.size(1))

    lr = 0.1
    model = loaded("cnn", Mnist_CNN())
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    fit(epochs, model, loss_func, opt, train_dl, valid_dl, "cnn")
    out["losses"]["cnn"] = losses

    # --- nn.Sequential with a Lambda layer --------------------------------------------------
    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, SIDE, SIDE)

    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AvgPool2d(2),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    model = loaded("sequential", model)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    fit(epochs, model, loss_func, opt, train_dl, valid_dl, "sequential")
    out["losses"]["sequential"] = losses

    # --- wrapping the DataLoader, adaptive pooling ------------------------------------------
    def preprocess(x, y):
        return x.view(-1, 1, SIDE, SIDE), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield (self.func(*b))

    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(train_dl, preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    model = loaded("adaptive", model)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    fit(epochs, model, loss_func, opt, train_dl, valid_dl, "adaptive")
    out["losses"]["adaptive"] = losses
    out["lengths"] = (len(train_dl), len(valid_dl))

    # --- the examples' save and load of a whole model ---------------------------------------
    # a Lambda defined in a function cannot be pickled, so the saved model ends in nn.Flatten
    model = nn.Sequential(*list(model.children())[:-1], nn.Flatten())
    path = f"{tmp_dir}/model.pt"
    with open(path, "wb") as f:
        torch.save(model, f)
    with open(path, "rb") as f:
        model = torch.load(f, weights_only=False)
    model.eval()
    with torch.no_grad():
        xb, yb = next(iter(valid_dl))
        out["reloaded"] = (loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item())
    out["final"] = state_numpy(model)
    return out


def digits(n, seed):
    """16x16 images of ten noisy shapes (a bar at one of ten places and angles), flattened as
    MNIST's are: (n, 256) float32 in [0, 1] and labels (n,) int64."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:SIDE, 0:SIDE] / (SIDE - 1) - 0.5
    labels = rng.integers(0, 10, n)
    images = np.empty((n, SIDE, SIDE))
    for i, label in enumerate(labels):
        angle = np.pi * (label % 5) / 5 + rng.normal(0, 0.1)
        offset = 0.2 * (label // 5) - 0.1 + rng.normal(0, 0.03)
        distance = np.abs(np.cos(angle) * yy - np.sin(angle) * xx - offset)
        images[i] = np.exp(-(distance / 0.08) ** 2) + rng.normal(0, 0.1, (SIDE, SIDE))
    return np.clip(images, 0, 1).reshape(n, -1).astype(np.float32), labels.astype(np.int64)


def test_nn_really_refactors_the_same_in_both(torch, tmp_path):
    x_train, y_train = digits(320, seed=0)
    x_valid, y_valid = digits(96, seed=1)
    rng = np.random.default_rng(2)
    orders = [rng.permutation(len(x_train)) for _ in range(2)]
    expected, got = run_both(nn_really_program, torch, x_train, y_train, x_valid, y_valid,
                             orders, str(tmp_path))
    assert got["shapes"] == expected["shapes"]
    np.testing.assert_allclose(got["preds0"][0], expected["preds0"][0], rtol=1e-5, atol=1e-6)
    assert got["preds0"][1] == expected["preds0"][1]
    for key in ("first", "scratch", "functional", "reloaded"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-6, err_msg=key)
    for name, want in expected["losses"].items():
        assert_curves_match(name, want, got["losses"][name], rtol=1e-3, every=10)
    for name, want in expected["valid"].items():
        np.testing.assert_allclose(got["valid"][name], want, rtol=1e-3, err_msg=name)
    assert got["lengths"] == expected["lengths"] == (10, 2)
    for key, want in expected["final"].items():
        np.testing.assert_allclose(got["final"][key], want, rtol=1e-3, atol=1e-5, err_msg=key)
    assert expected["valid"]["logistic"][-1] < 0.7 * math.log(10)  # the data can be learnt
