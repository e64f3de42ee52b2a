"""Port test: the automatic-mixed-precision recipe on the CPU, as the recipe writes it: a
`make_model` stack of linear layers, `torch.autocast(device_type=device, dtype=...,
enabled=use_amp)` around the forward pass and the loss, `torch.amp.GradScaler(device,
enabled=use_amp)` with `scaler.scale(loss).backward()`, `scaler.unscale_` before clipping,
`scaler.step`, `scaler.update`, `zero_grad(set_to_none=True)`, and the checkpoint of model,
optimizer and scaler saved and loaded to resume. Data come from NumPy in place of
`torch.randn`, and the sizes are cut down.

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights. With
`use_amp=False` the losses agree to float32 rounding. With `use_amp=True` PyTorch computes
the linear layers in bfloat16 inside autocast and minigrad in float32 (a documented
difference), so the losses agree to bfloat16's precision; the scaler's scale and state, which
the loss scaling and the overflow checks decide, agree exactly, and each library's PyTorch-
saved or own checkpoint resumes its run exactly. minigrad also loads PyTorch's checkpoint,
scaler state included."""
import warnings

import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def amp_recipe_program(torch, data, targets, ckpt_dir, init=None, use_amp=True, epochs=2):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    amp_dtype = torch.float16 if device == "cuda" else torch.bfloat16
    in_size, out_size, num_layers = data.shape[-1], targets.shape[-1], 3

    def make_model(in_size, out_size, num_layers):
        layers = []
        for _ in range(num_layers - 1):
            layers.append(torch.nn.Linear(in_size, in_size))
            layers.append(torch.nn.ReLU())
        layers.append(torch.nn.Linear(in_size, out_size))
        return torch.nn.Sequential(*tuple(layers)).to(device)

    torch.manual_seed(0)
    data = [torch.from_numpy(d) for d in data]
    targets = [torch.from_numpy(t) for t in targets]
    loss_fn = torch.nn.MSELoss().to(device)

    net = make_model(in_size, out_size, num_layers)
    if init is not None:
        net.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(net)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    scaler = torch.amp.GradScaler(device, enabled=use_amp)

    def train_epoch(net, opt, scaler):
        losses, dtypes = [], set()
        for input, target in zip(data, targets):
            with torch.autocast(device_type=device, dtype=amp_dtype, enabled=use_amp):
                output = net(input)
                loss = loss_fn(output, target)
            dtypes.add((str(output.dtype).split(".")[-1], str(loss.dtype).split(".")[-1]))
            scaler.scale(loss).backward()
            # Unscales the gradients of optimizer's assigned params in-place
            scaler.unscale_(opt)
            # Since the gradients of optimizer's assigned params are now unscaled, clips as usual.
            torch.nn.utils.clip_grad_norm_(net.parameters(), max_norm=0.5)
            scaler.step(opt)
            scaler.update()
            opt.zero_grad(set_to_none=True)
            losses.append(loss.item())
        return losses, sorted(dtypes)

    losses, dtypes = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # minigrad's note that autocast casts nothing
        for epoch in range(epochs):
            epoch_losses, epoch_dtypes = train_epoch(net, opt, scaler)
            losses += epoch_losses
            dtypes += epoch_dtypes
        checkpoint = {"model": net.state_dict(), "optimizer": opt.state_dict(),
                      "scaler": scaler.state_dict()}
        path = f"{ckpt_dir}/{torch.__name__}_amp.pt"
        torch.save(checkpoint, path)
        straight, _ = train_epoch(net, opt, scaler)

        net2 = make_model(in_size, out_size, num_layers)
        opt2 = torch.optim.SGD(net2.parameters(), lr=0.05, momentum=0.9)
        scaler2 = torch.amp.GradScaler(device, enabled=use_amp)
        checkpoint = torch.load(path, map_location=device, weights_only=True)
        net2.load_state_dict(checkpoint["model"])
        opt2.load_state_dict(checkpoint["optimizer"])
        scaler2.load_state_dict(checkpoint["scaler"])
        resumed, _ = train_epoch(net2, opt2, scaler2)
    return {"init": start, "losses": losses, "straight": straight, "resumed": resumed,
            "dtypes": dtypes, "scale": scaler.get_scale(), "scaler": scaler.state_dict(),
            "enabled": scaler.is_enabled(), "path": path, "final": state_numpy(net)}


def make_data(num_batches=6, batch_size=16, in_size=12, out_size=5, seed=0):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((num_batches, batch_size, in_size)).astype(np.float32)
    targets = rng.standard_normal((num_batches, batch_size, out_size)).astype(np.float32)
    return data, targets


def test_amp_recipe_without_amp(torch, tmp_path):
    data, targets = make_data()
    expected, got = run_both(amp_recipe_program, torch, data, targets, str(tmp_path),
                             use_amp=False)
    assert_curves_match("amp recipe, use_amp=False", expected["losses"] + expected["straight"],
                        got["losses"] + got["straight"], rtol=1e-5)
    assert got["dtypes"] == expected["dtypes"] == [("float32", "float32")] * 2
    assert got["scaler"] == expected["scaler"] == {}
    assert got["scale"] == expected["scale"] == 1.0
    for result in (expected, got):
        assert result["resumed"] == result["straight"]
    for k, v in expected["final"].items():
        np.testing.assert_allclose(got["final"][k], v, rtol=1e-4, atol=1e-6, err_msg=k)


def test_amp_recipe_with_amp_on_the_cpu(torch, tmp_path):
    import minigrad
    data, targets = make_data()
    expected, got = run_both(amp_recipe_program, torch, data, targets, str(tmp_path),
                             use_amp=True)
    assert expected["enabled"] and got["enabled"]
    # PyTorch's linear layers give bfloat16 inside autocast, minigrad's float32; the loss
    # is float32 in both (mse_loss autocasts to float32)
    assert expected["dtypes"] == [("bfloat16", "float32")] * 2
    assert got["dtypes"] == [("float32", "float32")] * 2
    assert_curves_match("amp recipe, use_amp=True", expected["losses"] + expected["straight"],
                        got["losses"] + got["straight"], rtol=3e-2)
    assert got["scale"] == expected["scale"] == 65536.0
    assert got["scaler"] == expected["scaler"]
    for result in (expected, got):
        assert result["resumed"] == result["straight"]
    # PyTorch's checkpoint, scaler included, loads into minigrad's objects
    checkpoint = minigrad.load(expected["path"], weights_only=True)
    scaler = minigrad.amp.GradScaler("cpu")
    scaler.load_state_dict(checkpoint["scaler"])
    saved_after = 2 * len(data)  # the checkpoint was saved after two epochs of good steps
    assert scaler.state_dict() == dict(expected["scaler"], _growth_tracker=saved_after)
