"""Port test: PyTorch's super-resolution example (ESPCN, "sub-pixel convolution"), shrunk: a
network of Conv2d + ReLU ending in a convolution to upscale_factor ** 2 channels and
`nn.PixelShuffle(upscale_factor)`, its weights drawn by `init.orthogonal_` with
`init.calculate_gain('relu')`, trained on the luminance of images paired with their
downscaled copies by MSELoss and Adam, the PSNR of each step computed as
`10 * log10(1 / mse.item())`, then a test image upscaled under `no_grad` and its PSNR; and an
AlexNet-like classifier (Conv2d, ReLU(inplace=True), LocalResponseNorm, MaxPool2d,
AdaptiveMaxPool2d, Flatten, Linear) trained by SGD with momentum and weight decay.

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights; the images come
from NumPy, outside the program."""
import math

import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def espcn_program(torch, batches, test_pair, init=None, upscale_factor=3, lr=1e-2):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 16, (5, 5), (1, 1), (2, 2))
            self.conv2 = nn.Conv2d(16, 16, (3, 3), (1, 1), (1, 1))
            self.conv3 = nn.Conv2d(16, 8, (3, 3), (1, 1), (1, 1))
            self.conv4 = nn.Conv2d(8, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
            self._initialize_weights()

        def forward(self, x):
            x = self.relu(self.conv1(x))
            x = self.relu(self.conv2(x))
            x = self.relu(self.conv3(x))
            x = self.pixel_shuffle(self.conv4(x))
            return x

        def _initialize_weights(self):
            nn.init.orthogonal_(self.conv1.weight, nn.init.calculate_gain("relu"))
            nn.init.orthogonal_(self.conv2.weight, nn.init.calculate_gain("relu"))
            nn.init.orthogonal_(self.conv3.weight, nn.init.calculate_gain("relu"))
            nn.init.orthogonal_(self.conv4.weight)

    model = Net(upscale_factor=upscale_factor)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses, psnrs = [], []
    for low, high in batches:
        input, target = torch.from_numpy(low), torch.from_numpy(high)
        optimizer.zero_grad()
        loss = criterion(model(input), target)
        losses.append(loss.item())
        psnrs.append(10 * math.log10(1 / loss.item()))
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        low, high = (torch.from_numpy(a) for a in test_pair)
        prediction = model(low)
        test_psnr = 10 * math.log10(1 / F.mse_loss(prediction, high).item())
        # the network's output regrouped to its low-resolution channels is conv4's output
        regrouped = F.pixel_unshuffle(prediction, upscale_factor)
    return {"init": start, "losses": losses, "psnr": psnrs, "test_psnr": test_psnr,
            "prediction": prediction.numpy(), "regrouped": regrouped.numpy(),
            "state": state_numpy(model)}


def alexnet_program(torch, X, Y, orders, init=None, batch_size=8):
    nn = torch.nn
    torch.manual_seed(0)

    class AlexNet(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, kernel_size=5, stride=2, padding=2), nn.ReLU(inplace=True),
                nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2),
                nn.MaxPool2d(kernel_size=3, stride=2),
                nn.Conv2d(8, 12, kernel_size=3, padding=1), nn.ReLU(inplace=True),
                nn.LocalResponseNorm(size=5, alpha=1e-4, beta=0.75, k=2),
                nn.Conv2d(12, 12, kernel_size=3, padding=1), nn.ReLU(inplace=True))
            self.pool = nn.AdaptiveMaxPool2d((2, 2))
            self.classifier = nn.Sequential(
                nn.Flatten(), nn.Linear(12 * 2 * 2, 16), nn.ReLU(inplace=True),
                nn.Linear(16, num_classes))

        def forward(self, x):
            return self.classifier(self.pool(self.features(x)))

    model = AlexNet(int(Y.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    images, labels = torch.from_numpy(X), torch.from_numpy(Y)
    losses = []
    for order in orders:
        model.train()
        for i in range(0, len(order), batch_size):
            idx = torch.from_numpy(order[i:i + batch_size])
            optimizer.zero_grad()
            loss = criterion(model(images[idx]), labels[idx])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        pooled, where = nn.functional.adaptive_max_pool2d(model.features(images[:4]), (2, 2),
                                                         return_indices=True)
        predicted = model(images).argmax(1)
    return {"init": start, "losses": losses, "pooled": pooled.numpy(), "where": where.numpy(),
            "predicted": predicted.numpy(), "state": state_numpy(model)}


def _images(n, size, rng):
    """Smooth random luminance images in [0, 1] (sums of a few random waves)."""
    yy, xx = np.mgrid[:size, :size] / size
    out = np.zeros((n, 1, size, size))
    for _ in range(3):
        fy, fx, phase = rng.uniform(0.5, 3, (3, n, 1, 1, 1))
        out += np.sin(2 * np.pi * (fy * yy + fx * xx) + 6 * phase)
    return ((out - out.min()) / (out.max() - out.min())).astype(np.float32)


def _pair(high, r=3):
    """(the r-times smaller image by averaging r x r blocks, the image)."""
    n, c, h, w = high.shape
    low = high.reshape(n, c, h // r, r, w // r, r).mean((3, 5)).astype(np.float32)
    return low, high


def test_espcn_with_pixel_shuffle_trains_the_same_in_both(torch):
    rng = np.random.default_rng(0)
    batches = [_pair(_images(4, 18, rng)) for _ in range(6)]
    test_pair = _pair(_images(2, 18, rng))
    expected, got = run_both(espcn_program, torch, batches, test_pair)
    assert_curves_match("espcn loss", expected["losses"], got["losses"], rtol=1e-4)
    assert_curves_match("espcn psnr", expected["psnr"], got["psnr"], rtol=1e-5)
    assert abs(got["test_psnr"] - expected["test_psnr"]) < 1e-3
    np.testing.assert_allclose(got["prediction"], expected["prediction"], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["regrouped"], expected["regrouped"], rtol=1e-3, atol=1e-4)
    assert got["prediction"].shape == (2, 1, 18, 18) and got["regrouped"].shape == (2, 9, 6, 6)
    assert_states_match(expected["state"], got["state"], rtol=1e-3, atol=1e-4)
    assert got["losses"][-1] < got["losses"][0]  # it learns


def test_alexnet_with_lrn_and_adaptive_max_pool_trains_the_same_in_both(torch):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((24, 3, 20, 20)).astype(np.float32)
    Y = rng.integers(0, 3, 24)
    X[np.arange(24), Y, 5:15, 5:15] += 2.0  # the class is the brightest channel's square
    orders = [rng.permutation(24) for _ in range(2)]
    expected, got = run_both(alexnet_program, torch, X, Y, orders)
    assert_curves_match("alexnet loss", expected["losses"], got["losses"], rtol=1e-4)
    np.testing.assert_allclose(got["pooled"], expected["pooled"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got["where"], expected["where"])
    np.testing.assert_array_equal(got["predicted"], expected["predicted"])
    assert_states_match(expected["state"], got["state"], rtol=1e-3, atol=1e-4)
