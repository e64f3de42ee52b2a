"""Port test: stopping a training run and resuming it from a checkpoint file, in ordinary
PyTorch style: a module with registered buffers (running statistics updated in place under
`no_grad`, a step counter, a non-persistent cache) and settings saved by `get_extra_state`,
next to `BatchNorm1d` and a head whose weight is replaced by a new `nn.Parameter`; AdamW with
AMSGrad and a StepLR schedule; `torch.save` of the model's, optimizer's and scheduler's state dicts to a
file and `torch.load(map_location=..., weights_only=True)` into freshly built objects. Run by
PyTorch and by minigrad (passed in as `torch`) from the same weights: the resumed run must
continue bit for bit as the uninterrupted one does, and both libraries must agree."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def resume_program(torch, X, Y, ckpt_dir, init=None, epochs=6, stop_after=3, batch_size=16):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)

    class RunningStandardize(nn.Module):
        """Standardises features with statistics tracked over the batches seen in training."""

        def __init__(self, n_features, momentum=0.1, eps=1e-5):
            super().__init__()
            self.momentum, self.eps = momentum, eps
            self.register_buffer("running_mean", torch.zeros(n_features))
            self.register_buffer("running_var", torch.ones(n_features))
            self.register_buffer("batches_seen", torch.tensor(0, dtype=torch.long))
            # derived from the running statistics: rebuilt after loading, never saved
            self.register_buffer("inv_std", torch.ones(n_features), persistent=False)

        def get_extra_state(self):  # the settings travel with the checkpoint
            return {"momentum": self.momentum, "eps": self.eps}

        def set_extra_state(self, state):
            self.momentum, self.eps = state["momentum"], state["eps"]

        def forward(self, x):
            if self.training:
                with torch.no_grad():
                    m = self.momentum
                    self.running_mean.mul_(1 - m).add_(x.mean(0), alpha=m)
                    self.running_var.mul_(1 - m).add_(x.var(0, unbiased=True), alpha=m)
                    self.inv_std.copy_((self.running_var + self.eps).rsqrt())
                    self.batches_seen += 1
            return (x - self.running_mean) * self.inv_std

        def extra_repr(self):
            return f"{self.running_mean.shape[0]}, momentum={self.momentum}"

    class Regressor(nn.Module):
        def __init__(self, n_in, hidden=24, momentum=0.1):
            super().__init__()
            self.norm = RunningStandardize(n_in, momentum)
            self.body = nn.Sequential(nn.Linear(n_in, hidden, bias=False),
                                      nn.BatchNorm1d(hidden), nn.GELU(),
                                      nn.Linear(hidden, hidden), nn.Tanh())
            self.head = nn.Linear(hidden, 1)
            # a small first output: the head's weight replaced by a parameter of its own
            self.head.weight = nn.Parameter(torch.full((1, hidden), 0.01))

        def forward(self, x):
            return self.head(self.body(self.norm(x))).squeeze(-1)

    def build(momentum=0.1):
        model = Regressor(X.shape[1], momentum=momentum)
        optimizer = torch.optim.AdamW(model.parameters(), lr=2e-2, betas=(0.9, 0.98),
                                      weight_decay=0.05, amsgrad=True)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.7)
        return model, optimizer, scheduler

    x_all, y_all = torch.from_numpy(X), torch.from_numpy(Y)
    n_batches = len(X) // batch_size

    def train_epoch(model, optimizer, scheduler):
        model.train()
        losses = []
        for b in range(n_batches):
            x = x_all[b * batch_size:(b + 1) * batch_size]
            y = y_all[b * batch_size:(b + 1) * batch_size]
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            scheduler.step()
            losses.append(loss.item())
        return losses

    def evaluate(model):
        model.eval()
        with torch.no_grad():
            return F.mse_loss(model(x_all), y_all).item()

    model, optimizer, scheduler = build()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                               for k, v in init.items()})
    start = state_numpy(model)

    # the uninterrupted run, which saves a checkpoint after `stop_after` epochs
    path = f"{ckpt_dir}/{torch.__name__}.pt"
    straight, evals = [], []
    for epoch in range(epochs):
        straight += train_epoch(model, optimizer, scheduler)
        evals.append(evaluate(model))
        if epoch + 1 == stop_after:
            torch.save({"epoch": epoch, "model": model.state_dict(),
                        "optimizer": optimizer.state_dict(),
                        "scheduler": scheduler.state_dict()}, path)
    final = state_numpy(model)

    # a new process would do this: build everything afresh and load the checkpoint
    model, optimizer, scheduler = build(momentum=0.5)  # the checkpoint restores 0.1
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    scheduler.load_state_dict(checkpoint["scheduler"])
    with torch.no_grad():  # the non-persistent buffer is rebuilt from what was saved
        model.norm.inv_std.copy_((model.norm.running_var + model.norm.eps).rsqrt())
    resumed = []
    for epoch in range(checkpoint["epoch"] + 1, epochs):
        resumed += train_epoch(model, optimizer, scheduler)

    opt_state = optimizer.state_dict()
    first = opt_state["state"][0]
    return {"init": start, "losses": straight, "evals": evals, "final": final,
            "resumed": resumed, "resumed_final": state_numpy(model),
            "keys": list(checkpoint["model"].keys()),
            "params": [name for name, _ in model.named_parameters()],
            "extra": checkpoint["model"]["norm._extra_state"],
            "opt_keys": sorted(first.keys()), "step": float(first["step"]),
            "lr": opt_state["param_groups"][0]["lr"], "last_lr": scheduler.get_last_lr(),
            "batches_seen": int(model.norm.batches_seen),
            "bn_batches": int(model.body[1].num_batches_tracked),
            "repr": repr(model.norm)}


def test_resumed_run_continues_bit_for_bit_and_matches_pytorch(torch, tmp_path):
    rng = np.random.default_rng(0)
    X = (rng.standard_normal((96, 6)) * [1, 2, 3, 0.5, 4, 1] + [0, 1, -2, 3, 0, 5]).astype(np.float32)
    Y = np.tanh(X[:, 0] - 0.3 * X[:, 2]) + 0.1 * X[:, 4]
    Y = Y.astype(np.float32)
    expected, got = run_both(resume_program, torch, X, Y, str(tmp_path))
    assert_curves_match("resume", expected["losses"], got["losses"], rtol=1e-4, every=6)
    np.testing.assert_allclose(got["evals"], expected["evals"], rtol=1e-4)
    for run in (expected, got):
        tail = run["losses"][len(run["losses"]) - len(run["resumed"]):]
        assert run["resumed"] == tail, "the resumed run left the uninterrupted one's path"
        for k, v in run["final"].items():
            assert np.array_equal(run["resumed_final"][k], v) if k != "norm._extra_state" \
                else run["resumed_final"][k] == v, k
    assert got["keys"] == expected["keys"]  # in PyTorch's order; no non-persistent buffer
    assert "norm.inv_std" not in got["keys"]
    for k in ("opt_keys", "step", "lr", "last_lr", "batches_seen", "bn_batches", "repr",
              "params", "extra"):
        assert got[k] == expected[k] or np.allclose(got[k], expected[k]), (k, got[k], expected[k])
    for k, v in expected["final"].items():
        if k.endswith("_extra_state"):
            assert got["final"][k] == v
            continue
        assert got["final"][k].dtype == v.dtype, k
        np.testing.assert_allclose(got["final"][k], v, rtol=2e-3, atol=2e-4, err_msg=k)
