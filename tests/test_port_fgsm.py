"""Port test: the adversarial-example (FGSM) tutorial. A "pretrained" LeNet-style network, saved
by PyTorch's `torch.save` as the tutorial's downloaded `lenet_mnist_model.pth` is, is loaded
with `torch.load(..., map_location=device, weights_only=True)`, put in `model.eval()` (its
dropout off) and attacked one test image at a time: `data.requires_grad = True`, the loss's
gradient with respect to the input taken from `data.grad.data`, the image moved by
`epsilon * data_grad.sign()` after undoing the normalisation, clamped to [0, 1], normalised
again and classified; the accuracy is reported per epsilon, with a few adversarial examples.

The images are 10x10 "digits" made in the test (three classes of strokes plus noise) in
place of MNIST, served by a `DataLoader` with batch size 1 as in the tutorial; the network is
the tutorial's, narrower. Run by PyTorch and by minigrad (passed in as `torch`): the
accuracies, the predictions kept with the examples and the perturbed images must agree."""
import numpy as np

from port_runner import run_both


def lenet(torch):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, 1)
            self.conv2 = nn.Conv2d(4, 8, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(72, 16)
            self.fc2 = nn.Linear(16, 3)

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
    return Net()


def fgsm_program(torch, images, labels, pretrained_model, init=None):
    F = torch.nn.functional
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    epsilons = [0, .05, .1, .15, .2, .25, .3]
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(42)

    model = lenet(torch).to(device)
    model.load_state_dict(torch.load(pretrained_model, map_location=device, weights_only=True))
    model.eval()

    test_loader = DataLoader(TensorDataset(torch.from_numpy(images), torch.from_numpy(labels)),
                             batch_size=1, shuffle=False)

    # FGSM attack code
    def fgsm_attack(image, epsilon, data_grad):
        # Collect the element-wise sign of the data gradient
        sign_data_grad = data_grad.sign()
        perturbed_image = image + epsilon * sign_data_grad
        # Adding clipping to maintain [0,1] range
        perturbed_image = torch.clamp(perturbed_image, 0, 1)
        return perturbed_image

    # restores the tensors to their original scale
    def denorm(batch, mean=[0.1307], std=[0.3081]):
        if isinstance(mean, list):
            mean = torch.tensor(mean).to(device)
        if isinstance(std, list):
            std = torch.tensor(std).to(device)
        return batch * std.view(1, -1, 1, 1) + mean.view(1, -1, 1, 1)

    def normalize(batch, mean=0.1307, std=0.3081):  # transforms.Normalize((0.1307,), (0.3081,))
        return (batch - mean) / std

    def test(model, device, test_loader, epsilon):
        correct = 0
        adv_examples = []
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            # Set requires_grad attribute of tensor. Important for Attack
            data.requires_grad = True
            output = model(data)
            init_pred = output.max(1, keepdim=True)[1]  # index of the max log-probability
            # If the initial prediction is wrong, don't bother attacking, just move on
            if init_pred.item() != target.item():
                continue
            loss = F.nll_loss(output, target)
            model.zero_grad()
            loss.backward()
            data_grad = data.grad.data
            data_denorm = denorm(data)
            perturbed_data = fgsm_attack(data_denorm, epsilon, data_grad)
            perturbed_data_normalized = normalize(perturbed_data)
            output = model(perturbed_data_normalized)
            final_pred = output.max(1, keepdim=True)[1]
            if final_pred.item() == target.item():
                correct += 1
                # Special case for saving 0 epsilon examples
                if epsilon == 0 and len(adv_examples) < 5:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
            else:
                # Save some adv examples for visualization later
                if len(adv_examples) < 5:
                    adv_ex = perturbed_data.squeeze().detach().cpu().numpy()
                    adv_examples.append((init_pred.item(), final_pred.item(), adv_ex))
        final_acc = correct / float(len(test_loader))
        return final_acc, adv_examples

    accuracies = []
    examples = []
    for eps in epsilons:
        acc, ex = test(model, device, test_loader, eps)
        accuracies.append(acc)
        examples.append(ex)
    return {"init": None, "accuracies": accuracies, "examples": examples,
            "training": model.training}


def make_digits(rng, n):
    """10x10 images of three stroke classes (a bar across, a bar down, a diagonal) with noise,
    normalised as MNIST is."""
    labels = rng.integers(0, 3, n)
    images = rng.uniform(0, 0.3, (n, 1, 10, 10))
    for img, c in zip(images, labels):
        at = rng.integers(3, 7)
        if c == 0:
            img[0, at, 1:9] = 1
        elif c == 1:
            img[0, 1:9, at] = 1
        else:
            img[0, np.arange(1, 9), np.arange(1, 9)] = 1
    images = ((images - 0.1307) / 0.3081).astype(np.float32)
    return images, labels


def pretrain(torch, path, rng):
    """The tutorial downloads weights trained by pytorch/examples' MNIST script: here a short
    training run of PyTorch, saved as that script saves them."""
    torch.manual_seed(0)
    model = lenet(torch)
    images, labels = make_digits(rng, 96)
    x, y = torch.from_numpy(images), torch.from_numpy(labels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(40):
        optimizer.zero_grad()
        torch.nn.functional.nll_loss(model(x), y).backward()
        optimizer.step()
    torch.save(model.state_dict(), path)


def test_fgsm_tutorial(torch, tmp_path):
    rng = np.random.default_rng(0)
    path = str(tmp_path / "lenet_digits_model.pth")
    pretrain(torch, path, rng)
    images, labels = make_digits(rng, 30)
    expected, got = run_both(fgsm_program, torch, images, labels, path)
    assert expected["training"] is got["training"] is False
    assert got["accuracies"] == expected["accuracies"]
    assert expected["accuracies"][0] > 0.8  # the network was trained
    assert expected["accuracies"][-1] < expected["accuracies"][0]  # and the attack works
    for want_eps, got_eps in zip(expected["examples"], got["examples"]):
        assert [e[:2] for e in got_eps] == [e[:2] for e in want_eps]
        for (_, _, want), (_, _, have) in zip(want_eps, got_eps):
            assert have.shape == want.shape == (10, 10)
            np.testing.assert_allclose(have, want, rtol=1e-6, atol=1e-6)
