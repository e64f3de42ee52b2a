"""Port test: PyTorch's tutorial "Visualizing Models, Data, and Training with TensorBoard"
(a small CNN classifying generated 1x12x12 images of four classes): it logs a grid of images
with add_image, the model with add_graph, the images as an embedding with their labels and
thumbnails (add_embedding), the running loss with add_scalar while training with SGD, and a
precision-recall curve per class (add_pr_curve) from the trained model's softmax on a test
set. The same source runs under PyTorch and under minigrad (passed in as `torch`) from the
same weights; the logs are read back with tensorboard's readers and compared record by record
(the losses and curves to rounding), the projector's files byte for byte."""
import numpy as np
import pytest

pytest.importorskip("tensorboard")
from port_runner import run_both, state_numpy  # noqa: E402
from tensorboard_events import approx_equal, graph_summary, other_files, runs  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")

CLASSES = ("stripes", "bars", "dots", "blank")


def tutorial_program(torch, log_dir, X, Y, X_test, Y_test, init=None):
    nn, F = torch.nn, torch.nn.functional
    from importlib import import_module
    SummaryWriter = import_module(f"{torch.__name__}.utils.tensorboard").SummaryWriter
    torch.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.fc1 = nn.Linear(8 * 3 * 3, 24)
            self.fc2 = nn.Linear(24, len(CLASSES))

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = F.relu(self.conv2(x))
            x = torch.flatten(x, 1)
            return self.fc2(F.relu(self.fc1(x)))

    net = Net()
    if init is not None:
        net.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(net)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    writer = SummaryWriter(log_dir)

    images, labels = torch.from_numpy(X[:4]), torch.from_numpy(Y[:4]).long()
    img_grid = torch.cat(list(images), dim=2)  # the four images side by side: (1, 12, 48)
    writer.add_image("four_generated_images", img_grid)
    writer.add_graph(net, images)

    features = torch.from_numpy(X[:20]).view(-1, 12 * 12)
    class_labels = [CLASSES[int(y)] for y in Y[:20]]
    writer.add_embedding(features, metadata=class_labels,
                         label_img=torch.from_numpy(X[:20]))

    running_loss = 0.0
    for epoch in range(2):
        for i in range(0, len(X), 8):
            inputs = torch.from_numpy(X[i:i + 8])
            targets = torch.from_numpy(Y[i:i + 8]).long()
            optimizer.zero_grad()
            loss = criterion(net(inputs), targets)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            step = epoch * (len(X) // 8) + i // 8
            if step % 4 == 3:
                writer.add_scalar("training loss", running_loss / 4, step)
                running_loss = 0.0

    class_probs, class_label = [], []
    with torch.no_grad():
        for i in range(0, len(X_test), 10):
            output = net(torch.from_numpy(X_test[i:i + 10]))
            class_probs.append([F.softmax(el, dim=0) for el in output])
            class_label.append(torch.from_numpy(Y_test[i:i + 10]).long())
    test_probs = torch.cat([torch.stack(batch) for batch in class_probs])
    test_label = torch.cat(class_label)
    for class_index in range(len(CLASSES)):
        truth = test_label == class_index
        probs = test_probs[:, class_index]
        writer.add_pr_curve(CLASSES[class_index], truth, probs, global_step=0)
    writer.close()
    return {"init": start, "logs": runs(log_dir), "files": other_files(log_dir)}


def make_images(n, rng):
    """Four kinds of 12x12 images (stripes, bars, dots, blank) with noise."""
    y = rng.integers(0, len(CLASSES), n)
    x = rng.normal(0, 0.1, (n, 1, 12, 12))
    x[y == 0, :, ::3, :] += 1.0
    x[y == 1, :, :, ::3] += 1.0
    x[y == 2, :, ::4, ::4] += 1.0
    return x.clip(0, 1).astype(np.float32), y.astype(np.int64)


def comparable(logs):
    """The runs with each graph reduced to what both libraries' graphs share (the graph's
    own copy as a summary, which holds its bytes, left out)."""
    out = {}
    for run, events in logs.items():
        out[run] = [("graph_def", e[1], graph_summary(e[2])) if e[0] == "graph_def" else e
                    for e in events
                    if not (e[0] == "summary" and e[2][0]["tag"] == "__run_graph__")]
    return out


def test_tensorboard_tutorial(tmp_path, torch):
    rng = np.random.default_rng(0)
    X, Y = make_images(64, rng)
    X_test, Y_test = make_images(40, rng)
    expected, got = run_both(lambda lib, **kw: tutorial_program(
        lib, tmp_path / lib.__name__, X, Y, X_test, Y_test, **kw), torch)
    want, have = comparable(expected["logs"]), comparable(got["logs"])
    assert sorted(have) == sorted(want) == ["."]
    kinds = [(e[0], e[2][0]["plugin"] if e[0] == "summary" else None) for e in have["."]]
    assert kinds == [("file_version", None), ("summary", "images"), ("graph_def", None),
                     ("summary", "graph_tagged_run_metadata")] + [("summary", "scalars")] * 4 \
        + [("summary", "pr_curves")] * 4
    for a, b in zip(have["."], want["."]):
        assert approx_equal(a, b, rtol=2e-4), (a, b)
    assert got["files"] == expected["files"]
    assert sorted(got["files"]) == ["00000/default/metadata.tsv", "00000/default/sprite.png",
                                    "00000/default/tensors.tsv", "projector_config.pbtxt"]
    losses = [e[2][0]["value"][2] for e in have["."] if e[0] == "summary"
              and e[2][0]["plugin"] == "scalars"]
    assert losses[-1] < losses[0]  # it learned
