"""Port test: a convolutional denoising autoencoder in the style of blog tutorials: noisy inputs
made by `x + noise_factor * torch.randn_like(x)` and `torch.clamp(noisy, 0., 1.)`, an encoder of
strided `Conv2d`s and a decoder of `ConvTranspose2d(..., output_padding=1)` ending in `Sigmoid`,
`MSELoss`, Adam with weight decay; gradient accumulation over micro-batches (`loss /
accumulation_steps`) through the mixed-precision boilerplate that is switched on only on a GPU
(`torch.amp.GradScaler("cuda", enabled=use_amp)`, `torch.autocast(device_type=...,
enabled=use_amp)`, `scaler.scale(loss).backward()`, `scaler.unscale_`, `clip_grad_norm_`,
`scaler.step`, `scaler.update`, `zero_grad(set_to_none=True)`); `ReduceLROnPlateau` on the
validation loss; the widely copied `EarlyStopping` class that saves the best weights with
`torch.save(model.state_dict(), path)` and stops after `patience` epochs without improvement
(here after a few epochs: the model is stopped on its first plateau, where it draws the dark
ground); the best weights loaded back with `torch.load` and scored by PSNR (`10 *
torch.log10(1 / mse)`). Run by PyTorch and by minigrad (passed in as `torch`) from the same
weights.

`randn_like` draws from each library's own stream: the strict comparison gives the program its
noise from NumPy, and the run with `randn_like` is checked for repeating itself under the same
seed and for learning as much as PyTorch's."""
import numpy as np

import minigrad
from port_runner import assert_curves_match, run_both, state_numpy


def denoising_program(torch, X, X_val, orders, ckpt_path, init=None, noise=None, val_noise=None,
                      noise_factor=0.3, micro_batch=8, accumulation_steps=2, patience=2,
                      lr=2e-2):
    nn = torch.nn
    data = torch.utils.data
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_amp = device.type == "cuda"
    torch.manual_seed(0)

    class EarlyStopping:
        """Early stops the training if validation loss doesn't improve after a given patience."""

        def __init__(self, patience=7, verbose=False, delta=0, path="checkpoint.pt",
                     trace_func=print):
            self.patience = patience
            self.verbose = verbose
            self.counter = 0
            self.best_score = None
            self.early_stop = False
            self.val_loss_min = np.inf
            self.delta = delta
            self.path = path
            self.trace_func = trace_func

        def __call__(self, val_loss, model):
            score = -val_loss
            if self.best_score is None:
                self.best_score = score
                self.save_checkpoint(val_loss, model)
            elif score < self.best_score + self.delta:
                self.counter += 1
                if self.verbose:
                    self.trace_func(f"EarlyStopping counter: {self.counter} out of "
                                    f"{self.patience}")
                if self.counter >= self.patience:
                    self.early_stop = True
            else:
                self.best_score = score
                self.save_checkpoint(val_loss, model)
                self.counter = 0

        def save_checkpoint(self, val_loss, model):
            if self.verbose:
                self.trace_func(f"Validation loss decreased ({self.val_loss_min:.6f} --> "
                                f"{val_loss:.6f}).  Saving model ...")
            torch.save(model.state_dict(), self.path)
            self.val_loss_min = val_loss

    class ConvDenoiser(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = nn.Sequential(
                nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(True),    # 8 x 4 x 4
                nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(True))   # 16 x 2 x 2
            self.decoder = nn.Sequential(
                nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1),
                nn.ReLU(True),
                nn.ConvTranspose2d(8, 1, 3, stride=2, padding=1, output_padding=1),
                nn.Sigmoid())

        def forward(self, x):
            return self.decoder(self.encoder(x))

    model = ConvDenoiser().to(device)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)

    def add_noise(x, given):
        if given is None:
            noisy = x + noise_factor * torch.randn_like(x)
        else:  # the strict comparison's noise, from NumPy
            noisy = x + noise_factor * torch.from_numpy(given)
        return torch.clamp(noisy, 0., 1.)

    train_set = data.TensorDataset(torch.from_numpy(X))
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=1e-5)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="min", factor=0.5,
                                                           patience=1)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    messages = []
    early_stopping = EarlyStopping(patience=patience, verbose=True, path=ckpt_path,
                                   trace_func=messages.append)
    x_val = torch.from_numpy(X_val).to(device)
    noisy_val = add_noise(x_val, val_noise)

    losses, val_losses, grad_norms, lrs = [], [], [], []
    step = 0
    for epoch, order in enumerate(orders):
        model.train()
        optimizer.zero_grad(set_to_none=True)
        loader = data.DataLoader(train_set, batch_size=micro_batch, sampler=order.tolist())
        for i, (images,) in enumerate(loader):
            images = images.to(device)
            noisy_imgs = add_noise(images, None if noise is None else noise[step])
            step += 1
            with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
                outputs = model(noisy_imgs)
                loss = criterion(outputs, images)
                loss = loss / accumulation_steps
            scaler.scale(loss).backward()
            losses.append(loss.item() * accumulation_steps)
            if (i + 1) % accumulation_steps == 0:
                scaler.unscale_(optimizer)
                grad_norms.append(float(nn.utils.clip_grad_norm_(model.parameters(), 1.0)))
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
        model.eval()
        with torch.no_grad():
            val_loss = criterion(model(noisy_val), x_val).item()
        val_losses.append(val_loss)
        scheduler.step(val_loss)
        lrs.append(optimizer.param_groups[0]["lr"])
        early_stopping(val_loss, model)
        if early_stopping.early_stop:
            messages.append(f"Early stopping at epoch {epoch}")
            break

    model.load_state_dict(torch.load(ckpt_path))
    model.eval()
    with torch.no_grad():
        denoised = model(noisy_val)
        mse = torch.mean((denoised - x_val) ** 2)
        psnr = 10 * torch.log10(1 / mse)
        noisy_psnr = 10 * torch.log10(1 / torch.mean((noisy_val - x_val) ** 2))
    return {"init": start, "losses": losses, "val_losses": val_losses, "grad_norms": grad_norms,
            "lrs": lrs, "messages": messages, "best": early_stopping.val_loss_min,
            "psnr": psnr.item(), "noisy_psnr": noisy_psnr.item(),
            "denoised": denoised.numpy(), "final": state_numpy(model)}


def strokes(n, seed):
    """1x8x8 images in [0, 1]: a bright horizontal or vertical stroke on a dark ground."""
    rng = np.random.default_rng(seed)
    X = np.zeros((n, 1, 8, 8), np.float32)
    for img in X[:, 0]:
        k = rng.integers(1, 7)
        if rng.random() < 0.5:
            img[k, 1:7] = 1.0
        else:
            img[1:7, k] = 1.0
    return X


def _data(epochs, n=48, n_val=16, micro_batch=8):
    X, X_val = strokes(n, 0), strokes(n_val, 1)
    rng = np.random.default_rng(2)
    orders = [rng.permutation(n) for _ in range(epochs)]
    noise = rng.standard_normal((epochs * n // micro_batch, micro_batch, 1, 8, 8))
    val_noise = rng.standard_normal(X_val.shape)
    return X, X_val, orders, noise.astype(np.float32), val_noise.astype(np.float32)


def test_denoising_autoencoder_trains_the_same_in_both(torch, tmp_path):
    X, X_val, orders, noise, val_noise = _data(8)
    expected, got = run_both(denoising_program, torch, X, X_val, orders, str(tmp_path / "c.pt"),
                             noise=noise, val_noise=val_noise)
    # the runs agree to float32 rounding (the losses within 1e-7 here); Adam can move a
    # weight whose gradient is about zero by each library's rounding, hence 1e-5
    assert_curves_match("denoising", expected["losses"], got["losses"], rtol=1e-5, every=3)
    assert_curves_match("val", expected["val_losses"], got["val_losses"], rtol=1e-5)
    np.testing.assert_allclose(got["grad_norms"], expected["grad_norms"], rtol=1e-5)
    assert got["lrs"] == expected["lrs"]
    # the same epochs improved and the same epoch stopped the run
    assert [m.split(" (")[0] for m in got["messages"]] == \
        [m.split(" (")[0] for m in expected["messages"]]
    np.testing.assert_allclose(got["best"], expected["best"], rtol=1e-4)
    np.testing.assert_allclose(got["psnr"], expected["psnr"], rtol=1e-4)
    np.testing.assert_allclose(got["denoised"], expected["denoised"], atol=1e-4)
    assert expected["best"] < expected["val_losses"][0]  # it learns
    assert min(expected["val_losses"]) == expected["best"]  # the best epoch was reloaded
    assert expected["messages"][-1].startswith("Early stopping at epoch")
    assert len(expected["val_losses"]) < len(orders)


def test_denoising_with_randn_like_repeats_and_learns(torch, tmp_path):
    X, X_val, orders, _, val_noise = _data(6)
    expected, got = run_both(denoising_program, torch, X, X_val, orders, str(tmp_path / "c.pt"),
                             val_noise=val_noise)
    again = denoising_program(minigrad, X, X_val, orders, str(tmp_path / "c.pt"),
                              init=expected["init"], val_noise=val_noise)
    assert got["losses"] == again["losses"]
    assert got["losses"] != expected["losses"]  # each library's own noise
    for run in (expected, got):
        assert run["best"] < run["val_losses"][0]
    assert abs(got["best"] - expected["best"]) < 0.1 * expected["best"]
