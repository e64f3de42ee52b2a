"""Port test: PyTorch's recipes on state and hooks, as ordinary PyTorch code run by PyTorch and
by minigrad (passed in as `torch`) from the same weights.

- Warm-starting a model from another's parameters: a saved state dict loaded into a model of
  another shape with `load_state_dict(strict=False)` (its missing and unexpected keys), keys
  renamed by hand to load one layer into another, and the error for a shape that differs.
- Saving and loading several models and optimizers in one file, and resuming both trainings.
- Zeroing gradients: `optimizer.zero_grad()` (gradients set to None), `zero_grad(set_to_none=
  False)` (zeros kept), `model.zero_grad()`.
- Hooks: a forward pre-hook that rescales the input, forward hooks that keep activations for
  feature extraction, a forward hook with keyword arguments; the optimizer's step pre- and
  post-hooks, its state-dict and load-state-dict hooks, and the global step hooks; every hook
  removed by its handle.

Each run logs what it sees; the logs, losses and final weights must agree."""
import importlib
import io
import math

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def lenet(torch, last="fc3"):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 3)
            self.fc1 = nn.Linear(16 * 2 * 2, 32)
            self.fc2 = nn.Linear(32, 16)
            setattr(self, last, nn.Linear(16, 10))
            self.last = last

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            x = x.view(-1, 16 * 2 * 2)
            x = F.relu(self.fc1(x))
            x = F.relu(self.fc2(x))
            return getattr(self, self.last)(x)
    return Net()


def load(torch, model, state):
    if state is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    return state_numpy(model)


def warmstart_program(torch, X, Y, path, init=None):
    torch.manual_seed(0)
    netA, netB = lenet(torch), lenet(torch, last="classifier")
    start = {"A": load(torch, netA, init and init["A"]),
             "B": load(torch, netB, init and init["B"])}
    log = {}
    torch.save(netA.state_dict(), path)
    result = netB.load_state_dict(torch.load(path, weights_only=True), strict=False)
    log["missing"], log["unexpected"] = result.missing_keys, result.unexpected_keys
    missing, unexpected = result  # it is a named tuple
    log["tuple"] = (missing == result.missing_keys, unexpected == result.unexpected_keys)
    log["copied"] = bool(torch.equal(netB.fc2.weight, netA.fc2.weight))
    log["kept"] = bool(torch.equal(netB.classifier.weight,
                                   torch.from_numpy(start["B"]["classifier.weight"])))
    # rename the keys to load the last layer too
    state = torch.load(path, weights_only=True)
    state = {k.replace("fc3", "classifier"): v for k, v in state.items()}
    log["all"] = repr(netB.load_state_dict(state))
    # a layer of another shape is an error, strict or not
    netC = lenet(torch)
    netC.fc3 = torch.nn.Linear(16, 4)
    try:
        netC.load_state_dict(torch.load(path, weights_only=True), strict=False)
    except RuntimeError as e:
        log["error"] = [f"size mismatch for {k}" in str(e) for k in ("fc3.weight", "fc3.bias")]
    x = torch.from_numpy(X)
    log["out"] = netB(x).detach().numpy()
    return {"init": start, "log": log}


def several_models_program(torch, X, Y, path, init=None, steps=3):
    nn, optim = torch.nn, torch.optim
    torch.manual_seed(0)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)

    def build():
        modelA, modelB = lenet(torch), lenet(torch, last="head")
        optimizerA = optim.SGD(modelA.parameters(), lr=0.01, momentum=0.9)
        optimizerB = optim.Adam(modelB.parameters(), lr=1e-3)
        return modelA, modelB, optimizerA, optimizerB

    modelA, modelB, optimizerA, optimizerB = build()
    start = {"A": load(torch, modelA, init and init["A"]),
             "B": load(torch, modelB, init and init["B"])}
    criterion = nn.CrossEntropyLoss()

    def train(models, optimizers):
        losses = []
        for _ in range(steps):
            for model, optimizer in zip(models, optimizers):
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                losses.append(loss.item())
        return losses

    losses = train((modelA, modelB), (optimizerA, optimizerB))
    torch.save({
        "modelA_state_dict": modelA.state_dict(),
        "modelB_state_dict": modelB.state_dict(),
        "optimizerA_state_dict": optimizerA.state_dict(),
        "optimizerB_state_dict": optimizerB.state_dict(),
    }, path)
    straight = train((modelA, modelB), (optimizerA, optimizerB))

    modelA, modelB, optimizerA, optimizerB = build()
    checkpoint = torch.load(path, weights_only=True)
    modelA.load_state_dict(checkpoint["modelA_state_dict"])
    modelB.load_state_dict(checkpoint["modelB_state_dict"])
    optimizerA.load_state_dict(checkpoint["optimizerA_state_dict"])
    optimizerB.load_state_dict(checkpoint["optimizerB_state_dict"])
    modelA.train()
    modelB.train()
    resumed = train((modelA, modelB), (optimizerA, optimizerB))
    return {"init": start, "losses": losses, "straight": straight, "resumed": resumed,
            "keys": sorted(checkpoint), "A": state_numpy(modelA), "B": state_numpy(modelB),
            "momentum_keys": sorted(checkpoint["optimizerA_state_dict"]["state"][0])}


def zero_grad_and_hooks_program(torch, X, Y, init=None, steps=3):
    nn, optim = torch.nn, torch.optim
    torch.manual_seed(0)
    net = lenet(torch)
    start = load(torch, net, init)
    x, y = torch.from_numpy(X), torch.from_numpy(Y)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    log = []

    # forward hooks
    def scale_input(module, args):
        return (args[0] * 0.5,)  # a pre-hook's result replaces the positional arguments

    features = {}

    def get_features(name):
        def hook(model, input, output):
            features[name] = output.detach()
        return hook

    def with_kwargs(module, args, kwargs, output):
        log.append(("kwargs hook", sorted(kwargs), tuple(output.shape)))

    handles = [net.conv1.register_forward_pre_hook(scale_input),
               net.fc1.register_forward_hook(get_features("fc1")),
               net.fc2.register_forward_hook(get_features("fc2")),
               net.register_forward_hook(with_kwargs, with_kwargs=True)]

    # optimizer hooks
    def step_pre(opt, args, kwargs):
        log.append(("pre", opt.param_groups[0]["lr"], len(opt.state)))

    def step_post(opt, args, kwargs):
        grad_norm = math.sqrt(sum(float((p.grad ** 2).sum()) for p in net.parameters()))
        log.append(("post", round(grad_norm, 4)))

    def sd_pre(opt):
        log.append(("state_dict pre", len(opt.state)))

    def sd_post(opt, state_dict):
        state_dict["note"] = "saved by the recipe"
        return state_dict

    def load_pre(opt, state_dict):
        log.append(("load pre", state_dict.pop("note")))
        state_dict["param_groups"][0]["lr"] = 0.01
        return state_dict

    def load_post(opt):
        log.append(("load post", opt.param_groups[0]["lr"]))

    optimizer_module = importlib.import_module(f"{torch.__name__}.optim.optimizer")
    global_seen = []
    opt_handles = [optimizer.register_step_pre_hook(step_pre),
                   optimizer.register_step_post_hook(step_post),
                   optimizer.register_state_dict_pre_hook(sd_pre),
                   optimizer.register_state_dict_post_hook(sd_post),
                   optimizer.register_load_state_dict_pre_hook(load_pre),
                   optimizer.register_load_state_dict_post_hook(load_post),
                   optimizer_module.register_optimizer_step_pre_hook(
                       lambda opt, args, kwargs: global_seen.append(type(opt).__name__))]
    losses = []
    try:
        for step in range(steps):
            # zero the parameter gradients
            optimizer.zero_grad()
            log.append(("grads after zero_grad", [p.grad is None for p in net.parameters()]))
            outputs = net(x)
            loss = criterion(outputs, y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        optimizer.zero_grad(set_to_none=False)
        log.append(("zeros kept", [p.grad is not None and float(p.grad.abs().sum()) == 0
                                   for p in net.parameters()]))
        net(x).sum().backward()
        net.zero_grad()
        log.append(("module zero_grad", [p.grad is None for p in net.parameters()]))
        state = optimizer.state_dict()
        log.append(("note", state["note"], sorted(state)))
        buffer = io.BytesIO()
        torch.save(state, buffer)
        buffer.seek(0)
        optimizer.load_state_dict(torch.load(buffer, weights_only=True))
    finally:
        for h in handles + opt_handles:
            h.remove()
    n_logged = len(log)
    net(x)
    optimizer.step()
    log.append(("hooks removed", len(log) == n_logged, len(global_seen)))
    return {"init": start, "losses": losses, "log": log,
            "features": {k: v.numpy() for k, v in features.items()},
            "final": state_numpy(net)}


def data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3, 16, 16)).astype(np.float32)
    Y = rng.integers(0, 10, n)
    return X, Y


def test_warmstarting_from_another_model(torch, tmp_path):
    X, Y = data()
    expected, got = run_both(warmstart_program, torch, X, Y, str(tmp_path / "netA.pt"))
    want, have = expected["log"], got["log"]
    assert want["missing"] == ["classifier.weight", "classifier.bias"]
    assert want["unexpected"] == ["fc3.weight", "fc3.bias"]
    assert want["error"] == [True, True]
    for key in want:
        if key == "out":
            np.testing.assert_allclose(have[key], want[key], rtol=1e-5, atol=1e-6)
        else:
            assert have[key] == want[key], key


def test_saving_and_loading_several_models_in_one_file(torch, tmp_path):
    X, Y = data()
    expected, got = run_both(several_models_program, torch, X, Y, str(tmp_path / "ckpt.tar"))
    assert_curves_match("several models", expected["losses"] + expected["straight"],
                        got["losses"] + got["straight"], rtol=1e-5)
    assert got["resumed"] == got["straight"]  # resuming is exact within each library
    assert expected["resumed"] == expected["straight"]
    assert got["keys"] == expected["keys"]
    assert got["momentum_keys"] == expected["momentum_keys"] == ["momentum_buffer"]
    for name in ("A", "B"):
        for k, v in expected[name].items():
            np.testing.assert_allclose(got[name][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_zeroing_gradients_and_hooks(torch):
    X, Y = data()
    expected, got = run_both(zero_grad_and_hooks_program, torch, X, Y)
    assert_curves_match("zero_grad recipe", expected["losses"], got["losses"], rtol=1e-5)
    assert len(got["log"]) == len(expected["log"])
    for have, want in zip(got["log"], expected["log"]):
        if want[0] == "post":  # a gradient norm
            assert abs(have[1] - want[1]) <= 1e-3 * abs(want[1]) + 1e-4, (have, want)
        else:
            assert have == want
    assert sorted(got["features"]) == ["fc1", "fc2"]
    for k, v in expected["features"].items():
        np.testing.assert_allclose(got["features"][k], v, rtol=1e-4, atol=1e-5, err_msg=k)
    for k, v in expected["final"].items():
        np.testing.assert_allclose(got["final"][k], v, rtol=1e-4, atol=1e-5, err_msg=k)
