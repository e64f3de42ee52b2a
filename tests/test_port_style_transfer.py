"""Port test: the neural-style-transfer tutorial, with a small randomly initialised CNN in the
place of VGG-19's features (conv, in-place ReLU and max-pool layers, as VGG's are).

The tutorial's code as written: `ContentLoss` and `StyleLoss` modules that keep a detached
target (a feature map, a Gram matrix from `view` and `torch.mm` with `.t()`) and store their
loss on `self.loss` while passing the input through; a `Normalization` module; the model
rebuilt by `add_module` in a loop over `cnn.children()` (each ReLU replaced by one that is not
in place), cut after the last loss with `model[:(i + 1)]`; the input image itself optimised
(`requires_grad_(True)`, `model.requires_grad_(False)`) by `optim.LBFGS([input_img])` with a
closure that first clamps the image in place under `no_grad`. Images are 3x16x16 arrays made
in the test.

The program runs under `torch.set_default_dtype(torch.float64)`: with the tutorial's weights
(a style weight of 1e6) and L-BFGS's unit steps, the float32 run is chaotic, one ulp added to
PyTorch's own initial weights moving its style score after 20 evaluations by more than the two
libraries differ; in float64 the same growth leaves the libraries agreeing to 1e-8.

Run by PyTorch and by minigrad (passed in as `torch`) from the same CNN weights: the style and
content scores of every closure call and the final image must agree."""
import numpy as np

from port_runner import assert_curves_match, run_both, state_numpy


def style_transfer_program(torch, content, style, init=None, num_steps=20):
    default_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        return _style_transfer(torch, content, style, init, num_steps)
    finally:
        torch.set_default_dtype(default_dtype)


def _style_transfer(torch, content, style, init, num_steps):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)

    # stands in for models.vgg19(weights=VGG19_Weights.DEFAULT).features.eval()
    cnn = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.MaxPool2d(kernel_size=2, stride=2),
        nn.Conv2d(16, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True),
        nn.Conv2d(16, 16, kernel_size=3, padding=1), nn.ReLU(inplace=True))
    if init is not None:
        cnn.load_state_dict({k: torch.from_numpy(v) for k, v in init.items()})
    start = state_numpy(cnn)
    cnn = cnn.eval()

    dtype = torch.get_default_dtype()
    style_img = torch.from_numpy(style).unsqueeze(0).to(device, dtype)
    content_img = torch.from_numpy(content).unsqueeze(0).to(device, dtype)
    assert style_img.size() == content_img.size(), \
        "we need to import style and content images of the same size"

    class ContentLoss(nn.Module):
        def __init__(self, target,):
            super(ContentLoss, self).__init__()
            # we 'detach' the target content from the tree used
            # to dynamically compute the gradient: this is a stated value,
            # not a variable. Otherwise the forward method of the criterion
            # will throw an error.
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    def gram_matrix(input):
        a, b, c, d = input.size()  # a=batch size(=1), b=number of feature maps
        features = input.view(a * b, c * d)  # resize F_XL into \hat F_XL
        G = torch.mm(features, features.t())  # compute the gram product
        # 'normalize' the values of the gram matrix by dividing by the number of element
        return G.div(a * b * c * d)

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super(StyleLoss, self).__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            G = gram_matrix(input)
            self.loss = F.mse_loss(G, self.target)
            return input

    cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406])
    cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225])

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super(Normalization, self).__init__()
            # .view the mean and std to make them [C x 1 x 1] so that they can
            # directly work with image Tensor of shape [B x C x H x W].
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    content_layers_default = ["conv_4"]
    style_layers_default = ["conv_1", "conv_2", "conv_3", "conv_4", "conv_5"]

    def get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                                   style_img, content_img,
                                   content_layers=content_layers_default,
                                   style_layers=style_layers_default):
        normalization = Normalization(normalization_mean, normalization_std)
        content_losses = []
        style_losses = []
        model = nn.Sequential(normalization)

        i = 0  # increment every time we see a conv
        for layer in cnn.children():
            if isinstance(layer, nn.Conv2d):
                i += 1
                name = "conv_{}".format(i)
            elif isinstance(layer, nn.ReLU):
                name = "relu_{}".format(i)
                # The in-place version doesn't play very nicely with the ContentLoss
                # and StyleLoss we insert below.
                layer = nn.ReLU(inplace=False)
            elif isinstance(layer, nn.MaxPool2d):
                name = "pool_{}".format(i)
            elif isinstance(layer, nn.BatchNorm2d):
                name = "bn_{}".format(i)
            else:
                raise RuntimeError("Unrecognized layer: {}".format(layer.__class__.__name__))

            model.add_module(name, layer)

            if name in content_layers:
                target = model(content_img).detach()
                content_loss = ContentLoss(target)
                model.add_module("content_loss_{}".format(i), content_loss)
                content_losses.append(content_loss)

            if name in style_layers:
                target_feature = model(style_img).detach()
                style_loss = StyleLoss(target_feature)
                model.add_module("style_loss_{}".format(i), style_loss)
                style_losses.append(style_loss)

        # now we trim off the layers after the last content and style losses
        for i in range(len(model) - 1, -1, -1):
            if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
                break
        model = model[:(i + 1)]
        return model, style_losses, content_losses

    input_img = content_img.clone()

    def get_input_optimizer(input_img):
        # this line to show that input is a parameter that requires a gradient
        optimizer = optim.LBFGS([input_img])
        return optimizer

    scores = []

    def run_style_transfer(cnn, normalization_mean, normalization_std,
                           content_img, style_img, input_img, num_steps=300,
                           style_weight=1000000, content_weight=1):
        model, style_losses, content_losses = get_style_model_and_losses(
            cnn, normalization_mean, normalization_std, style_img, content_img)
        # We want to optimize the input and not the model parameters so we
        # update all the requires_grad fields accordingly
        input_img.requires_grad_(True)
        # We also put the model in evaluation mode, so that specific layers
        # such as dropout or batch normalization layers behave correctly.
        model.eval()
        model.requires_grad_(False)
        optimizer = get_input_optimizer(input_img)

        run = [0]
        while run[0] <= num_steps:
            def closure():
                # correct the values of updated input image
                with torch.no_grad():
                    input_img.clamp_(0, 1)
                optimizer.zero_grad()
                model(input_img)
                style_score = 0
                content_score = 0
                for sl in style_losses:
                    style_score += sl.loss
                for cl in content_losses:
                    content_score += cl.loss
                style_score *= style_weight
                content_score *= content_weight
                loss = style_score + content_score
                loss.backward()
                run[0] += 1
                scores.append((style_score.item(), content_score.item()))
                return style_score + content_score

            optimizer.step(closure)

        # a last correction...
        with torch.no_grad():
            input_img.clamp_(0, 1)
        return input_img, model

    output, model = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
                                       content_img, style_img, input_img, num_steps=num_steps)
    return {"init": start, "style": [s for s, _ in scores], "content": [c for _, c in scores],
            "image": output.detach().numpy(),
            "float64": [output.dtype == torch.float64, dtype == torch.float64],
            "names": [n for n, _ in model.named_children()],
            "leaf": output.is_leaf, "grad_is_none": [p.grad is None for p in cnn.parameters()]}


def test_style_transfer_tutorial(torch):
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 1, 16, dtype=np.float32)
    content = np.stack([np.add.outer(ramp, ramp) / 2, np.outer(ramp, ramp),
                        1 - np.add.outer(ramp, ramp) / 2]).astype(np.float32)
    style = rng.uniform(0, 1, (3, 16, 16)).astype(np.float32)
    expected, got = run_both(style_transfer_program, torch, content, style)
    assert got["names"] == expected["names"]
    assert expected["names"][-1] == "style_loss_5"
    assert got["leaf"] and expected["leaf"]
    assert all(got["grad_is_none"]) and all(expected["grad_is_none"])
    assert len(got["style"]) == len(expected["style"])
    assert got["float64"] == expected["float64"] == [True, True]
    assert_curves_match("style score", expected["style"], got["style"], rtol=1e-8)
    assert_curves_match("content score", expected["content"], got["content"], rtol=1e-8)
    assert expected["style"][-1] < expected["style"][0] / 100  # the image took on the style
    np.testing.assert_allclose(got["image"], expected["image"], rtol=1e-8, atol=1e-10)
