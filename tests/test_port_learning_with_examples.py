"""Port test: the tutorial "Learning PyTorch with Examples", its programs in order, fitting a
third-order polynomial to sin(x) on [-pi, pi]: tensors with gradients written by hand
(`torch.linspace`, `torch.randn(())`, `.pow(2).sum().item()`, `clone()`, `t()`), autograd
(`requires_grad=True` scalars updated under `torch.no_grad()` and zeroed with `grad = None`),
a custom `torch.autograd.Function` (the Legendre polynomial P3 with `ctx.save_for_backward`
and `ctx.saved_tensors`, called through `.apply`), `nn.Sequential` of `Linear(3, 1)` and
`Flatten(0, 1)` on `x.unsqueeze(-1).pow(p)`, `nn.MSELoss(reduction='sum')` with the manual
`param -= lr * param.grad` update and `model.zero_grad()`, `optim.RMSprop`, a custom
`nn.Module` of four `nn.Parameter(torch.randn(()))` with a `string()` method, and the
dynamic net that reuses one weight a random number of times (weight sharing, Python control
flow) trained with SGD + momentum. Run by PyTorch and by minigrad (passed in as `torch`) from
the same weights; the tutorial's step counts and learning rates are cut so that it is fast."""
import math
import random

import numpy as np

from port_runner import assert_curves_match, run_both


def learning_with_examples_program(torch, init=None, steps=150):
    nn = torch.nn
    dtype = torch.float
    device = torch.device("cpu")
    out = {"init": {}, "losses": {}}

    def scalar(name):
        """The tutorial's `torch.randn((), ...)`, drawn by PyTorch and loaded by minigrad."""
        if init is None:
            value = torch.randn((), device=device, dtype=dtype)
        else:
            value = torch.tensor(init[name], device=device, dtype=dtype)
        out["init"][name] = value.item()
        return value

    torch.manual_seed(0)
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)

    # --- tensors: forward and backward written by hand ---------------------------------
    a, b, c, d = (scalar(f"manual_{k}") for k in "abcd")
    learning_rate = 1e-6
    losses = []
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum().item()
        losses.append(loss)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_a = grad_y_pred.sum()
        grad_b = (grad_y_pred * x).sum()
        grad_c = (grad_y_pred * x ** 2).sum()
        grad_d = (grad_y_pred * x ** 3).sum()
        a -= learning_rate * grad_a
        b -= learning_rate * grad_b
        c -= learning_rate * grad_c
        d -= learning_rate * grad_d
    out["losses"]["manual"] = losses
    out["manual"] = f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3"

    # --- autograd ------------------------------------------------------------------------
    a, b, c, d = (scalar(f"autograd_{k}").requires_grad_() for k in "abcd")
    losses = []
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    out["losses"]["autograd"] = losses
    out["autograd_leaf"] = (a.is_leaf, a.requires_grad, a.grad_fn is None)

    # --- a new autograd Function ---------------------------------------------------------
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
    learning_rate = 5e-6
    losses = []
    for t in range(steps):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    out["losses"]["legendre"] = losses
    # graph nodes are named without PyTorch's version digit (compat_notes), so only their presence
    out["legendre_grad_fn"] = (y_pred.grad_fn is not None, y_pred.detach().grad_fn is None)

    # --- nn --------------------------------------------------------------------------------
    p = torch.tensor([1, 2, 3])
    xx = x.unsqueeze(-1).pow(p)
    out["xx"] = (tuple(xx.shape), xx.dtype == torch.float32, p.dtype == torch.int64)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init["nn"].items()})
    out["init"]["nn"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    loss_fn = torch.nn.MSELoss(reduction="sum")
    learning_rate = 1e-6
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= learning_rate * param.grad
    linear_layer = model[0]
    out["losses"]["nn"] = losses
    out["nn"] = (f"Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} "
                 f"x + {linear_layer.weight[:, 1].item()} x^2 + "
                 f"{linear_layer.weight[:, 2].item()} x^3")

    # --- optim -------------------------------------------------------------------------------
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
    if init is not None:
        model.load_state_dict({k: torch.from_numpy(v) for k, v in init["optim"].items()})
    out["init"]["optim"] = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    loss_fn = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    losses = []
    for t in range(steps):
        y_pred = model(xx)
        loss = loss_fn(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    out["losses"]["optim"] = losses

    # --- a custom nn.Module ----------------------------------------------------------------
    class Polynomial3(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(scalar("module_a"))
            self.b = torch.nn.Parameter(scalar("module_b"))
            self.c = torch.nn.Parameter(scalar("module_c"))
            self.d = torch.nn.Parameter(scalar("module_d"))

        def forward(self, x):
            return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

        def string(self):
            return (f"y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 "
                    f"+ {self.d.item()} x^3")

    model = Polynomial3()
    out["module_names"] = [name for name, _ in model.named_parameters()]
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    out["losses"]["module"] = losses
    out["module"] = f"Result: {model.string()}"

    # --- control flow and weight sharing -------------------------------------------------
    class DynamicNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Parameter(scalar("dynamic_a"))
            self.b = torch.nn.Parameter(scalar("dynamic_b"))
            self.c = torch.nn.Parameter(scalar("dynamic_c"))
            self.d = torch.nn.Parameter(scalar("dynamic_d"))
            self.e = torch.nn.Parameter(scalar("dynamic_e"))

        def forward(self, x):
            y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
            for exp in range(4, random.randint(4, 6)):
                y = y + self.e * x ** exp
            return y

    random.seed(0)  # the program's own Python stream: the same powers in both runs
    model = DynamicNet()
    criterion = torch.nn.MSELoss(reduction="sum")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
    losses = []
    for t in range(steps):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        losses.append(loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    out["losses"]["dynamic"] = losses
    out["dynamic_e"] = (model.e.item(), model.e.grad is None)
    return out


def test_learning_with_examples_fits_the_same_in_both(torch):
    expected, got = run_both(learning_with_examples_program, torch)
    for name, want in expected["losses"].items():
        assert_curves_match(name, want, got["losses"][name], rtol=2e-4, every=30)
        assert want[-1] < 0.5 * want[0], name  # every program learns
    for key in ("autograd_leaf", "legendre_grad_fn", "xx", "module_names"):
        assert got[key] == expected[key], key
    assert got["dynamic_e"][1] == expected["dynamic_e"][1]
    np.testing.assert_allclose(got["dynamic_e"][0], expected["dynamic_e"][0], rtol=1e-4)
    for key in ("manual", "nn", "module"):
        want = [float(w) for w in expected[key].replace("x^", "").split() if _is_number(w)]
        have = [float(w) for w in got[key].replace("x^", "").split() if _is_number(w)]
        np.testing.assert_allclose(have, want, rtol=1e-4, atol=1e-6, err_msg=key)


def _is_number(word):
    try:
        float(word)
    except ValueError:
        return False
    return True
