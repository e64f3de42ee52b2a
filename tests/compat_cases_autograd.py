"""Compatibility cases: the engine's second part (autograd.grad and backward with inputs= and
create_graph=, gradients of gradients, autograd.functional, forward mode). The runner also
backpropagates through what each program returns, so a gradient returned with
create_graph=True has its own gradient (a second derivative) compared too."""
import warnings

import numpy as np

from compat_table import A, case, f64

CASES = []
add = CASES.append


@add
@case("autograd.grad", inputs=(f64(2, 3), f64(3)))
def _(lib, a, b):
    h = (a * b).tanh()
    ga, gb = lib.autograd.grad([h.sum(), (h * h).exp()], [a, b],
                               [None, lib.ones(2, 3, dtype=lib.float64)], create_graph=True)
    gu = lib.autograd.grad((a * 2).sum(), [a, b], allow_unused=True)[1]
    gm = lib.autograd.grad((a * 2).sum(), [a, b], materialize_grads=True)[1]
    batched = lib.autograd.grad(h, b, lib.eye(2, dtype=lib.float64)[:, :, None].expand(2, 2, 3),
                                retain_graph=True, is_grads_batched=True)[0]
    return ga, gb, gu is None, gm, batched, a.grad is None


@add
@case("autograd.grad", compare="raises", match="appears to not have been used",
      inputs=(f64(3), f64(3)))
def _(lib, a, b):
    return lib.autograd.grad((a * 2).sum(), [a, b])


@add
@case("autograd.grad", compare="raises", match="only for scalar outputs", inputs=(f64(3),))
def _(lib, a):
    return lib.autograd.grad(a * 2, a)


@add
@case("autograd.backward", "Tensor.backward", inputs=(f64(2, 3), f64(3)))
def _(lib, a, b):
    w = a.detach().requires_grad_(True)
    loss = (w * w * b).sum()
    loss.backward(create_graph=True)  # w.grad = 2 w b, recorded
    penalty = (w.grad ** 2).sum()
    h = w * b
    lib.autograd.backward([(h * h).sum()], inputs=[b])  # only b's .grad changes
    return penalty, w.grad.detach().clone(), b.grad.detach().clone()


@add
@case("autograd.gradgradcheck", inputs=(f64(2, 3, grad=False),))
def _(lib, a):
    x = a.detach().requires_grad_(True)
    return lib.autograd.gradgradcheck(lambda t: (t.softmax(-1) * t).sin(), (x,))


@add
@case("autograd.functional.jacobian", "autograd.functional.hessian",
      inputs=(f64(2, 3, grad=False), f64(3, grad=False)))
def _(lib, a, b):
    F = lib.autograd.functional
    return (F.jacobian(lambda x, y: ((x * y).exp(), x @ y), (a, b)),
            F.jacobian(lambda x: x.tanh(), b, vectorize=True, strategy="forward-mode"),
            F.hessian(lambda x: (x.softmax(-1) * x).sum(), a))


@add
@case("autograd.functional.vjp", "autograd.functional.jvp", "autograd.functional.hvp",
      "autograd.functional.vhp", inputs=(f64(2, 3, grad=False), f64(2, 3, grad=False)))
def _(lib, a, v):
    F = lib.autograd.functional
    f = (lambda x: (x.sigmoid() * x).log_softmax(-1))
    s = (lambda x: (x.tanh() ** 2).sum())
    return F.vjp(f, a, v), F.jvp(f, a, v), F.hvp(s, a, v), F.vhp(s, a, v, strict=True)


# fixed values: a draw from compat_table's shared generator would shift later cases' inputs
@add
@case("Tensor.output_nr", inputs=(A(np.array([0.5, -1.0, 2.0]), grad=True),))
def _(lib, a):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x.exp()

        @staticmethod
        def backward(ctx, g, h):
            return g * 2 + h

    u, v = Two.apply(a)
    return (u.output_nr, v.output_nr, a.output_nr, (a * 2).output_nr, u.grad_fn is v.grad_fn,
            [f[1] for f in (u * v).grad_fn.next_functions], u + v)


@add
@case("autograd.forward_ad.dual_level", "autograd.forward_ad.make_dual",
      "autograd.forward_ad.unpack_dual", inputs=(f64(2, 3, grad=False), f64(3, 4, grad=False)))
def _(lib, a, w):
    fw = lib.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(a, lib.ones(2, 3, dtype=lib.float64))
        y = lib.nn.functional.layer_norm((x @ w).softmax(-1) * x.sum(), (4,))
        primal, tangent = fw.unpack_dual(y)
        plain = fw.unpack_dual(a).tangent is None
    return primal, tangent, plain, np.float64(0).item()


@add
@case("autograd.forward_ad.enter_dual_level", "autograd.forward_ad.exit_dual_level",
      "autograd.forward_ad.UnpackedDualTensor", inputs=(f64(3, grad=False),))
def _(lib, a):
    fw = lib.autograd.forward_ad
    fw.enter_dual_level()
    try:
        out = fw.unpack_dual(fw.make_dual(a, a * 2).sin())
    finally:
        fw.exit_dual_level()
    return out.primal, out.tangent, isinstance(out, fw.UnpackedDualTensor)


@add
@case("autograd.set_detect_anomaly", "autograd.detect_anomaly", "minigrad.is_anomaly_enabled",
      "minigrad.is_anomaly_check_nan_enabled", inputs=(A(np.array([-1.0, 4.0])),))
def _(lib, a):
    """The function form switches at once and restores the previous mode as a context manager;
    `check_nan=False` keeps anomaly mode on but lets a NaN gradient through."""
    modes = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
    switch = lib.autograd.set_detect_anomaly(True)
    modes.append(lib.is_anomaly_enabled())
    with switch:
        pass
    modes.append(lib.is_anomaly_enabled())
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that anomaly mode slows it down
        with lib.autograd.detect_anomaly(check_nan=False):
            modes.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            x = a.clone().requires_grad_()
            x.sqrt().sum().backward()
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            modes.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    lib.autograd.set_detect_anomaly(False)
    modes.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
    return tuple(modes), x.grad.isnan()


@add
@case("autograd.Variable", inputs=(A(np.array([0.5, -1.5, 2.0], np.float32)),))
def _(lib, a):
    """Older scripts' `Variable(x)`: a leaf sharing x's memory; every tensor is a Variable."""
    Variable = lib.autograd.Variable
    v, w = Variable(a), Variable(a * 2, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    v[0] = 7.0  # the same memory as a
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Variable(a, volatile=True)
    return (a, w.grad, v.requires_grad, w.is_leaf, isinstance(a, Variable),
            isinstance(1.0, Variable), str(caught[0].message), Variable().shape)


@add
@case("autograd.Variable", compare="raises", match="Variable data has to be a tensor")
def _(lib):
    return lib.autograd.Variable([1.0, 2.0])
