"""Port test: programs written the PyTorch way that use its finer resampling and lookup
options, run by PyTorch and by minigrad (passed in as `torch`) from the same weights:

- a super-resolution network (VDSR-like): the low-resolution inputs made inside the program by
  antialiased bicubic and bilinear downsampling (`F.interpolate(antialias=True)`), brought
  back by `nn.Upsample(mode="bicubic")`, a residual of convolutions on top, trained by Adam on
  the MSE, then a test image upscaled under `no_grad` (also through lanczos and
  `align_corners=True` bicubic resizes);
- a spatial transformer on volumes: a localisation network reads a (N, 1, D, H, W) volume
  (pooled by trilinear `F.interpolate`) and predicts a 3-D affine map, `F.affine_grid` and
  `F.grid_sample` of the 5-D volume resample it (trilinear, border padding), and a
  classifier trained by SGD reads the result; a bicubic `grid_sample` of its slices too;
- a token classifier: `nn.Embedding(max_norm=, scale_grad_by_freq=)`, `nn.EmbeddingBag`
  with max_norm and `nn.MultiheadAttention(add_bias_kv=True, add_zero_attn=True)` with a
  key padding mask, trained by SGD, its embedding table renormalised in place every step.

The data and batch orders come from NumPy, outside the programs."""
import numpy as np

from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def super_resolution_program(torch, images, init=None, scale=2):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class VDSR(nn.Module):
        def __init__(self):
            super().__init__()
            self.upsample = nn.Upsample(scale_factor=scale, mode="bicubic", align_corners=False)
            self.body = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.Conv2d(8, 1, 3, padding=1))

        def forward(self, x):
            x = self.upsample(x)
            return x + self.body(x)  # the network learns the residual

    def degrade(high, mode):
        return F.interpolate(high, scale_factor=1 / scale, mode=mode, antialias=True)

    model = VDSR()
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for step, batch in enumerate(images[:-1]):
        high = torch.from_numpy(batch)
        low = degrade(high, "bicubic" if step % 2 == 0 else "bilinear")
        optimizer.zero_grad()
        loss = F.mse_loss(model(low), high)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        high = torch.from_numpy(images[-1])
        low = degrade(high, "bicubic")
        restored = model(low)
        lanczos = F.interpolate(low, size=tuple(high.shape[-2:]), mode="lanczos",
                                antialias=True)
        corners = F.interpolate(low, scale_factor=scale, mode="bicubic", align_corners=True)
    return {"init": start, "losses": losses, "restored": restored.numpy(),
            "lanczos": lanczos.numpy(), "corners": corners.numpy(), "state": state_numpy(model)}


def volume_transformer_program(torch, volumes, labels, init=None):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class VolumeSTN(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.localization = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), nn.ReLU(),
                                              nn.Flatten(), nn.Linear(4 * 4 * 4 * 4, 12))
            self.classifier = nn.Sequential(nn.Conv3d(1, 4, 3, padding=1), nn.ReLU(),
                                            nn.AdaptiveAvgPool3d(1), nn.Flatten(),
                                            nn.Linear(4, classes))
            # start at the identity map, as the spatial transformer tutorial does
            self.localization[-1].weight.data.zero_()
            self.localization[-1].bias.data.copy_(torch.tensor(
                [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            small = F.interpolate(x, size=(4, 4, 4), mode="trilinear", align_corners=False)
            theta = self.localization(small).view(-1, 3, 4)
            grid = F.affine_grid(theta, x.size(), align_corners=False)
            return F.grid_sample(x, grid, mode="bilinear", padding_mode="border",
                                 align_corners=False)

        def forward(self, x):
            return self.classifier(self.stn(x))

    model = VolumeSTN(int(labels.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.from_numpy(volumes), torch.from_numpy(labels)
    losses = []
    for i in range(0, len(x), 4):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x[i:i + 4]), y[i:i + 4])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        warped = model.stn(x[:2])
        # the middle slices, resampled bicubically by a grid that zooms and shifts them
        slices = x[:2, :, 4]
        theta = torch.tensor([[[0.8, 0.1, 0.05], [-0.1, 0.9, 0.1]]]).repeat(2, 1, 1)
        grid = F.affine_grid(theta, slices.size(), align_corners=True)
        bicubic = F.grid_sample(slices, grid, mode="bicubic", padding_mode="reflection",
                                align_corners=True)
    return {"init": start, "losses": losses, "warped": warped.numpy(),
            "bicubic": bicubic.numpy(), "state": state_numpy(model)}


def token_classifier_program(torch, tokens, padding, labels, init=None):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)

    class Classifier(nn.Module):
        def __init__(self, vocab, dim, classes):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim, padding_idx=0, max_norm=1.0,
                                      scale_grad_by_freq=True)
            self.bag = nn.EmbeddingBag(vocab, dim, mode="mean", max_norm=0.5, padding_idx=0)
            self.attn = nn.MultiheadAttention(dim, 2, add_bias_kv=True, add_zero_attn=True,
                                              batch_first=True)
            self.head = nn.Linear(2 * dim, classes)

        def forward(self, ids, pad):
            h = self.embed(ids)
            h, _ = self.attn(h, h, h, key_padding_mask=pad)
            pooled = h.masked_fill(pad.unsqueeze(-1), 0.0).sum(1) / (~pad).sum(1, keepdim=True)
            return self.head(torch.cat([pooled, self.bag(ids)], dim=1))

    model = Classifier(int(tokens.max()) + 1, 8, int(labels.max()) + 1)
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
    ids, pad, y = torch.from_numpy(tokens), torch.from_numpy(padding), torch.from_numpy(labels)
    losses = []
    for i in range(0, len(ids), 6):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(ids[i:i + 6], pad[i:i + 6]), y[i:i + 6])
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    norms = model.embed.weight.detach().norm(dim=1)
    return {"init": start, "losses": losses, "norms": norms.numpy(),
            "state": state_numpy(model)}


def _images(batches, n, size, rng):
    """Smooth random luminance images in [0, 1] (sums of a few random waves)."""
    yy, xx = np.mgrid[:size, :size] / size
    fy, fx, phase = rng.uniform(0.5, 3, (3, batches, n, 3, 1, 1))
    waves = np.sin(2 * np.pi * (fy * yy + fx * xx) + 6 * phase).sum(2)
    waves = (waves - waves.min()) / (waves.max() - waves.min())
    return waves[:, :, None].astype(np.float32)  # (batches, n, 1, size, size)


def test_super_resolution_with_bicubic_and_antialiasing_trains_the_same(torch):
    images = _images(7, 3, 16, np.random.default_rng(0))
    expected, got = run_both(super_resolution_program, torch, images)
    assert_curves_match("vdsr loss", expected["losses"], got["losses"], rtol=1e-4)
    for key in ("restored", "lanczos", "corners"):
        np.testing.assert_allclose(got[key], expected[key], rtol=1e-4, atol=1e-5, err_msg=key)
    assert_states_match(expected["state"], got["state"], rtol=1e-3, atol=1e-4)
    # it learns (each degradation's loss against its own first one)
    assert got["losses"][4] < got["losses"][0] and got["losses"][5] < got["losses"][1]


def test_spatial_transformer_on_volumes_trains_the_same(torch):
    rng = np.random.default_rng(1)
    volumes = rng.standard_normal((16, 1, 8, 8, 8)).astype(np.float32) * 0.3
    labels = rng.integers(0, 2, 16)
    volumes[labels == 1, :, 2:6, 2:6, 2:6] += 1.0  # class 1 holds a bright cube
    expected, got = run_both(volume_transformer_program, torch, volumes, labels)
    assert_curves_match("stn loss", expected["losses"], got["losses"], rtol=1e-4)
    np.testing.assert_allclose(got["warped"], expected["warped"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["bicubic"], expected["bicubic"], rtol=1e-5, atol=1e-5)
    assert_states_match(expected["state"], got["state"], rtol=1e-3, atol=1e-4)


def test_token_classifier_with_renormalised_embeddings_trains_the_same(torch):
    rng = np.random.default_rng(2)
    lengths = rng.integers(3, 7, 24)
    tokens = rng.integers(1, 12, (24, 6))
    padding = np.arange(6)[None, :] >= lengths[:, None]
    tokens[padding] = 0
    labels = (tokens == 3).any(1).astype(np.int64)  # does the sequence hold token 3?
    expected, got = run_both(token_classifier_program, torch, tokens, padding, labels)
    assert_curves_match("token loss", expected["losses"], got["losses"], rtol=1e-4)
    np.testing.assert_allclose(got["norms"], expected["norms"], rtol=1e-5, atol=1e-6)
    # every row renormalised to at most 1 before the last step, which moved it a little
    assert 0.99 < got["norms"][1:].max() < 1.01
    assert_states_match(expected["state"], got["state"], rtol=1e-3, atol=1e-4)
