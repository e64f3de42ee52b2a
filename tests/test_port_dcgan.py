"""Port test: a DCGAN in the style of PyTorch's DCGAN tutorial, shrunk to 16x16 images: a
generator of `ConvTranspose2d` + `BatchNorm2d` + `ReLU(True)` ending in `Tanh`, a discriminator
of strided `Conv2d` + `LeakyReLU(0.2, inplace=True)` + `BatchNorm2d`, a `weights_init` applied
by `model.apply` that draws `normal_(0.0, 0.02)` into conv weights and `normal_(1.0, 0.02)` /
`constant_(0)` into the norms' affine parameters, labels made by `torch.full` and refilled
with `fill_`, the discriminator trained on real then on `fake.detach()` with gradients summed
over two `backward()` calls, the generator trained through the discriminator, two Adam
optimizers with `betas=(0.5, 0.999)`, `BCEWithLogitsLoss` (or the tutorial's `Sigmoid` +
`BCELoss`), D(x) and D(G(z)) logged by `.mean().item()`, images from a fixed noise under
`no_grad` with the generator in `eval()` mode, and a checkpoint of both networks and both
optimizers written by `torch.save` and read back into fresh objects that go on training.
Run by PyTorch and by minigrad (passed in as `torch`) from the same weights; the noise comes
from NumPy, outside the program, because the libraries' random streams differ."""
import numpy as np
import pytest

import minigrad
from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def dcgan_program(torch, real_batches, noises, fixed_noise, ckpt_path, init=None, nz=8, ngf=8,
                  ndf=8, lr=2e-4, sigmoid_head=False, resume_at=None):
    nn = torch.nn
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(999)

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find("Conv") != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find("BatchNorm") != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class Generator(nn.Module):
        def __init__(self):
            super().__init__()
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),     # (ngf*2) x 4 x 4
                nn.BatchNorm2d(ngf * 2),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),    # ngf x 8 x 8
                nn.BatchNorm2d(ngf),
                nn.ReLU(True),
                nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),          # 1 x 16 x 16
                nn.Tanh(),
            )

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [
                nn.Conv2d(1, ndf, 4, 2, 1, bias=False),                   # ndf x 8 x 8
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),             # (ndf*2) x 4 x 4
                nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),               # 1 x 1 x 1
            ]
            if sigmoid_head:
                layers.append(nn.Sigmoid())
            self.main = nn.Sequential(*layers)

        def forward(self, input):
            return self.main(input)

    def build():
        netG, netD = Generator().to(device), Discriminator().to(device)
        netG.apply(weights_init)
        netD.apply(weights_init)
        criterion = nn.BCELoss() if sigmoid_head else nn.BCEWithLogitsLoss()
        optimizerD = torch.optim.Adam(netD.parameters(), lr=lr, betas=(0.5, 0.999))
        optimizerG = torch.optim.Adam(netG.parameters(), lr=lr, betas=(0.5, 0.999))
        return netG, netD, criterion, optimizerD, optimizerG

    netG, netD, criterion, optimizerD, optimizerG = build()
    if init is not None:
        netG.load_state_dict({k: torch.from_numpy(v) for k, v in init["G"].items()})
        netD.load_state_dict({k: torch.from_numpy(v) for k, v in init["D"].items()})
    start = {"G": state_numpy(netG), "D": state_numpy(netD)}
    fixed = torch.from_numpy(fixed_noise).to(device)

    real_label, fake_label = 1.0, 0.0
    G_losses, D_losses, D_x_log, D_G_z_log = [], [], [], []
    for i, (images, z) in enumerate(zip(real_batches, noises)):
        if i == resume_at:
            # the run stops here and a new process picks the checkpoint up
            torch.save({"netG": netG.state_dict(), "netD": netD.state_dict(),
                        "optimizerG": optimizerG.state_dict(),
                        "optimizerD": optimizerD.state_dict(), "iters": i}, ckpt_path)
            del netG, netD, optimizerD, optimizerG
            netG, netD, criterion, optimizerD, optimizerG = build()
            checkpoint = torch.load(ckpt_path, map_location=device)
            netG.load_state_dict(checkpoint["netG"])
            netD.load_state_dict(checkpoint["netD"])
            optimizerG.load_state_dict(checkpoint["optimizerG"])
            optimizerD.load_state_dict(checkpoint["optimizerD"])
            assert checkpoint["iters"] == i
        netG.train()
        # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        real_cpu = torch.from_numpy(images).to(device)
        b_size = real_cpu.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float, device=device)
        output = netD(real_cpu).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = (output if sigmoid_head else torch.sigmoid(output)).mean().item()

        noise = torch.from_numpy(z).to(device)
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = (output if sigmoid_head else torch.sigmoid(output)).mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()

        # (2) Update G: maximize log(D(G(z)))
        netG.zero_grad()
        label.fill_(real_label)  # fake labels are real for generator cost
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        optimizerG.step()

        G_losses.append(errG.item())
        D_losses.append(errD.item())
        D_x_log.append(D_x)
        D_G_z_log.append(D_G_z1)

    netG.eval()
    with torch.no_grad():
        samples = netG(fixed).detach().cpu()
    return {"init": start, "G_losses": G_losses, "D_losses": D_losses, "D_x": D_x_log,
            "D_G_z": D_G_z_log, "samples": samples.numpy(), "G": state_numpy(netG),
            "D": state_numpy(netD),
            "lr": [g["lr"] for g in optimizerG.param_groups + optimizerD.param_groups],
            "steps": float(optimizerG.state_dict()["state"][0]["step"])}


def blobs(n_batches, batch_size, seed):
    """Batches of 1x16x16 images in [-1, 1] (as `Normalize((0.5,), (0.5,))` leaves them): a
    bright disc of random radius at a random place on a dark ground."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:16, :16]
    batches = []
    for _ in range(n_batches):
        cy, cx = rng.uniform(4, 12, (2, batch_size, 1, 1))
        r = rng.uniform(2, 5, (batch_size, 1, 1))
        disc = ((yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2).astype(np.float32)
        batches.append((2 * disc - 1)[:, None].astype(np.float32))
    return batches


def _data(steps, batch_size=16, nz=8):
    rng = np.random.default_rng(1)
    noises = [rng.standard_normal((batch_size, nz, 1, 1)).astype(np.float32)
              for _ in range(steps)]
    fixed = rng.standard_normal((6, nz, 1, 1)).astype(np.float32)
    return blobs(steps, batch_size, 0), noises, fixed


def _assert_same_run(name, expected, got, tol):
    for curve in ("D_losses", "G_losses", "D_x", "D_G_z"):
        assert_curves_match(f"{name} {curve}", expected[curve], got[curve], rtol=tol)
    np.testing.assert_allclose(got["samples"], expected["samples"], rtol=tol, atol=tol)
    for net in ("G", "D"):
        assert_states_match(expected[net], got[net], rtol=tol, atol=tol)
    assert got["lr"] == expected["lr"]
    assert got["steps"] == expected["steps"]


@pytest.mark.parametrize("sigmoid_head", [False, True])
def test_dcgan_trains_the_same_in_both(torch, tmp_path, sigmoid_head):
    data = _data(8)
    expected, got = run_both(dcgan_program, torch, *data, str(tmp_path / "dcgan.pt"),
                             sigmoid_head=sigmoid_head)
    # Adam's first steps move every weight by about lr whatever the gradient's size, so a
    # weight whose gradient is near zero moves by each library's rounding: 1e-4 holds
    _assert_same_run("dcgan", expected, got, tol=1e-4)
    assert sorted(got["G"]) == sorted(expected["G"])
    assert got["G"]["main.1.num_batches_tracked"] == 8
    # the generator in eval() mode uses its running statistics: samples differ from train mode
    assert got["samples"].shape == (6, 1, 16, 16) and np.abs(got["samples"]).max() <= 1.0


def test_dcgan_resumed_from_a_checkpoint_continues_the_same(torch, tmp_path):
    data = _data(8)
    expected, got = run_both(dcgan_program, torch, *data, str(tmp_path / "dcgan.pt"),
                             resume_at=4)
    _assert_same_run("dcgan resumed", expected, got, tol=1e-4)
    straight = dcgan_program(minigrad, *data, str(tmp_path / "straight.pt"),
                             init=expected["init"])
    # saving and loading the state dicts is exact: the resumed run is the uninterrupted one
    assert straight["G_losses"] == got["G_losses"]
    assert straight["D_losses"] == got["D_losses"]
    np.testing.assert_array_equal(straight["samples"], got["samples"])
