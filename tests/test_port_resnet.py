"""Port test: a small ResNet trained on an imbalanced image set, in the style of the CIFAR
ResNet repositories and of PyTorch's performance blog posts: `BasicBlock`s whose shortcut is
an empty `nn.Sequential()` or a 1x1 conv + `BatchNorm2d`, `out += self.shortcut(x)`,
`F.relu`, `AdaptiveAvgPool2d` and `torch.flatten(out, 1)`, torchvision's initialisation
(`kaiming_normal_(mode="fan_out", nonlinearity="relu")` and the last norm of each block set to
zero), the model and the batches moved `to(memory_format=torch.channels_last)`; the data a
`TensorDataset` cut into `Subset`s, the classes balanced by a `WeightedRandomSampler` built
from `torch.bincount` under a seeded `torch.Generator`; SGD with Nesterov momentum and weight
decay under `CosineAnnealingWarmRestarts` stepped per batch with a fractional epoch, the
learning rate read by `get_last_lr()`; evaluation by per-class recall from a confusion matrix,
and a `torch.save`/`torch.load` round trip of the state dict into a fresh model that must
predict the same. Run by PyTorch and by minigrad (passed in as `torch`) from the same weights.

The sampler draws from each library's own random stream (see docs/pytorch-api.md): the strict
comparison feeds the batches in an order from NumPy, and the run with the sampler is checked
for repeating itself under the same seed and for drawing the classes about evenly."""
import numpy as np
import pytest

import minigrad
from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy

CLASS_SIZES = (48, 24, 12)


def resnet_program(torch, X, Y, split, ckpt_path, init=None, orders=None, epochs=3,
                   batch_size=16, width=8):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, in_planes, planes, stride=1):
            super().__init__()
            self.conv1 = nn.Conv2d(in_planes, planes, kernel_size=3, stride=stride, padding=1,
                                   bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=1, padding=1,
                                   bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.shortcut = nn.Sequential()
            if stride != 1 or in_planes != self.expansion * planes:
                self.shortcut = nn.Sequential(
                    nn.Conv2d(in_planes, self.expansion * planes, kernel_size=1, stride=stride,
                              bias=False),
                    nn.BatchNorm2d(self.expansion * planes))

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.shortcut(x)
            out = F.relu(out)
            return out

    class ResNet(nn.Module):
        def __init__(self, block, num_blocks, num_classes=10):
            super().__init__()
            self.in_planes = width
            self.conv1 = nn.Conv2d(3, width, kernel_size=3, stride=1, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.layer1 = self._make_layer(block, width, num_blocks[0], stride=1)
            self.layer2 = self._make_layer(block, 2 * width, num_blocks[1], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.linear = nn.Linear(2 * width * block.expansion, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            for m in self.modules():  # zero_init_residual
                if isinstance(m, BasicBlock) and m.bn2.weight is not None:
                    nn.init.constant_(m.bn2.weight, 0)

        def _make_layer(self, block, planes, num_blocks, stride):
            strides = [stride] + [1] * (num_blocks - 1)
            layers = []
            for stride in strides:
                layers.append(block(self.in_planes, planes, stride))
                self.in_planes = planes * block.expansion
            return nn.Sequential(*layers)

        def forward(self, x):
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.layer1(out)
            out = self.layer2(out)
            out = self.avgpool(out)
            out = torch.flatten(out, 1)
            return self.linear(out)

    def ResNet6(num_classes):
        return ResNet(BasicBlock, [1, 1], num_classes=num_classes)

    dataset = data.TensorDataset(torch.tensor(X), torch.tensor(Y, dtype=torch.long))
    train_set, val_set = data.Subset(dataset, split[0]), data.Subset(dataset, split[1])
    train_labels = torch.tensor(Y)[torch.tensor(split[0])]
    num_classes = int(train_labels.max()) + 1
    class_counts = torch.bincount(train_labels, minlength=num_classes)
    class_weights = 1.0 / class_counts.float()
    sample_weights = class_weights[train_labels]

    model = ResNet6(num_classes).to(device)
    model = model.to(memory_format=torch.channels_last)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    n_params = sum(p.numel() for p in model.parameters() if p.requires_grad)

    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True,
                                weight_decay=5e-4)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(optimizer, T_0=1, T_mult=2,
                                                                     eta_min=1e-3)
    g = torch.Generator()
    g.manual_seed(1234)
    sampler = data.WeightedRandomSampler(sample_weights, num_samples=len(sample_weights),
                                         replacement=True, generator=g)
    losses, lrs, drawn = [], [], []
    for epoch in range(epochs):
        if orders is not None:  # the strict comparison: the batch order from NumPy
            sampler = orders[epoch].tolist()
        loader = data.DataLoader(train_set, batch_size=batch_size, sampler=sampler,
                                 drop_last=True)
        iters = len(loader)
        model.train()
        for i, (inputs, targets) in enumerate(loader):
            inputs = inputs.to(device, non_blocking=True).to(memory_format=torch.channels_last)
            targets = targets.to(device, non_blocking=True)
            optimizer.zero_grad(set_to_none=True)
            outputs = model(inputs)
            loss = criterion(outputs, targets)
            loss.backward()
            optimizer.step()
            scheduler.step(epoch + i / iters)
            losses.append(loss.item())
            lrs.append(scheduler.get_last_lr()[0])
            drawn.extend(targets.tolist())

    def predict(net):
        net.eval()
        outs = []
        with torch.no_grad():
            for inputs, _ in data.DataLoader(val_set, batch_size=32):
                outs.append(net(inputs.contiguous(memory_format=torch.channels_last)))
        return torch.cat(outs)

    logits = predict(model)
    preds = logits.argmax(dim=1)
    val_targets = torch.tensor(Y)[torch.tensor(split[1])]
    confusion = torch.zeros(num_classes, num_classes, dtype=torch.long)
    for t, p in zip(val_targets.view(-1), preds.view(-1)):
        confusion[t.long(), p.long()] += 1
    recall = (confusion.diag().float() / confusion.sum(1).clamp(min=1).float())

    torch.save(model.state_dict(), ckpt_path)
    fresh = ResNet6(num_classes)
    fresh.load_state_dict(torch.load(ckpt_path, weights_only=True))
    return {"init": start, "losses": losses, "lrs": lrs, "logits": logits.numpy(),
            "reloaded": predict(fresh).numpy(), "confusion": confusion.numpy(),
            "recall": recall.numpy(), "sample_weights": sample_weights.numpy(),
            "n_params": n_params, "drawn": drawn, "final": state_numpy(model)}


def images(seed):
    """3x8x8 images of three classes in unequal numbers (CLASS_SIZES): a red, a green or a
    blue patch at a random place, on noise."""
    rng = np.random.default_rng(seed)
    Y = np.repeat(np.arange(3), CLASS_SIZES)
    rng.shuffle(Y)
    X = rng.normal(0.0, 0.6, (len(Y), 3, 8, 8)).astype(np.float32)
    for img, y in zip(X, Y):
        r, c = rng.integers(0, 5, 2)
        img[y, r:r + 4, c:c + 4] += 1.5
    return X, Y


def _data(epochs, n_train=64):
    X, Y = images(0)
    rng = np.random.default_rng(1)
    perm = rng.permutation(len(Y))
    split = (perm[:n_train], perm[n_train:])
    return X, Y, split, [rng.permutation(n_train) for _ in range(epochs)]


def test_resnet_trains_the_same_in_both(torch, tmp_path):
    X, Y, split, orders = _data(3)
    expected, got = run_both(resnet_program, torch, X, Y, split, str(tmp_path / "r.pt"),
                             orders=orders)
    # SGD moves every weight by its gradient: the runs stay within float32 rounding, which
    # twelve steps of momentum through batch norms grow to about 1e-5
    assert_curves_match("resnet", expected["losses"], got["losses"], rtol=2e-5)
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-12)
    np.testing.assert_allclose(got["logits"], expected["logits"], rtol=1e-4, atol=1e-4)
    assert_states_match(expected["final"], got["final"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(got["confusion"], expected["confusion"])
    np.testing.assert_allclose(got["recall"], expected["recall"])
    np.testing.assert_allclose(got["sample_weights"], expected["sample_weights"])
    assert got["n_params"] == expected["n_params"]
    # the saved and reloaded state dict predicts exactly what the trained model did
    np.testing.assert_array_equal(got["reloaded"], got["logits"])
    np.testing.assert_array_equal(expected["reloaded"], expected["logits"])
    # the schedule restarted: lr went back up at epochs 1 and 3
    assert expected["lrs"][3] < expected["lrs"][4]


def test_weighted_sampler_repeats_and_balances_the_classes(torch, tmp_path):
    X, Y, split, _ = _data(0)
    expected, got = run_both(resnet_program, torch, X, Y, split, str(tmp_path / "r.pt"),
                             epochs=2)
    again = resnet_program(minigrad, X, Y, split, str(tmp_path / "r2.pt"), init=expected["init"],
                           epochs=2)
    assert got["drawn"] == again["drawn"] and got["losses"] == again["losses"]
    assert got["drawn"] == expected["drawn"]  # the same stream: PyTorch's draws
    for run in (expected, got):
        counts = np.bincount(run["drawn"], minlength=3)
        # weights 1/count make each class equally likely; the imbalance was 4:2:1
        assert counts.min() >= 0.15 * counts.sum(), counts
        assert np.isfinite(run["losses"]).all()
