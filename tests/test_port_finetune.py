"""Port test: transfer learning as PyTorch's fine-tuning tutorials write it: a small conv net
pretrained on a source task and saved by `torch.save`; a new run that loads it, freezes every
parameter (`param.requires_grad = False`), replaces the head (`model.fc = nn.Linear(num_ftrs,
n)`), collects `params_to_update` from `named_parameters()` where `requires_grad`, and trains
the head with SGD + momentum under `StepLR` in the tutorial's train/val phases
(`torch.set_grad_enabled(phase == "train")`, `running_corrects.double()`, best weights kept by
`copy.deepcopy(model.state_dict())` and loaded back); then fine-tunes the last block
(`requires_grad_(True)`, `optimizer.add_param_group` with a smaller lr) with the batch norms
kept in eval mode by `model.apply(set_bn_eval)` and `clip_grad_norm_` over the trainable
parameters. Loading the pretrained dict into a model with another head fails with a size
mismatch even with `strict=False`; the shape-filtered dict loads and reports the head's keys as
missing. Run by PyTorch and by minigrad (passed in as `torch`) from the same weights."""
import copy

import numpy as np

import minigrad
from port_runner import assert_curves_match, run_both, state_numpy


def finetune_program(torch, source, target, orders, tmp_dir, init=None, batch_size=16):
    nn = torch.nn
    F = torch.nn.functional
    data = torch.utils.data
    torch.manual_seed(0)

    class SmallNet(nn.Module):
        def __init__(self, num_classes):
            super().__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False),
                                        nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                        nn.MaxPool2d(2))
            self.layer2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1, bias=False),
                                        nn.BatchNorm2d(16), nn.ReLU(inplace=True))
            self.avgpool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(16, num_classes)

        def forward(self, x):
            x = self.layer2(self.layer1(x))
            return self.fc(torch.flatten(self.avgpool(x), 1))

    # --- pretraining on the source task ---------------------------------------------------
    Xs, Ys = source
    model = SmallNet(num_classes=5)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init["source"].items()})
    start = {"source": state_numpy(model)}
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    pretrain_losses = []
    model.train()
    for xb, yb in data.DataLoader(data.TensorDataset(torch.from_numpy(Xs), torch.from_numpy(Ys)),
                                  batch_size=batch_size):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(xb), yb)
        loss.backward()
        optimizer.step()
        pretrain_losses.append(loss.item())
    pretrained_path = f"{tmp_dir}/pretrained.pt"
    torch.save(model.state_dict(), pretrained_path)

    # --- a new script: the pretrained weights under a new head ----------------------------
    pretrained = torch.load(pretrained_path)
    n_classes = int(target[1].max()) + 1
    other = SmallNet(num_classes=n_classes)
    try:
        other.load_state_dict(pretrained, strict=False)
        size_mismatch = None
    except RuntimeError as e:
        size_mismatch = "size mismatch for fc.weight" in str(e)
    model_dict = other.state_dict()
    filtered = {k: v for k, v in pretrained.items()
                if k in model_dict and v.shape == model_dict[k].shape}
    incompatible = other.load_state_dict(filtered, strict=False)
    keys = (sorted(incompatible.missing_keys), sorted(incompatible.unexpected_keys))

    model_ft = SmallNet(num_classes=5)
    model_ft.load_state_dict(pretrained)
    for param in model_ft.parameters():
        param.requires_grad = False
    num_ftrs = model_ft.fc.in_features
    model_ft.fc = nn.Linear(num_ftrs, n_classes)
    if init is not None:
        model_ft.fc.load_state_dict({k: torch.from_numpy(v) for k, v in init["head"].items()})
    start["head"] = state_numpy(model_ft.fc)

    params_to_update, names_to_update = [], []
    for name, param in model_ft.named_parameters():
        if param.requires_grad:
            params_to_update.append(param)
            names_to_update.append(name)

    Xt, Yt = target
    n_train = len(orders[0])
    full = data.TensorDataset(torch.from_numpy(Xt), torch.from_numpy(Yt))
    image_datasets = {"train": data.Subset(full, range(n_train)),
                      "val": data.Subset(full, range(n_train, len(Yt)))}
    dataset_sizes = {x: len(image_datasets[x]) for x in ["train", "val"]}
    criterion = nn.CrossEntropyLoss()
    optimizer_ft = torch.optim.SGD(params_to_update, lr=0.05, momentum=0.9)
    exp_lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer_ft, step_size=2, gamma=0.5)

    def set_bn_eval(m):
        if isinstance(m, nn.BatchNorm2d):
            m.eval()

    log = {"losses": [], "epoch_loss": [], "epoch_acc": [], "grad_norms": [], "lrs": []}

    def train_model(model, optimizer, scheduler, epoch_orders, freeze_bn=False, clip=None):
        best_model_wts = copy.deepcopy(model.state_dict())
        best_acc = 0.0
        for order in epoch_orders:
            for phase in ["train", "val"]:
                if phase == "train":
                    model.train()
                    if freeze_bn:
                        model.apply(set_bn_eval)
                    loader = data.DataLoader(image_datasets[phase], batch_size=batch_size,
                                             sampler=order.tolist())
                else:
                    model.eval()
                    loader = data.DataLoader(image_datasets[phase], batch_size=batch_size)
                running_loss, running_corrects = 0.0, 0
                for inputs, labels in loader:
                    optimizer.zero_grad()
                    with torch.set_grad_enabled(phase == "train"):
                        outputs = model(inputs)
                        _, preds = torch.max(outputs, 1)
                        loss = criterion(outputs, labels)
                        if phase == "train":
                            loss.backward()
                            if clip is not None:
                                norm = nn.utils.clip_grad_norm_(
                                    [p for p in model.parameters() if p.requires_grad], clip)
                                log["grad_norms"].append(norm.item())
                            optimizer.step()
                            log["losses"].append(loss.item())
                    running_loss += loss.item() * inputs.size(0)
                    running_corrects += torch.sum(preds == labels.data)
                if phase == "train":
                    scheduler.step()
                    log["lrs"].append([g["lr"] for g in optimizer.param_groups])
                epoch_loss = running_loss / dataset_sizes[phase]
                epoch_acc = running_corrects.double() / dataset_sizes[phase]
                log["epoch_loss"].append(epoch_loss)
                log["epoch_acc"].append(epoch_acc.item())
                assert epoch_acc.dtype == torch.float64
                if phase == "val" and epoch_acc > best_acc:
                    best_acc = epoch_acc
                    best_model_wts = copy.deepcopy(model.state_dict())
        model.load_state_dict(best_model_wts)
        return model, best_acc.item() if hasattr(best_acc, "item") else best_acc

    model_ft, best_head_acc = train_model(model_ft, optimizer_ft, exp_lr_scheduler, orders[:3])
    frozen_untouched = all(p.grad is None for p in model_ft.layer1.parameters())

    # --- fine-tuning the last block at a smaller learning rate ----------------------------
    model_ft.layer2.requires_grad_(True)
    optimizer_ft.add_param_group({"params": model_ft.layer2.parameters(), "lr": 0.01})
    n_trainable = sum(p.numel() for p in model_ft.parameters() if p.requires_grad)
    model_ft, best_acc = train_model(model_ft, optimizer_ft, exp_lr_scheduler, orders[3:],
                                     freeze_bn=True, clip=1.0)
    return {"init": start, "pretrain_losses": pretrain_losses, "size_mismatch": size_mismatch,
            "keys": keys, "names_to_update": names_to_update, "n_trainable": n_trainable,
            "frozen_untouched": frozen_untouched, "best": (best_head_acc, best_acc),
            "final": state_numpy(model_ft), **log}


def patches(n, n_classes, seed):
    """3x8x8 images: a patch of colour mix `class` at a random place, on noise."""
    rng = np.random.default_rng(seed)
    mixes = np.random.default_rng(5).uniform(-1, 1, (n_classes, 3))
    Y = rng.integers(0, n_classes, n)
    X = rng.normal(0, 0.5, (n, 3, 8, 8)).astype(np.float32)
    for img, y in zip(X, Y):
        r, c = rng.integers(0, 5, 2)
        img[:, r:r + 4, c:c + 4] += 2 * mixes[y][:, None, None]
    return X, Y


def test_finetuning_trains_the_same_in_both(torch, tmp_path):
    source = patches(64, 5, 0)
    target = patches(80, 3, 1)
    rng = np.random.default_rng(2)
    orders = [rng.permutation(48) for _ in range(5)]
    # each run writes its pretrained file, then reads it back (minigrad's overwrites PyTorch's)
    expected, got = run_both(finetune_program, torch, source, target, orders, str(tmp_path))
    # SGD (and four Adam steps) move every weight by its gradient: float32 rounding apart
    for curve in ("pretrain_losses", "losses", "epoch_loss", "grad_norms"):
        assert_curves_match(curve, expected[curve], got[curve], rtol=1e-5)
    np.testing.assert_allclose(got["epoch_acc"], expected["epoch_acc"])
    assert len(got["lrs"]) == len(expected["lrs"])  # one group, then two
    for have, want in zip(got["lrs"], expected["lrs"]):
        np.testing.assert_allclose(have, want, rtol=1e-12)
    assert got["lrs"][-1] == [0.05 * 0.5 ** 2, 0.01 * 0.5]  # the added group decays too
    for key in ("size_mismatch", "keys", "names_to_update", "n_trainable", "frozen_untouched",
                "best"):
        assert got[key] == expected[key], key
    assert expected["size_mismatch"] is True
    assert expected["keys"] == (["fc.bias", "fc.weight"], [])
    assert expected["names_to_update"] == ["fc.weight", "fc.bias"]
    assert expected["frozen_untouched"] is True
    for key, want in expected["final"].items():
        np.testing.assert_allclose(got["final"][key], want, rtol=1e-4, atol=1e-5, err_msg=key)


def test_a_size_mismatch_is_named_as_in_pytorch(torch):
    """Loading a head of another size fails with or without strict=False, in both libraries,
    with PyTorch's 'size mismatch for <key>' for each wrong key (scripts look for it), and
    nothing is loaded."""
    for strict in (True, False):
        messages = []
        for lib in (torch, minigrad):
            lib.manual_seed(0)
            five, two = lib.nn.Linear(3, 5), lib.nn.Linear(3, 2)
            before = two.weight.detach().numpy().copy()
            try:
                two.load_state_dict(five.state_dict(), strict=strict)
            except RuntimeError as e:
                messages.append(str(e))
            np.testing.assert_array_equal(two.weight.detach().numpy(), before)
        assert len(messages) == 2
        for message in messages:
            assert "size mismatch for weight: copying a param with shape" in message
            assert "size mismatch for bias" in message
            assert "from checkpoint, the shape in current model is" in message
