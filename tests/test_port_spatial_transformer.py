"""Port test: the Spatial Transformer Network tutorial's model, as its source writes it: a
localisation network (Conv2d, MaxPool2d, ReLU(True)) regressing a 2x3 affine matrix through a
`fc_loc` head initialised to the identity, `F.affine_grid(theta, x.size())` and
`F.grid_sample(x, grid)` (with the default align_corners and its warning), then the classifier
(conv, max_pool2d, Dropout2d, view(-1, 320), dropout, log_softmax), trained with SGD on
`F.nll_loss` over generated 28x28 digit-like images that are shifted, rotated and scaled. The
same source runs under PyTorch and under minigrad (passed in as `torch`) from the same
weights; the losses, the learned transforms and the trained weights must agree."""
import warnings

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def stn_program(torch, X, Y, orders, init=None, dropout=0.0, batch_size=16, lr=0.05):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
            self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
            self.conv2_drop = nn.Dropout2d(dropout)
            self.fc1 = nn.Linear(320, 50)
            self.fc2 = nn.Linear(50, 10)

            # Spatial transformer localization-network
            self.localization = nn.Sequential(
                nn.Conv2d(1, 8, kernel_size=7),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True),
                nn.Conv2d(8, 10, kernel_size=5),
                nn.MaxPool2d(2, stride=2),
                nn.ReLU(True)
            )

            # Regressor for the 3 * 2 affine matrix
            self.fc_loc = nn.Sequential(
                nn.Linear(10 * 3 * 3, 32),
                nn.ReLU(True),
                nn.Linear(32, 3 * 2)
            )

            # Initialize the weights/bias with identity transformation
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        # Spatial transformer network forward function
        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 10 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)

            grid = F.affine_grid(theta, x.size())
            x = F.grid_sample(x, grid)

            return x, theta

        def forward(self, x):
            # transform the input
            x, theta = self.stn(x)

            # Perform the usual forward pass
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 320)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, p=dropout, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1), theta

    model = Net()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.5)
    data, target = torch.from_numpy(X), torch.from_numpy(Y)
    losses, thetas = [], []
    with warnings.catch_warnings():  # the tutorial leaves align_corners to its default
        warnings.simplefilter("ignore", UserWarning)
        model.train()
        for order in orders:
            for i in range(0, len(order), batch_size):
                idx = torch.from_numpy(order[i:i + batch_size])
                optimizer.zero_grad()
                output, theta = model(data[idx])
                loss = F.nll_loss(output, target[idx])
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            output, theta = model(data[:8])
            transformed, _ = model.stn(data[:8])
    return {"init": start, "losses": losses, "theta": theta.numpy(),
            "transformed": transformed.numpy(), "pred": output.argmax(1).numpy(),
            "final": state_numpy(model)}


def digits(n, seed):
    """n 28x28 images of ten stroke patterns (bars, crosses, corners, boxes), each drawn at
    a random shift, rotation and scale, with noise: what the transformer should undo."""
    rng = np.random.default_rng(seed)
    strokes = {0: [(-1, -1, 1, -1), (1, -1, 1, 1), (1, 1, -1, 1), (-1, 1, -1, -1)],
               1: [(0, -1, 0, 1)], 2: [(-1, 0, 1, 0)], 3: [(-1, -1, 1, 1)], 4: [(-1, 1, 1, -1)],
               5: [(-1, -1, 1, 1), (-1, 1, 1, -1)], 6: [(0, -1, 0, 1), (-1, 0, 1, 0)],
               7: [(-1, -1, 1, -1), (1, -1, 1, 1)], 8: [(-1, 1, 1, 1), (-1, -1, -1, 1)],
               9: [(-1, -1, 1, -1), (-1, 1, 1, 1)]}
    X = rng.normal(0.0, 0.1, (n, 1, 28, 28)).astype(np.float32)
    Y = rng.integers(0, 10, n)
    t = np.linspace(0, 1, 40)
    for img, y in zip(X[:, 0], Y):
        angle, scale = rng.uniform(-0.6, 0.6), rng.uniform(3.5, 6.5)
        shift = rng.uniform(-5, 5, 2) + 13.5
        rot = np.array([[np.cos(angle), -np.sin(angle)], [np.sin(angle), np.cos(angle)]])
        for x0, y0, x1, y1 in strokes[y]:
            pts = np.stack([x0 + (x1 - x0) * t, y0 + (y1 - y0) * t]) * scale
            cols, rows = np.clip(np.rint(rot @ pts + shift[:, None]), 0, 27).astype(int)
            img[rows, cols] += 1.0
    return X, Y


def test_spatial_transformer_trains_the_same_in_both(torch):
    X, Y = digits(64, 0)
    rng = np.random.default_rng(1)
    orders = [rng.permutation(len(X)) for _ in range(2)]
    expected, got = run_both(stn_program, torch, X, Y, orders)
    assert_curves_match("stn", expected["losses"], got["losses"], rtol=1e-4)
    # the localisation head moved away from the identity, the same way in both
    assert np.abs(expected["theta"] - [[1, 0, 0], [0, 1, 0]]).max() > 1e-3
    np.testing.assert_allclose(got["theta"], expected["theta"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["transformed"], expected["transformed"], rtol=1e-4,
                               atol=1e-4)
    assert (got["pred"] == expected["pred"]).all()
    assert_states_match(expected["final"], got["final"], rtol=1e-3, atol=1e-4)


def test_the_tutorials_in_place_relu_after_linear():
    """fc_loc's nn.ReLU(True) writes into a Linear's output: it must be an ordinary result,
    not taken for a view of memory made outside the graph."""
    import minigrad as mg
    head = mg.nn.Sequential(mg.nn.Linear(5, 4), mg.nn.ReLU(True), mg.nn.Linear(4, 6))
    for shape in ((3, 5), (2, 3, 5), (5,)):
        x = mg.randn(*shape, requires_grad=True)
        head(x).sum().backward()
        assert x.grad.shape == shape
