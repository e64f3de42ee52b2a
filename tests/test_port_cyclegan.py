"""Port test: a CycleGAN-style image translation, as the pytorch-CycleGAN-and-pix2pix code
writes it, shrunk to 16x16 images: a ResNet generator (ReflectionPad2d(3) + 7x7 Conv2d +
InstanceNorm2d + ReLU(True), two strided downsampling convolutions, residual blocks of
ReflectionPad2d(1) + Conv2d + InstanceNorm2d with the input added back, two
ConvTranspose2d(stride=2, output_padding=1) upsamplings, ReflectionPad2d(3) + Conv2d + Tanh),
a PatchGAN discriminator (Conv2d + LeakyReLU(0.2, True) + InstanceNorm2d), `init_weights`
drawing normal_(0.0, 0.02) through `net.apply`, the least-squares GAN loss (MSELoss against
`torch.ones_like` / `zeros_like` targets), an L1 reconstruction ("cycle") loss through a
second generator, `set_requires_grad(netD, False)` while the generators step, Adam with
betas=(0.5, 0.999) under a LambdaLR that decays linearly, and translations of a fixed image
under `no_grad` with the generator in eval() mode.

Run by PyTorch and by minigrad (passed in as `torch`) from the same weights; the images come
from NumPy, outside the program, because the libraries' random streams differ."""
import numpy as np

import minigrad
from port_runner import assert_curves_match, assert_states_match, run_both, state_numpy


def cyclegan_program(torch, batches_a, batches_b, fixed, init=None, ngf=4, ndf=4, n_blocks=2,
                     lambda_cycle=10.0, lr=2e-4):
    nn = torch.nn
    torch.manual_seed(0)

    class ResnetBlock(nn.Module):
        def __init__(self, dim):
            super().__init__()
            self.conv_block = nn.Sequential(
                nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, kernel_size=3, padding=0, bias=True),
                nn.InstanceNorm2d(dim), nn.ReLU(True),
                nn.ReflectionPad2d(1), nn.Conv2d(dim, dim, kernel_size=3, padding=0, bias=True),
                nn.InstanceNorm2d(dim))

        def forward(self, x):
            return x + self.conv_block(x)  # add skip connections

    class ResnetGenerator(nn.Module):
        def __init__(self, input_nc, output_nc):
            super().__init__()
            model = [nn.ReflectionPad2d(3), nn.Conv2d(input_nc, ngf, kernel_size=7, padding=0),
                     nn.InstanceNorm2d(ngf), nn.ReLU(True)]
            n_downsampling = 2
            for i in range(n_downsampling):  # add downsampling layers
                mult = 2 ** i
                model += [nn.Conv2d(ngf * mult, ngf * mult * 2, kernel_size=3, stride=2,
                                    padding=1),
                          nn.InstanceNorm2d(ngf * mult * 2), nn.ReLU(True)]
            mult = 2 ** n_downsampling
            for i in range(n_blocks):  # add ResNet blocks
                model += [ResnetBlock(ngf * mult)]
            for i in range(n_downsampling):  # add upsampling layers
                mult = 2 ** (n_downsampling - i)
                model += [nn.ConvTranspose2d(ngf * mult, int(ngf * mult / 2), kernel_size=3,
                                             stride=2, padding=1, output_padding=1),
                          nn.InstanceNorm2d(int(ngf * mult / 2)), nn.ReLU(True)]
            model += [nn.ReflectionPad2d(3), nn.Conv2d(ngf, output_nc, kernel_size=7, padding=0),
                      nn.Tanh()]
            self.model = nn.Sequential(*model)

        def forward(self, input):
            return self.model(input)

    class NLayerDiscriminator(nn.Module):
        def __init__(self, input_nc):
            super().__init__()
            sequence = [nn.Conv2d(input_nc, ndf, kernel_size=4, stride=2, padding=1),
                        nn.LeakyReLU(0.2, True),
                        nn.Conv2d(ndf, ndf * 2, kernel_size=4, stride=2, padding=1),
                        nn.InstanceNorm2d(ndf * 2), nn.LeakyReLU(0.2, True),
                        nn.Conv2d(ndf * 2, 1, kernel_size=4, stride=1, padding=1)]
            self.model = nn.Sequential(*sequence)

        def forward(self, input):
            return self.model(input)

    def init_weights(m):
        classname = m.__class__.__name__
        if hasattr(m, "weight") and (classname.find("Conv") != -1):
            nn.init.normal_(m.weight.data, 0.0, 0.02)
            if hasattr(m, "bias") and m.bias is not None:
                nn.init.constant_(m.bias.data, 0.0)

    def set_requires_grad(nets, requires_grad=False):
        for net in nets:
            for param in net.parameters():
                param.requires_grad = requires_grad

    netG_A, netG_B = ResnetGenerator(1, 1), ResnetGenerator(1, 1)
    netD_A = NLayerDiscriminator(1)
    nets = {"G_A": netG_A, "G_B": netG_B, "D_A": netD_A}
    for net in nets.values():
        net.apply(init_weights)
    if init is not None:
        for name, net in nets.items():
            net.load_state_dict({k: torch.from_numpy(v) for k, v in init[name].items()})
    start = {name: state_numpy(net) for name, net in nets.items()}

    criterionGAN, criterionCycle = nn.MSELoss(), nn.L1Loss()
    optimizer_G = torch.optim.Adam(list(netG_A.parameters()) + list(netG_B.parameters()), lr=lr,
                                   betas=(0.5, 0.999))
    optimizer_D = torch.optim.Adam(netD_A.parameters(), lr=lr, betas=(0.5, 0.999))
    n_epochs = len(batches_a)

    def lambda_rule(epoch):
        return 1.0 - max(0, epoch + 1 - n_epochs // 2) / float(n_epochs // 2 + 1)
    schedulers = [torch.optim.lr_scheduler.LambdaLR(o, lr_lambda=lambda_rule)
                  for o in (optimizer_G, optimizer_D)]

    losses = {"G": [], "cycle": [], "D": []}
    for a, b in zip(batches_a, batches_b):
        real_A, real_B = torch.from_numpy(a), torch.from_numpy(b)
        fake_B = netG_A(real_A)
        rec_A = netG_B(fake_B)
        # G_A and G_B
        set_requires_grad([netD_A], False)
        optimizer_G.zero_grad()
        pred_fake = netD_A(fake_B)
        loss_G_A = criterionGAN(pred_fake, torch.ones_like(pred_fake))
        loss_cycle_A = criterionCycle(rec_A, real_A) * lambda_cycle
        loss_G = loss_G_A + loss_cycle_A
        loss_G.backward()
        optimizer_G.step()
        # D_A
        set_requires_grad([netD_A], True)
        optimizer_D.zero_grad()
        pred_real = netD_A(real_B)
        pred_fake = netD_A(fake_B.detach())
        loss_D = (criterionGAN(pred_real, torch.ones_like(pred_real))
                  + criterionGAN(pred_fake, torch.zeros_like(pred_fake))) * 0.5
        loss_D.backward()
        optimizer_D.step()
        for scheduler in schedulers:
            scheduler.step()
        losses["G"].append(loss_G_A.item())
        losses["cycle"].append(loss_cycle_A.item())
        losses["D"].append(loss_D.item())

    netG_A.eval()
    with torch.no_grad():
        translated = netG_A(torch.from_numpy(fixed)).numpy()
    return {"init": start, "losses": losses, "translated": translated,
            "lr": optimizer_G.param_groups[0]["lr"],
            "zero_gradient": {name: biases_before_a_norm(torch, net) for name, net in nets.items()},
            **{name: state_numpy(net) for name, net in nets.items()}}


def stripes_and_spots(n_batches, batch_size, seed):
    """Two image domains in [-1, 1]: A, soft horizontal stripes of random phase; B, soft spots
    at random places."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:16, :16].astype(np.float32)
    a, b = [], []
    for _ in range(n_batches):
        phase = rng.uniform(0, 2 * np.pi, (batch_size, 1, 1))
        a.append(np.sin(yy * 0.8 + phase)[:, None].astype(np.float32))
        cy, cx = rng.uniform(3, 13, (2, batch_size, 1, 1))
        b.append((2 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8) - 1)[:, None]
                 .astype(np.float32))
    return a, b


def test_cyclegan_generator_trains_the_same_in_both(torch):
    a, b = stripes_and_spots(4, 2, 0)
    fixed = stripes_and_spots(1, 3, 1)[0][0]
    expected, got = run_both(cyclegan_program, torch, a, b, fixed)
    for name in ("G", "cycle", "D"):
        assert_curves_match(f"cyclegan {name}", expected["losses"][name], got["losses"][name],
                            rtol=2e-4)
    np.testing.assert_allclose(got["translated"], expected["translated"], rtol=2e-3, atol=2e-4)
    # Adam moves a weight whose gradient is near zero by each library's rounding: the biases
    # just before an InstanceNorm, which subtracts them again, are such weights
    for net in ("G_A", "G_B", "D_A"):
        assert_states_match(expected[net], got[net], rtol=1e-3, atol=1e-4,
                            zero_gradient=got["zero_gradient"][net])
    assert got["zero_gradient"] == expected["zero_gradient"]
    assert len(got["zero_gradient"]["G_A"]) == 9
    assert got["lr"] == expected["lr"]
    assert got["translated"].shape == (3, 1, 16, 16)


def biases_before_a_norm(torch, net):
    """The state-dict keys of the biases of layers that an InstanceNorm2d follows."""
    keys = []
    for name, module in net.named_modules():
        if isinstance(module, torch.nn.Sequential):
            children = list(module.named_children())
            for (child, layer), (_, after) in zip(children, children[1:]):
                if isinstance(after, torch.nn.InstanceNorm2d) and layer.bias is not None:
                    keys.append(f"{name}.{child}.bias")
    return keys
