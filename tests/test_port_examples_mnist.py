"""Port test: the PyTorch examples repository's `mnist/main.py` as written, on generated 16x16
images instead of MNIST: the `argparse` parser and its `args` object (`parse_args([...])`),
`torch.manual_seed(args.seed)`, the device from `torch.accelerator.is_available()`,
`train_kwargs`/`test_kwargs` dicts passed to `DataLoader`, the `Net` of `conv1`/`conv2`,
`F.max_pool2d`, `nn.Dropout`, `torch.flatten(x, 1)` and `F.log_softmax`, `train(args, model,
device, train_loader, optimizer, epoch)` with `model.train()`, `F.nll_loss`, the printed
`Train Epoch: {} [{}/{} ({:.0f}%)]\\tLoss: {:.6f}` lines every `log_interval` batches,
`test(model, device, test_loader)` summing `F.nll_loss(..., reduction='sum').item()` and
counting `pred.eq(target.view_as(pred)).sum().item()`, `optim.Adadelta` under
`StepLR(step_size=1, gamma=args.gamma)`, and `torch.save(model.state_dict(), "mnist_cnn.pt")`
loaded back into a new `Net`. Then the examples' `regression/main.py`: polynomial features by
`torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)`, `poly_desc`, `F.smooth_l1_loss`,
the update `param.data.add_(-0.1 * param.grad)` after `fc.zero_grad()`, and the loop over
`itertools.count(1)` until the loss is below 1e-3. Run by PyTorch and by minigrad (passed in as
`torch`) from the same weights; shuffling and dropout are off and the regression's random
batches come from NumPy, as the two libraries' random streams differ; the printed lines must
be the same but for digits of the loss."""
import argparse
import re
from itertools import count

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy
from test_port_nn_really import SIDE, digits


def mnist_program(torch, images, labels, test_images, test_labels, tmp_dir, init=None,
                  argv=("--epochs", "2", "--batch-size", "32", "--log-interval", "2")):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    StepLR = torch.optim.lr_scheduler.StepLR
    lines = []
    print = lines.append  # the script's prints, kept to compare

    class Net(nn.Module):
        def __init__(self, dropout=0.0):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, 1)
            self.conv2 = nn.Conv2d(8, 16, 3, 1)
            self.dropout1 = nn.Dropout(dropout)
            self.dropout2 = nn.Dropout(dropout)
            self.fc1 = nn.Linear(16 * 6 * 6, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def train(args, model, device, train_loader, optimizer, epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))
                if args.dry_run:
                    break

    def test(model, device, test_loader):
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction='sum').item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
            test_loss, correct, len(test_loader.dataset),
            100. * correct / len(test_loader.dataset)))
        return test_loss, correct

    parser = argparse.ArgumentParser(description='PyTorch MNIST Example')
    parser.add_argument('--batch-size', type=int, default=64, metavar='N')
    parser.add_argument('--test-batch-size', type=int, default=1000, metavar='N')
    parser.add_argument('--epochs', type=int, default=14, metavar='N')
    parser.add_argument('--lr', type=float, default=1.0, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--no-accel', action='store_true')
    parser.add_argument('--dry-run', action='store_true')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--log-interval', type=int, default=10, metavar='N')
    parser.add_argument('--save-model', action='store_true', default=True)
    args = parser.parse_args(list(argv))

    use_accel = not args.no_accel and torch.accelerator.is_available()
    torch.manual_seed(args.seed)
    if use_accel:
        device = torch.accelerator.current_accelerator()
    else:
        device = torch.device("cpu")

    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        accel_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)

    # the script's transforms.Normalize((0.1307,), (0.3081,)) on ToTensor()'s (N, 1, H, W)
    def to_dataset(x, y):
        x = (torch.from_numpy(x).unsqueeze(1) - 0.1307) / 0.3081
        return torch.utils.data.TensorDataset(x, torch.from_numpy(y))

    dataset1 = to_dataset(images, labels)
    dataset2 = to_dataset(test_images, test_labels)
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)

    model = Net().to(device)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)

    losses, results, lrs = [], [], []
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        results.append(test(model, device, test_loader))
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])

    if args.save_model:
        torch.save(model.state_dict(), f"{tmp_dir}/mnist_cnn.pt")
    reloaded = Net()
    reloaded.load_state_dict(torch.load(f"{tmp_dir}/mnist_cnn.pt", weights_only=True))
    reloaded.eval()
    same = test(reloaded, device, test_loader) == results[-1]
    return {"init": start, "losses": losses, "results": results, "lines": lines, "lrs": lrs,
            "reloaded_same": same, "final": state_numpy(model)}


def regression_program(torch, batches, init=None):
    F = torch.nn.functional
    POLY_DEGREE = 4
    W_target = torch.from_numpy(batches["w"]).unsqueeze(1)
    b_target = torch.from_numpy(batches["b"])

    def make_features(x):
        """Builds features i.e. a matrix with columns [x, x^2, x^3, x^4]."""
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, POLY_DEGREE+1)], 1)

    def f(x):
        """Approximated function."""
        return x.mm(W_target) + b_target.item()

    def poly_desc(W, b):
        """Creates a string description of a polynomial."""
        result = 'y = '
        for i, w in enumerate(W):
            result += '{:+.2f} x^{} '.format(w, i + 1)
        result += '{:+.2f}'.format(b[0])
        return result

    def get_batch(batch_idx):
        """Builds a batch i.e. (x, f(x)) pair (the script's torch.randn(batch_size), given)."""
        random = torch.from_numpy(batches["x"][batch_idx % len(batches["x"])])
        x = make_features(random)
        y = f(x)
        return x, y

    fc = torch.nn.Linear(W_target.size(0), 1)
    if init is not None:
        fc.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(fc)
    losses = []
    for batch_idx in count(1):
        batch_x, batch_y = get_batch(batch_idx)
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(batch_x), batch_y)
        loss = output.item()
        losses.append(loss)
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if loss < 1e-3 or batch_idx == 2000:
            break
    lines = ['Loss: {:.6f} after {} batches'.format(loss, batch_idx),
             '==> Learned function:\t' + poly_desc(fc.weight.view(-1), fc.bias),
             '==> Actual function:\t' + poly_desc(W_target.view(-1), b_target)]
    return {"init": start, "losses": losses, "lines": lines}


def without_digits(line):
    """A printed line with its decimals blurred: the last digit of a loss may differ."""
    return re.sub(r"\d+\.\d+", "#", line)


def test_examples_mnist_trains_the_same_in_both(torch, tmp_path):
    (images, labels), (test_images, test_labels) = (digits(256, seed=0), digits(96, seed=1))
    images = images.reshape(-1, SIDE, SIDE)  # as ToTensor() leaves them, less the channel
    test_images = test_images.reshape(-1, SIDE, SIDE)
    expected, got = run_both(mnist_program, torch, images, labels, test_images, test_labels,
                             str(tmp_path))
    assert_curves_match("mnist", expected["losses"], got["losses"], rtol=2e-3, every=2)
    assert [without_digits(l) for l in got["lines"]] == \
        [without_digits(l) for l in expected["lines"]]
    for (want_loss, want_correct), (loss, correct) in zip(expected["results"], got["results"]):
        np.testing.assert_allclose(loss, want_loss, rtol=2e-3)
        assert abs(correct - want_correct) <= 1
    np.testing.assert_allclose(got["lrs"], expected["lrs"], rtol=1e-12)
    assert got["reloaded_same"] and expected["reloaded_same"]
    assert expected["results"][-1][1] > 50  # of 96: it learns
    for key, want in expected["final"].items():
        np.testing.assert_allclose(got["final"][key], want, rtol=2e-3, atol=2e-4, err_msg=key)


def test_examples_regression_fits_the_same_in_both(torch):
    rng = np.random.default_rng(0)
    batches = {"w": (rng.standard_normal(4) * 5).astype(np.float32),
               "b": (rng.standard_normal(1) * 5).astype(np.float32),
               "x": rng.standard_normal((50, 32)).astype(np.float32)}
    expected, got = run_both(regression_program, torch, batches)
    n = min(len(expected["losses"]), len(got["losses"]), 300)
    assert_curves_match("regression", expected["losses"][:n], got["losses"][:n], rtol=2e-3,
                        every=30)
    assert abs(len(got["losses"]) - len(expected["losses"])) <= 2  # both stop near 1e-3
    assert got["lines"][1:] == expected["lines"][1:]
    assert expected["losses"][-1] < 1e-3
