"""Compatibility cases: nn.Module's backward, forward and state-dict hooks and the global
module hooks; nn.utils.parametrize and parametrizations, the legacy weight and spectral norm,
prune and fusion. Layers get the same weights in both libraries by `fill`; spectral norm's
random u and v are made equal by loading one library's state dict into the other's."""
import importlib

import numpy as np

from compat_cases_nn import fill
from compat_table import case, f32, watch

CASES = []
add = CASES.append


def sub(lib, name):
    """`lib.nn.utils.<name>` (PyTorch imports prune and fusion only when asked)."""
    return importlib.import_module(f"{lib.__name__}.nn.utils.{name}")


def grads(gs):
    return [None if g is None else g * 1.0 for g in gs]


@add
@case("nn.Module.register_full_backward_hook", "nn.Module.register_full_backward_pre_hook",
      inputs=(f32(2, 3), f32(2, 3)))
def _(lib, x, y):
    nn = lib.nn
    net = fill(lib, nn.Bilinear(3, 3, 4))
    seen = []

    def pre(m, grad_output):
        seen.append(grads(grad_output))
        return (grad_output[0] * 3,)

    def full(m, grad_input, grad_output):
        seen.append(grads(grad_input) + grads(grad_output))
        return (grad_input[0] * 2, None)

    h1 = net.register_full_backward_pre_hook(pre)
    h2 = net.register_full_backward_hook(full)
    out = net(x, y)
    h1.remove()  # the hooks of a call are those registered when it was made, as in PyTorch
    h2.remove()
    (out * lib.arange(8.0).reshape(2, 4)).sum().backward(retain_graph=True)
    return out, list(seen), x.grad * 1, y.grad


@add
@case("nn.Module.register_full_backward_hook", inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    net = fill(lib, nn.Linear(3, 2))
    seen = []
    net.register_full_backward_hook(lambda m, gi, go: seen.append(grads(gi + go)))
    out = net(x.detach())  # no input requires grad: the hook runs with grad_input (None,)
    out.sum().backward(retain_graph=True)
    return out, list(seen)


@add
@case("nn.Module.register_full_backward_hook", compare="raises",
      match="invalid number of grad_input")
def _(lib):
    net = lib.nn.Linear(3, 2)
    net.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    net(lib.ones(1, 3, requires_grad=True)).sum().backward()


@add
@case("nn.Module.register_full_backward_pre_hook", compare="raises",
      match="invalid number of grad_output")
def _(lib):
    net = lib.nn.Linear(3, 2)
    net.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    net(lib.ones(1, 3, requires_grad=True)).sum().backward()


@add
@case("nn.Module.register_forward_hook", "nn.Module.register_forward_pre_hook",
      "nn.modules.module.register_module_forward_hook",
      "nn.modules.module.register_module_forward_pre_hook",
      "nn.modules.module.register_module_full_backward_hook",
      "nn.modules.module.register_module_full_backward_pre_hook", inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    mm = nn.modules.module
    net = fill(lib, nn.Linear(3, 3))
    order = []
    net.register_forward_hook(lambda m, a, out: order.append("post"))
    net.register_forward_hook(lambda m, a, kw, out: order.append(("first", sorted(kw))),
                              prepend=True, with_kwargs=True)
    net.register_forward_pre_hook(lambda m, a, kw: ((a[0] * 2,), kw), with_kwargs=True)
    handles = [mm.register_module_forward_pre_hook(lambda m, a: order.append("gpre")),
               mm.register_module_forward_hook(lambda m, a, out: out + 1),
               mm.register_module_full_backward_pre_hook(
                   lambda m, go: order.append("gbpre")),
               mm.register_module_full_backward_hook(
                   lambda m, gi, go: order.append(("gb", grads(gi))))]
    try:
        out = net(x)
        out.sum().backward(retain_graph=True)
    finally:
        for h in handles:
            h.remove()
    return out, list(order), net(x)


@add
@case("nn.Module.register_forward_hook", inputs=(f32(2, 3),))
def _(lib, x):
    net = lib.nn.Linear(3, 3)
    seen = []
    net.register_forward_hook(lambda m, a, out: seen.append(out is None), always_call=True)
    net.register_forward_hook(lambda m, a, out: seen.append("not always"))
    net.forward = lambda t: t.reshape(5)  # raises: the always_call hook still runs
    try:
        net(x)
    except Exception:  # PyTorch's RuntimeError, minigrad's ValueError: not the point here
        seen.append("raised")
    return seen


@add
@case("nn.Module.register_state_dict_pre_hook", "nn.Module.register_state_dict_post_hook",
      "nn.Module.register_load_state_dict_pre_hook",
      "nn.Module.register_load_state_dict_post_hook", inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    net = nn.Sequential(fill(lib, nn.Linear(3, 3)), fill(lib, nn.Linear(3, 1), seed=1))
    seen = []
    net[0].register_state_dict_pre_hook(lambda m, prefix, keep: seen.append(("pre", prefix)))

    def post(m, sd, prefix, meta):
        seen.append(("post", prefix, sorted(sd)))
        sd[prefix + "scale"] = lib.tensor(2.0)
    net[1].register_state_dict_post_hook(post)
    sd = net.state_dict()

    def load_pre(m, sd, prefix, meta, strict, missing, unexpected, errors):
        seen.append(("load pre", prefix, strict))
        sd.pop(prefix + "scale", None)

    def load_post(m, keys):
        seen.append(("load post", list(keys.missing_keys), list(keys.unexpected_keys)))
        keys.missing_keys.clear()
    net[1].register_load_state_dict_pre_hook(load_pre)
    net.register_load_state_dict_post_hook(load_post)
    sd2 = {k: v * 0.5 for k, v in sd.items() if k != "1.bias"}
    result = net.load_state_dict(sd2)
    return (list(sd), seen, sorted(result.missing_keys), net(x))


@add
@case("nn.utils.parametrize.register_parametrization", "nn.utils.parametrize.is_parametrized",
      "nn.utils.parametrize.remove_parametrizations", "nn.utils.parametrize.cached",
      "nn.utils.parametrize.type_before_parametrizations", inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    P = sub(lib, "parametrize")

    class Symmetric(nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Scale(nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, A):
            return A / 2

    net = fill(lib, nn.Linear(3, 3))
    P.register_parametrization(net, "weight", Symmetric())
    P.register_parametrization(net, "weight", Scale())
    watch(net.parametrizations.weight.original)
    with P.cached():
        y = net(x) + net(x * 2)
    keys = list(net.state_dict())
    flags = (P.is_parametrized(net), P.is_parametrized(net, "bias"),
             P.type_before_parametrizations(net).__name__)
    with lib.no_grad():
        net.weight = lib.eye(3) * 4
    w = net.weight * 1
    P.remove_parametrizations(net, "weight", leave_parametrized=True)
    return y, keys, flags, w, net.weight * 1, type(net).__name__, list(net.state_dict())


@add
@case("nn.utils.parametrize.register_parametrization", compare="raises",
      match="may not change the shape")
def _(lib):
    class Flat(lib.nn.Module):
        def forward(self, X):
            return X.reshape(-1)
    sub(lib, "parametrize").register_parametrization(lib.nn.Linear(2, 2), "weight", Flat())


@add
@case("nn.utils.parametrizations.weight_norm", "nn.utils.parametrizations.spectral_norm",
      "nn.utils.parametrizations.orthogonal", inputs=(f32(2, 4),), rtol=1e-4, atol=1e-5)
def _(lib, x):
    nn = lib.nn
    P = nn.utils.parametrizations
    a = P.weight_norm(fill(lib, nn.Linear(4, 3), seed=1), dim=1)
    b = P.spectral_norm(fill(lib, nn.Linear(4, 3), seed=2), n_power_iterations=2)
    c = P.orthogonal(fill(lib, nn.Linear(4, 4), seed=3), orthogonal_map="cayley")
    d = P.orthogonal(fill(lib, nn.Linear(4, 3), seed=4))
    u = np.linspace(-1, 1, 3).astype(np.float32)
    with lib.no_grad():  # spectral norm's random start, the same in both
        b.parametrizations.weight[0]._u.copy_(lib.tensor(u / np.linalg.norm(u)))
        b.parametrizations.weight[0]._v.copy_(lib.tensor(np.full(4, 0.5, np.float32)))
    for m in (a, b, c, d):
        watch(*m.parameters())
    y = a(x) + b(x) + c(x)[:, :3] + d(x)
    b.eval()
    return (y, b(x), [list(m.state_dict()) for m in (a, b, c, d)],
            c.weight @ c.weight.T, b.parametrizations.weight[0]._u * 1)


@add
@case("nn.utils.weight_norm", "nn.utils.remove_weight_norm", "nn.utils.spectral_norm",
      "nn.utils.remove_spectral_norm", inputs=(f32(2, 4),), rtol=1e-4, atol=1e-5)
def _(lib, x):
    import warnings
    nn = lib.nn
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        a = nn.utils.weight_norm(fill(lib, nn.Linear(4, 3), seed=1))
    b = nn.utils.spectral_norm(fill(lib, nn.Linear(4, 3), seed=2))
    with lib.no_grad():
        b.weight_u.copy_(lib.tensor(np.array([0.6, 0.8, 0.0], np.float32)))
        b.weight_v.copy_(lib.tensor(np.full(4, 0.5, np.float32)))
    watch(a.weight_g, a.weight_v, b.weight_orig)
    y = a(x) + b(x)
    keys = [list(a.state_dict()), list(b.state_dict())]
    nn.utils.remove_weight_norm(a)
    nn.utils.remove_spectral_norm(b)
    return y, keys, list(a.state_dict()), list(b.state_dict()), a(x) * 1, b(x) * 1


@add
@case("nn.utils.prune.l1_unstructured", "nn.utils.prune.ln_structured",
      "nn.utils.prune.remove", "nn.utils.prune.is_pruned", "nn.utils.prune.global_unstructured",
      "nn.utils.prune.custom_from_mask", "nn.utils.prune.identity",
      "nn.utils.prune.L1Unstructured", inputs=(f32(2, 6),))
def _(lib, x):
    nn = lib.nn
    prune = sub(lib, "prune")
    a = fill(lib, nn.Linear(6, 4), seed=5)
    b = fill(lib, nn.Linear(6, 2), seed=6)
    prune.l1_unstructured(a, "weight", amount=0.3)
    prune.ln_structured(a, "weight", amount=1, n=2, dim=0)
    prune.global_unstructured([(a, "bias"), (b, "weight")], prune.L1Unstructured, amount=5)
    prune.custom_from_mask(b, "bias", lib.tensor([1.0, 0.0]))
    prune.identity(b, "bias")
    y = a(x) + b(x).sum()
    state = [list(a.state_dict()), list(b.state_dict()), prune.is_pruned(a)]
    masks = [a.weight_mask * 1, a.bias_mask * 1, b.weight_mask * 1, b.bias_mask * 1]
    prune.remove(a, "weight")
    return y, state, masks, list(a.state_dict()), a.weight * 1


@add
@case("nn.utils.prune.random_unstructured", "nn.utils.prune.random_structured",
      compare="meta")
def _(lib):
    prune = sub(lib, "prune")
    m = lib.nn.Linear(6, 4)
    prune.random_structured(m, "weight", amount=2, dim=1)
    prune.random_unstructured(m, "weight", amount=4)
    return m.weight_mask, m.weight_mask.sum(), (m.weight_mask.sum(0) != 0).sum()


@add
@case("nn.utils.prune.l1_unstructured", compare="raises", match="should be smaller than")
def _(lib):
    sub(lib, "prune").l1_unstructured(lib.nn.Linear(2, 2), "weight", amount=9)


@add
@case("nn.utils.fuse_conv_bn_eval", "nn.utils.fuse_linear_bn_eval",
      "nn.utils.fuse_conv_bn_weights", "nn.utils.fuse_linear_bn_weights",
      inputs=(f32(2, 2, 5, 5), f32(3, 4)), rtol=1e-4, atol=1e-5)
def _(lib, img, x):
    nn = lib.nn
    conv, bn = fill(lib, nn.Conv2d(2, 3, 3), seed=7), fill(lib, nn.BatchNorm2d(3), seed=8)
    lin, bn1 = fill(lib, nn.Linear(4, 3), seed=9), fill(lib, nn.BatchNorm1d(3), seed=10)
    with lib.no_grad():
        for norm in (bn, bn1):
            norm.running_mean.copy_(lib.tensor([0.1, -0.2, 0.3]))
            norm.running_var.copy_(lib.tensor([0.5, 1.5, 2.0]))
    for m in (conv, bn, lin, bn1):
        m.eval()
    fc = nn.utils.fuse_conv_bn_eval(conv, bn)
    fl = nn.utils.fuse_linear_bn_eval(lin, bn1)
    return fc(img), bn(conv(img)), fl(x), bn1(lin(x))


@add
@case("nn.modules.module.register_module_buffer_registration_hook",
      "nn.modules.module.register_module_module_registration_hook",
      "nn.modules.module.register_module_parameter_registration_hook", inputs=(f32(2, 3),))
def _(lib, x):
    nn = lib.nn
    mm = nn.modules.module
    seen = []
    handles = [
        mm.register_module_buffer_registration_hook(
            lambda m, name, b: seen.append(("buffer", name))),
        mm.register_module_module_registration_hook(
            lambda m, name, sub: seen.append(("module", name))),
        mm.register_module_parameter_registration_hook(
            lambda m, name, p: seen.append(("parameter", name)))]
    try:
        net = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    finally:
        for h in handles:
            h.remove()
    fill(lib, net)
    net.eval()
    return net(x), list(seen), net[1].running_var * 1


@add
@case("nn.Buffer")
def _(lib):
    nn = lib.nn

    class Smoother(nn.Module):
        def __init__(self):
            super().__init__()
            self.mean = nn.Buffer(lib.zeros(3))
            self.count = nn.Buffer(lib.tensor(0), persistent=False)
            self.scale = nn.Parameter(lib.ones(3))

        def forward(self, x):
            with lib.no_grad():
                self.mean.mul_(0.9).add_(x.mean(0) * 0.1)
                self.count += 1
            return (x - self.mean) * self.scale

    m = Smoother()
    x = lib.arange(12.0).reshape(4, 3)
    y = m(x)
    y.sum().backward()
    marked = lib.nn.parameter.Buffer(lib.ones(2, requires_grad=True), persistent=False)
    errors = []
    try:
        m.scale = nn.Buffer(lib.ones(3))
    except TypeError:
        errors.append("parameter name")
    return (y, m.scale.grad, sorted(m.state_dict()), [n for n, _ in m.named_buffers()],
            m.count, isinstance(m.mean, nn.Buffer), isinstance(x, nn.Buffer),
            type(m.mean).__name__, marked.requires_grad, marked.persistent,
            nn.Buffer().shape, lib.nn.parameter.Parameter is nn.Parameter, errors)


@add
@case("nn.LazyConv1d", "nn.LazyConv2d", "nn.LazyConv3d", "nn.LazyConvTranspose1d",
      "nn.LazyConvTranspose2d", "nn.LazyConvTranspose3d", "nn.LazyBatchNorm1d",
      "nn.LazyBatchNorm2d", "nn.LazyBatchNorm3d", "nn.LazyInstanceNorm1d",
      "nn.LazyInstanceNorm2d", "nn.LazyInstanceNorm3d", rtol=1e-4, atol=1e-5)
def _(lib):
    nn = lib.nn
    lib.manual_seed(0)   # (the lazy layers draw their weights at the first call, as PyTorch's)
    image = nn.Sequential(nn.LazyConv2d(4, 3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
                          nn.LazyConvTranspose2d(2, 2, stride=2, groups=2),
                          nn.LazyInstanceNorm2d())
    before = repr(image)
    opt = lib.optim.SGD(image.parameters(), lr=0.1)
    x = lib.tensor(np.linspace(-1, 1, 300).reshape(2, 6, 5, 5).astype(np.float32))
    y = image(x)
    y.square().mean().backward()
    opt.step()
    seq = nn.Sequential(nn.LazyConv1d(3, 2, bias=False), nn.LazyBatchNorm1d(momentum=None),
                        nn.LazyConvTranspose1d(2, 3), nn.LazyInstanceNorm1d(affine=False))
    vol = nn.Sequential(nn.LazyConv3d(2, 1), nn.LazyBatchNorm3d(), nn.LazyConvTranspose3d(1, 2),
                        nn.LazyInstanceNorm3d())
    out = [seq(x[:, :, 0]), nn.LazyConv1d(3, 2)(x[0, :, 0]), vol(x[:, :3, None, :2]), image(x)]
    return (before, repr(image), [type(m).__name__ for m in (*image, *seq, *vol)], y,
            image[0].weight, image[3].weight, image[1].running_var, sorted(image.state_dict()),
            out)


@add
@case("nn.LazyConv2d", compare="raises", match="in_channels must be divisible by groups")
def _(lib):
    lib.nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5))


@add
@case("nn.LazyConv1d", compare="raises", match=r"Expected 2D \(unbatched\) or 3D \(batched\)")
def _(lib):
    lib.nn.LazyConv1d(4, 3)(lib.ones(5))
