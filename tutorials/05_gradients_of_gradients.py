# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 5. Gradients of gradients, and forward mode
#
# The engine tutorials built reverse mode: one backward pass turns a scalar loss into its
# gradient with respect to every parameter. This tutorial asks what else the same machinery can
# do once the backward pass is itself recorded as a graph:
#
# 1. the gradient of a gradient, first by hand on one scalar function, then with
#    `minigrad.autograd.grad(..., create_graph=True)` twice;
# 2. second derivatives of a small network: the full Hessian against a Hessian-vector product,
#    and what each costs;
# 3. a real use: a gradient penalty, trained for a few steps, and its effect;
# 4. forward mode (dual numbers) against reverse mode, on a function with one input and many
#    outputs and on one with many inputs and one output, with their costs counted and timed.
#
# Every derivative below is checked as it runs against a hand formula or finite differences,
# and the test suite recomputes the key ones with PyTorch (`tests/test_tutorial_second_order.py`).
# The timings are measured on the machine that runs the page, so their exact values vary.

# %%
import math
import time

from _common import SMALL, savefig

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad import nn
from minigrad.autograd import forward_ad as fwAD
from minigrad.autograd import functional, grad, gradcheck

# %% [markdown]
# ## 1. The gradient of a gradient, by hand
#
# Take $f(x) = x^3 \tanh x$. Write $t = \tanh x$ and $s = 1 - t^2$ (the derivative of
# $\tanh$). The product rule, applied once and then again, gives
#
# $$f'(x) = 3x^2 t + x^3 s, \qquad
#   f''(x) = 6x\,t + 3x^2 s + \big(3x^2 s + x^3 \cdot (-2 t s)\big)
#          = 6x\,t + 6x^2 s - 2x^3 t s ,$$
#
# using $s' = -2 t s$. At $x = 1$: $t \approx 0.7616$, $s \approx 0.4200$, so
# $f(1) \approx 0.7616$, $f'(1) \approx 2.7048$ and $f''(1) \approx 6.4497$.

# %%
def f_hand(x):
    return x ** 3 * math.tanh(x)


def df_hand(x):
    t = math.tanh(x)
    return 3 * x ** 2 * t + x ** 3 * (1 - t * t)


def d2f_hand(x):
    t = math.tanh(x)
    s = 1 - t * t
    return 6 * x * t + 6 * x ** 2 * s - 2 * x ** 3 * t * s


X0 = 1.0
print(f"f(1) = {f_hand(X0):.4f}, f'(1) = {df_hand(X0):.4f}, f''(1) = {d2f_hand(X0):.4f}")
assert round(f_hand(X0), 4) == 0.7616 and round(df_hand(X0), 4) == 2.7048
assert round(d2f_hand(X0), 4) == 6.4497
# the second derivative is the slope of the first: central differences of the hand-written f'
eps = 1e-5
assert abs((df_hand(X0 + eps) - df_hand(X0 - eps)) / (2 * eps) - d2f_hand(X0)) < 1e-8

# %% [markdown]
# ## ... and with `create_graph=True`
#
# `grad(outputs, inputs)` returns the gradient instead of adding it into `.grad`. By default
# the backward pass that computes it is not recorded: the result is a plain number with no
# history, so it cannot be differentiated again. With `create_graph=True` every step of the
# backward pass is itself an op on tensors, recorded like any forward computation; the
# gradient then has a `grad_fn` and a second `grad` differentiates it.

# %%
x = mg.tensor(X0, dtype=mg.float64, requires_grad=True)
f = x ** 3 * x.tanh()
(d1,) = grad(f, x, create_graph=True)     # f'(x), itself a node of a graph
(d2,) = grad(d1, x)                        # the gradient of the gradient: f''(x)
print(f"autograd: f = {f.item():.6f}, f' = {d1.item():.6f} (grad_fn {d1.grad_fn.name()}), "
      f"f'' = {d2.item():.6f}")
f0, df0, d2f0 = f.item(), d1.item(), d2.item()
assert math.isclose(f0, f_hand(X0), rel_tol=1e-12)
assert math.isclose(df0, df_hand(X0), rel_tol=1e-12)
assert math.isclose(d2f0, d2f_hand(X0), rel_tol=1e-12)

# %% [markdown]
# Without `create_graph` the first gradient has no history, and asking for its gradient fails
# with PyTorch's message:

# %%
(plain,) = grad(x ** 3 * x.tanh(), x)
assert not plain.requires_grad and plain.grad_fn is None
try:
    grad(plain, x)
    raise AssertionError("a gradient without history cannot be differentiated")
except RuntimeError as e:
    print("RuntimeError:", e)
    assert "does not require grad" in str(e)

# %% [markdown]
# The same on a whole grid of points at once. Because $f$ acts on each element separately,
# its Jacobian is diagonal, so the gradient of $\sum_i f(x_i)$ is the vector of the $f'(x_i)$,
# and the gradient of $\sum_i f'(x_i)$ is the vector of the $f''(x_i)$: two backward passes
# give both curves.

# %%
xs = np.linspace(-2.5, 2.5, 51 if SMALL else 201)
xg = mg.tensor(xs, requires_grad=True)
(d1_grid,) = grad((xg ** 3 * xg.tanh()).sum(), xg, create_graph=True)
(d2_grid,) = grad(d1_grid.sum(), xg)
d1_grid, d2_grid = d1_grid.detach().numpy(), d2_grid.numpy()
assert np.allclose(d1_grid, [df_hand(v) for v in xs], rtol=1e-12, atol=1e-12)
assert np.allclose(d2_grid, [d2f_hand(v) for v in xs], rtol=1e-12, atol=1e-12)

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(xs, [f_hand(v) for v in xs], label="f(x) = x^3 tanh x")
ax.plot(xs, d1_grid, label="f'(x), one grad")
ax.plot(xs, d2_grid, label="f''(x), grad of the grad")
ax.plot([X0], [d2f0], "ko")
ax.axhline(0, color="grey", lw=0.5)
ax.set_xlabel("x")
ax.set_title("A function and its first two derivatives, from autograd")
ax.legend()
savefig(fig, "05_second_derivative")

# %% [markdown]
# ## 2. Second derivatives of a network: Hessian or Hessian-vector product?
#
# A small MLP, $4 \to w \to 1$ with $\tanh$, fits 16 random points with a squared error. To
# talk about "the" Hessian we treat all its parameters as one flat vector $\theta$ of
# $n = 6w + 1$ numbers, and write the loss as a function of $\theta$ alone.

# %%
rng = np.random.default_rng(0)
X_data = rng.standard_normal((16, 4))
Y_data = rng.standard_normal((16, 1))
X_t, Y_t = mg.tensor(X_data), mg.tensor(Y_data)


def mlp_loss(width):
    """The loss of a 4 -> width -> 1 tanh MLP as a function of its flat parameter vector."""
    shapes = [(width, 4), (width,), (1, width), (1,)]
    sizes = [int(np.prod(s)) for s in shapes]

    def loss(theta):
        parts, i = [], 0
        for shape, size in zip(shapes, sizes):
            parts.append(theta[i:i + size].reshape(shape))
            i += size
        W1, b1, W2, b2 = parts
        h = (X_t @ W1.T + b1).tanh()
        return ((h @ W2.T + b2 - Y_t) ** 2).mean()

    return loss, sum(sizes)


WIDTH = 4 if SMALL else 8
loss, n = mlp_loss(WIDTH)
theta0 = rng.standard_normal(n) * 0.5
v_np = rng.standard_normal(n)
theta, v = mg.tensor(theta0), mg.tensor(v_np)
print(f"width {WIDTH}: n = {n} parameters, loss {loss(theta).item():.4f}")
assert n == 6 * WIDTH + 1

# %% [markdown]
# `functional.hessian(loss, theta)` returns the $n \times n$ matrix
# $H_{ij} = \partial^2 L / \partial\theta_i \partial\theta_j$. It is the Jacobian of the
# gradient: one backward pass with `create_graph=True` makes the gradient $g(\theta)$ as a
# graph, then one more backward pass through that graph per row of $H$, $n$ of them.
#
# `functional.hvp(loss, theta, v)` returns only the product $Hv$, with the "double
# backward" trick: $Hv = \nabla_\theta\,(g(\theta) \cdot v)$ because $v$ is a constant. That
# is one backward pass to build $g$, a dot product, and one backward pass through it, whatever
# $n$ is.
#
# Three checks: $H$ is symmetric (second derivatives commute), the product agrees with $H$
# times $v$, and it agrees with central differences of the gradient along $v$,
# $Hv \approx \big(g(\theta + \varepsilon v) - g(\theta - \varepsilon v)\big) / 2\varepsilon$.

# %%
H_np = functional.hessian(loss, theta).numpy()
_, Hv = functional.hvp(loss, theta, v)
Hv_np = Hv.numpy()
assert H_np.shape == (n, n)
assert np.abs(H_np - H_np.T).max() < 1e-12
assert np.allclose(H_np @ v_np, Hv_np, rtol=1e-10, atol=1e-12)


def gradient_at(th):
    t = mg.tensor(th, requires_grad=True)
    return grad(loss(t), t)[0].numpy()


eps = 1e-6
fd = (gradient_at(theta0 + eps * v_np) - gradient_at(theta0 - eps * v_np)) / (2 * eps)
print(f"|Hv - finite differences| = {np.abs(fd - Hv_np).max():.2e} (|Hv| up to "
      f"{np.abs(Hv_np).max():.2f})")
assert np.allclose(fd, Hv_np, rtol=1e-6, atol=1e-8)

# %% [markdown]
# ### What each costs
#
# The full Hessian takes $n$ backward passes (plus the one that builds $g$) and stores $n^2$
# numbers; an $Hv$ takes two passes and stores $n$. Since a pass itself costs time in
# proportion to the network's size, building $H$ costs about $n$ times an $Hv$: for a model of
# a million parameters that is a million times, and $10^{12}$ numbers to store. We time both
# for growing widths (best of a few runs; the machine is shared).

# %%
def size_axis(ax, ticks):
    """A logarithmic x axis labelled with the sizes measured, and nothing else."""
    ax.set_xscale("log")
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.minorticks_off()


def best_time(fn, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


widths = [2, 4, 8] if SMALL else [2, 4, 8, 16, 32]
sizes, t_hessian, t_hvp = [], [], []
for w_ in widths:
    loss_w, n_w = mlp_loss(w_)
    th_w = mg.tensor(np.random.default_rng(w_).standard_normal(n_w) * 0.5)
    v_w = mg.tensor(np.ones(n_w))
    sizes.append(n_w)
    t_hessian.append(best_time(lambda: functional.hessian(loss_w, th_w)))
    t_hvp.append(best_time(lambda: functional.hvp(loss_w, th_w, v_w)))
    print(f"n = {n_w:4d}: hessian {t_hessian[-1] * 1e3:8.1f} ms, hvp {t_hvp[-1] * 1e3:6.2f} ms, "
          f"ratio {t_hessian[-1] / t_hvp[-1]:6.1f}")
ratio = t_hessian[-1] / t_hvp[-1]
# n + 1 passes against 2: the measured ratio grows with n (a loose bound, for a shared machine)
assert ratio > sizes[-1] / 10, ratio
assert t_hessian[-1] / t_hvp[-1] > t_hessian[0] / t_hvp[0]

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
im = ax1.imshow(H_np, cmap="RdBu_r", vmin=-np.abs(H_np).max(), vmax=np.abs(H_np).max())
fig.colorbar(im, ax=ax1)
ax1.set_title(f"Hessian of the loss, n = {n} parameters")
ax2.loglog(sizes, t_hessian, "o-", label="functional.hessian (n + 1 backward passes)")
ax2.loglog(sizes, t_hvp, "s-", label="functional.hvp (2 backward passes)")
size_axis(ax2, sizes)
ax2.set_xlabel("number of parameters n")
ax2.set_ylabel("seconds (best of 3)")
ax2.set_title("Full Hessian against one Hessian-vector product")
ax2.legend()
savefig(fig, "05_hessian_vs_hvp")

# %% [markdown]
# ### Using $Hv$ without ever forming $H$
#
# Much of what one wants from a Hessian needs only products with it. Its largest eigenvalue
# (the sharpest curvature of the loss, which bounds the stable learning rate of gradient
# descent at $2/\lambda_{\max}$) comes out of power iteration: multiply a vector by $H$ again
# and again, normalising each time. Each step is one `hvp`; $H$ itself is never built.

# %%
u = np.random.default_rng(1).standard_normal(n)
for _ in range(100):
    u = functional.hvp(loss, theta, mg.tensor(u / np.linalg.norm(u)))[1].numpy()
u /= np.linalg.norm(u)
lam_power = float(u @ functional.hvp(loss, theta, mg.tensor(u))[1].numpy())  # Rayleigh quotient
eigenvalues = np.linalg.eigvalsh(H_np)
lam_max = eigenvalues[np.abs(eigenvalues).argmax()]
print(f"power iteration: {lam_power:.6f}; eigenvalues of the full H: {lam_max:.6f} "
      f"(next {sorted(np.abs(eigenvalues))[-2]:.4f})")
assert math.isclose(lam_power, lam_max, rel_tol=1e-6)

# %% [markdown]
# ## 3. A real use: a gradient penalty
#
# A model whose output changes fast when its input moves a little is fragile: it fits noise
# and can be fooled by tiny perturbations. One cure, "double backpropagation" (Drucker and
# LeCun, 1992), adds the squared gradient of the output with respect to the input to the
# loss:
#
# $$L = \frac1N \sum_i \big(f(x_i) - y_i\big)^2 + \lambda \, \frac1K \sum_k
#       \Big(\frac{\partial f}{\partial x}(p_k)\Big)^2 ,$$
#
# where the points $p_k$ at which the slope is penalised are drawn afresh at every step,
# uniformly over the input range. (The WGAN-GP penalty of generative adversarial networks,
# $\lambda (\lVert \nabla_x D(p) \rVert - 1)^2$, is the same computation with another function of
# the same gradient, at random points between real and generated samples.)
#
# Training needs $\partial L / \partial \theta$, and the penalty term is already a gradient:
# so the step needs the gradient of a gradient, `create_graph=True`.
#
# Each output depends on its own input only, so the gradient of $\sum_k f(p_k)$ with respect
# to the batch of points holds every $\partial f / \partial x (p_k)$, as on the grid above.

# %%
def input_gradients(model, x):
    """d model(x_k) / d x_k for every row of x (K, 1), as a graph that can be differentiated."""
    x = x.detach().requires_grad_(True)
    (gx,) = grad(model(x).sum(), x, create_graph=True)
    return gx


def penalised_loss(model, x, y, lam, points):
    """The squared error on (x, y) plus lam times the mean squared slope at `points`."""
    fit = ((model(x) - y) ** 2).mean()
    if lam == 0:
        return fit
    return fit + lam * (input_gradients(model, points) ** 2).mean()


# %% [markdown]
# First, is the gradient of this loss right? `gradcheck` perturbs the parameters of a tiny
# one-hidden-layer model in float64 and compares the loss's central differences with the
# backward pass, which here runs through the recorded first backward pass.

# %%
x_check = mg.tensor(np.linspace(-1, 1, 5).reshape(5, 1))
y_check = mg.tensor(np.sin(np.linspace(-1, 1, 5)).reshape(5, 1))


def tiny_penalised(W1, b1, W2):
    # gradcheck computes its finite differences under no_grad, but the penalty itself is a
    # gradient and needs a graph to take it from
    with mg.enable_grad():
        xc = x_check.detach().requires_grad_(True)
        out = (xc @ W1.T + b1).tanh() @ W2.T
        (gx,) = grad(out.sum(), xc, create_graph=True)
        return ((out - y_check) ** 2).mean() + 0.5 * (gx ** 2).mean()


params = [mg.tensor(np.random.default_rng(2).standard_normal(s), requires_grad=True)
          for s in [(3, 1), (3,), (1, 3)]]
assert gradcheck(tiny_penalised, params)
print("gradcheck passed: the penalty's parameter gradient matches central differences")

# %% [markdown]
# Now the experiment: noisy samples of a straight line, $y = x/2 + $ noise, fitted by an MLP
# $1 \to 32 \to 32 \to 1$ that is big enough to chase the noise. Three copies start from the
# same weights and train with Adam for the same number of steps: one without the penalty, one
# with the penalty ($\lambda = 0.1$) at 32 random points per step, and one with the penalty
# only at the training points themselves, to see why the points are random.

# %%
N_TRAIN, LAMBDA, LR, N_POINTS = 16, 0.1, 0.01, 32
STEPS = 60 if SMALL else 600
data_rng = np.random.default_rng(3)
x_train = np.linspace(-1, 1, N_TRAIN).reshape(-1, 1)
y_train = 0.5 * x_train + 0.3 * data_rng.standard_normal(x_train.shape)
xt, yt = mg.tensor(x_train), mg.tensor(y_train)


def make_mlp():
    mg.manual_seed(0)
    return nn.Sequential(nn.Linear(1, 32, dtype=mg.float64), nn.Tanh(),
                         nn.Linear(32, 32, dtype=mg.float64), nn.Tanh(),
                         nn.Linear(32, 1, dtype=mg.float64))


init_state = [p.detach().numpy().copy() for p in make_mlp().parameters()]


def train(lam, at="random"):
    """Adam on the penalised loss, the penalty `at` random points or at the training points.
    Returns the model, the loss of every step and the median time of a step."""
    model = make_mlp()
    opt = mg.optim.Adam(model.parameters(), lr=LR)
    points_rng = np.random.default_rng(7)
    history, times = [], []
    for _ in range(STEPS):
        points = mg.tensor(points_rng.uniform(-1, 1, (N_POINTS, 1))) if at == "random" else xt
        start = time.perf_counter()
        opt.zero_grad()
        total = penalised_loss(model, xt, yt, lam, points)
        total.backward()
        opt.step()
        times.append(time.perf_counter() - start)
        history.append(total.item())
    return model, history, float(np.median(times))


plain_model, history_plain, step_plain = train(0.0)
pen_model, history_pen, step_pen = train(LAMBDA)
at_data_model, _, _ = train(LAMBDA, at="data")
print(f"median step: {step_plain * 1e3:.2f} ms plain, {step_pen * 1e3:.2f} ms with the penalty "
      f"({step_pen / step_plain:.1f} times: a forward, a recorded backward, then a backward "
      f"through both)")
assert step_pen > step_plain

# %% [markdown]
# The effect, measured on a fine grid of 101 points: the penalised model's slope is smaller
# on average, at the price of a larger error on the (noisy) training points. How much smaller
# depends on how long the models trained. After the full 600 steps the model without the
# penalty chases the noise: its mean squared slope was about 19 (the noise-free line has
# 0.25) for a training error of 0.023, while the penalty at random points kept it at 0.25, the
# noise-free line's, for a training error of 0.13. Penalising the slope only at the training
# points did little (a mean squared slope of about 18): the network is free to be flat at each
# training point and steep between them. In small mode (60 steps) no model has had time to
# chase the noise, so the three differ far less; the cell prints what this run gave.

# %%
x_grid = mg.tensor(np.linspace(-1, 1, 101).reshape(-1, 1))


def summary(model):
    slope2 = float((input_gradients(model, x_grid).detach().numpy() ** 2).mean())
    with mg.no_grad():
        mse = float(((model(xt) - yt) ** 2).mean().item())
    return slope2, mse


slope2_plain, mse_plain = summary(plain_model)
slope2_pen, mse_pen = summary(pen_model)
slope2_at_data, mse_at_data = summary(at_data_model)
print(f"without penalty:             mean (df/dx)^2 = {slope2_plain:7.3f}, "
      f"training MSE = {mse_plain:.4f}")
print(f"penalty at random points:    mean (df/dx)^2 = {slope2_pen:7.3f}, "
      f"training MSE = {mse_pen:.4f}")
print(f"penalty at training points:  mean (df/dx)^2 = {slope2_at_data:7.3f}, "
      f"training MSE = {mse_at_data:.4f}")
print("(the noise-free line y = x / 2 has (df/dx)^2 = 0.25 everywhere)")
assert slope2_pen < slope2_plain and mse_pen > mse_plain
if not SMALL:  # after a real training run the plain model chases the noise
    assert slope2_plain > 10 * slope2_pen and slope2_at_data > 10 * slope2_pen

with mg.no_grad():
    fit_plain = plain_model(x_grid).numpy().ravel()
    fit_pen = pen_model(x_grid).numpy().ravel()
xg_np = x_grid.numpy().ravel()
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
ax1.plot(x_train.ravel(), y_train.ravel(), "ko", label="training points")
ax1.plot(xg_np, fit_plain, label="no penalty")
ax1.plot(xg_np, fit_pen, label=f"gradient penalty, lambda = {LAMBDA}")
ax1.plot(xg_np, 0.5 * xg_np, "k:", label="y = x / 2 (noise-free)")
ax1.set_title(f"Fits after {STEPS} Adam steps")
ax1.legend(fontsize=8)
ax2.plot(xg_np, input_gradients(plain_model, x_grid).detach().numpy().ravel(),
         label="no penalty")
ax2.plot(xg_np, input_gradients(pen_model, x_grid).detach().numpy().ravel(),
         label="penalty at random points")
ax2.plot(xg_np, input_gradients(at_data_model, x_grid).detach().numpy().ravel(), ":",
         label="penalty at the training points")
ax2.set_title("df/dx along the input")
ax2.legend(fontsize=8)
savefig(fig, "05_gradient_penalty")

# %% [markdown]
# ## 4. Forward mode against reverse mode
#
# The Jacobian of $F: \mathbb{R}^n \to \mathbb{R}^m$ is an $m \times n$ matrix. Reverse mode
# computes it a **row** at a time: one backward pass gives $u^\top J$ for one vector $u$, so
# $m$ passes give all rows. Forward mode computes it a **column** at a time: each input carries
# a tangent next to its value (a dual number $a + b\varepsilon$ with $\varepsilon^2 = 0$),
# every op also computes the tangent of its output, and one forward pass gives $J t$ for one
# tangent $t$; $n$ passes give all columns.
#
# `minigrad.autograd.forward_ad` is PyTorch's interface for this: inside a `dual_level()`,
# `make_dual(x, t)` attaches a tangent and `unpack_dual(y)` reads $y$'s value and tangent.
# Here are both ways of building a Jacobian, each counting its passes (forward-mode passes by
# the calls of $F$; backward passes by a hook that fires when a gradient reaches the input).

# %%
def unit(n_, k, like):
    e = np.zeros(n_)
    e[k] = 1.0
    return mg.tensor(e.reshape(like.shape))


def jacobian_reverse(F, x):
    """All rows of J: one forward pass, then one backward pass per output. Returns (J, passes)."""
    x = x.detach().requires_grad_(True)
    passes = [0]
    x.register_hook(lambda g: passes.__setitem__(0, passes[0] + 1))
    y = F(x)
    rows = [grad(y, x, unit(y.numel(), k, y), retain_graph=True)[0].numpy().ravel()
            for k in range(y.numel())]
    return np.stack(rows), passes[0]


def jacobian_forward(F, x):
    """All columns of J: one forward pass with a tangent per input. Returns (J, passes)."""
    x = x.detach()
    passes = [0]
    cols = []
    for k in range(x.numel()):
        with fwAD.dual_level():
            y = F(fwAD.make_dual(x, unit(x.numel(), k, x)))
            passes[0] += 1
            cols.append(fwAD.unpack_dual(y).tangent.numpy().ravel())
    return np.stack(cols, axis=1), passes[0]


# %% [markdown]
# Two functions at the extremes:
#
# - **one input, many outputs**: $F(t)_k = \sin(k t)/k$ for $k = 1, \dots, m$ (a signal
#   sampled at $m$ frequencies), with $J_k = \cos(k t)$: forward mode needs one pass, reverse
#   mode $m$;
# - **many inputs, one output**: $G(x) = \sum_i \log(1 + x_i^2)$, a loss, with
#   $\nabla G = 2x / (1 + x^2)$: reverse mode needs one pass, forward mode $n$.

# %%
def make_fan_out(m):
    k = mg.tensor(np.arange(1.0, m + 1))

    def fan_out(t):
        return (t * k).sin() / k

    return fan_out


def fan_in(x):
    return (1 + x ** 2).log().sum()


M_OUT = 64
fan_out = make_fan_out(M_OUT)
t0 = mg.tensor(np.array([0.7]))
J_out_f, passes_f = jacobian_forward(fan_out, t0)
J_out_r, passes_r = jacobian_reverse(fan_out, t0)
ks = np.arange(1, M_OUT + 1)
assert np.allclose(J_out_f.ravel(), np.cos(ks * 0.7), rtol=1e-12, atol=1e-12)
assert np.allclose(J_out_r, J_out_f, rtol=1e-12, atol=1e-12)
assert (passes_f, passes_r) == (1, M_OUT)

x_in = mg.tensor(np.random.default_rng(4).standard_normal(M_OUT))
J_in_f, passes_in_f = jacobian_forward(fan_in, x_in)
J_in_r, passes_in_r = jacobian_reverse(fan_in, x_in)
xv = x_in.numpy()
assert np.allclose(J_in_r.ravel(), 2 * xv / (1 + xv ** 2), rtol=1e-12, atol=1e-12)
assert np.allclose(J_in_f, J_in_r, rtol=1e-12, atol=1e-12)
assert (passes_in_f, passes_in_r) == (M_OUT, 1)
print(f"one input, {M_OUT} outputs: forward {passes_f} pass, reverse {passes_r} passes")
print(f"{M_OUT} inputs, one output: forward {passes_in_f} passes, reverse {passes_in_r} pass")

# %% [markdown]
# The library functions build the same matrices: `functional.jacobian` runs reverse mode by
# default and forward mode with `strategy="forward-mode", vectorize=True` (PyTorch's
# arguments).

# %%
J_lib_r = functional.jacobian(fan_out, t0).numpy()
J_lib_f = functional.jacobian(fan_in, x_in, strategy="forward-mode", vectorize=True).numpy()
assert np.allclose(J_lib_r.ravel(), J_out_f.ravel(), rtol=1e-12, atol=1e-12)
assert np.allclose(J_lib_f.ravel(), J_in_r.ravel(), rtol=1e-12, atol=1e-12)

# %% [markdown]
# ### Timing the two modes, and where they cross
#
# Counting passes predicts the cost; the clock confirms it. First the two extremes at growing
# size, then a function in between, $F(x) = \tanh(A x)$ with $n = 16$ inputs and a growing
# number $m$ of outputs: reverse mode needs $m$ passes, forward mode always 16, so reverse
# mode wins for few outputs, forward mode for many, and they cross near $m = n$. A forward-mode
# pass and a backward pass do not cost exactly the same (a forward-mode pass also runs the
# function and records its graph; a backward pass only walks a graph already built), so the
# crossing moves away from $m = n$ by the ratio of the two costs per pass,
# $m^* = n \, c_{\text{forward}} / c_{\text{backward}}$; the cell prints both costs and the
# crossing they predict.

# %%
def time_modes(F, x):
    return (best_time(lambda: jacobian_forward(F, x)),
            best_time(lambda: jacobian_reverse(F, x)))


sizes_modes = [2, 8, 32] if SMALL else [2, 8, 32, 128]
fan_out_times, fan_in_times = [], []
for size in sizes_modes:
    fan_out_times.append(time_modes(make_fan_out(size), t0))
    fan_in_times.append(time_modes(fan_in, mg.tensor(np.linspace(-1, 1, size))))
for size, (fo_f, fo_r), (fi_f, fi_r) in zip(sizes_modes, fan_out_times, fan_in_times):
    print(f"size {size:4d}: one input -> many: forward {fo_f * 1e3:7.2f} ms, reverse "
          f"{fo_r * 1e3:7.2f} ms | many -> one: forward {fi_f * 1e3:7.2f} ms, reverse "
          f"{fi_r * 1e3:7.2f} ms")
# at the largest size one mode does 1 pass and the other 32 or more: the 1-pass mode should
# win by far (the clock is read, not asserted: another program on the machine moves it)

N_IN = 16
A_rng = np.random.default_rng(5)
outputs_m = [2, 4, 8, 16, 32, 64] if not SMALL else [2, 16, 64]
x_cross = mg.tensor(A_rng.standard_normal(N_IN))
cross_forward, cross_reverse = [], []
for m_ in outputs_m:
    A = mg.tensor(A_rng.standard_normal((m_, N_IN)) / 4)

    def F_cross(x):
        return (A @ x).tanh()

    J_f, p_f = jacobian_forward(F_cross, x_cross)
    J_r, p_r = jacobian_reverse(F_cross, x_cross)
    assert np.allclose(J_f, J_r, rtol=1e-12, atol=1e-12) and (p_f, p_r) == (N_IN, m_)
    tf, tr = time_modes(F_cross, x_cross)
    cross_forward.append(tf)
    cross_reverse.append(tr)
    print(f"m = {m_:3d} outputs, n = {N_IN}: forward {p_f} passes {tf * 1e3:6.2f} ms, "
          f"reverse {p_r} passes {tr * 1e3:6.2f} ms")
# the first m (2 passes against 16) should favour reverse mode, the last (16 against 64)
# forward mode: the printed times show it on a quiet machine
# the cost of one pass of each kind, from the largest Jacobians, predicts where they cross
cost_forward = cross_forward[-1] / N_IN
cost_reverse = cross_reverse[-1] / outputs_m[-1]
print(f"one forward-mode pass {cost_forward * 1e6:.0f} us, one backward pass "
      f"{cost_reverse * 1e6:.0f} us: reverse mode is cheaper while m < n x "
      f"{cost_forward / cost_reverse:.2f} = {N_IN * cost_forward / cost_reverse:.0f} outputs")

fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
ax1.loglog(sizes_modes, [t[0] for t in fan_out_times], "o-", label="1 -> m, forward (1 pass)")
ax1.loglog(sizes_modes, [t[1] for t in fan_out_times], "o--", label="1 -> m, reverse (m passes)")
ax1.loglog(sizes_modes, [t[0] for t in fan_in_times], "s--", label="n -> 1, forward (n passes)")
ax1.loglog(sizes_modes, [t[1] for t in fan_in_times], "s-", label="n -> 1, reverse (1 pass)")
size_axis(ax1, sizes_modes)
ax1.set_xlabel("m outputs, or n inputs")
ax1.set_ylabel("seconds for the whole Jacobian")
ax1.set_title("Each mode is cheap on one side")
ax1.legend(fontsize=8)
ax2.loglog(outputs_m, cross_forward, "o-", label=f"forward: n = {N_IN} passes")
ax2.loglog(outputs_m, cross_reverse, "s-", label="reverse: m passes")
ax2.axvline(N_IN, color="grey", ls=":", label="m = n")
size_axis(ax2, outputs_m)
ax2.set_xlabel("m outputs")
ax2.set_title(f"tanh(A x), {N_IN} inputs: the crossover")
ax2.legend(fontsize=8)
savefig(fig, "05_forward_vs_reverse")

# %% [markdown]
# So: for a loss ($m = 1$) reverse mode is the only sensible choice, which is why training
# uses it; for a function of a few inputs with many outputs (a trajectory as a function of
# one parameter, a Jacobian-vector product inside a solver) forward mode is. The Hessian
# products of section 2 combine the two ideas: an $Hv$ is a forward-mode derivative of the
# gradient ("forward over reverse") or, as `functional.hvp` does, a reverse pass over a reverse
# pass.

# %% [markdown]
# ## Exercise: a Hessian-vector product with two reverse passes
#
# Write `hvp(f, x, v)` returning $H v$, where $H$ is the Hessian of the scalar function `f` at
# the tensor `x` and `v` is a tensor shaped like `x`. Use `mg.autograd.grad` twice, as in
# section 2: the gradient (kept as a graph), a dot product with `v`, and its gradient. Do not
# build $H$. The checker tries a function whose Hessian it knows.

# %%
from _exercises import check, check_hvp


def hvp(f, x, v):
    """H v for the Hessian H of scalar f at x (a tensor), v shaped like x."""
    raise NotImplementedError


check(check_hvp, hvp);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def hvp(f, x, v):
    """H v for the Hessian H of scalar f at x (a tensor), v shaped like x."""
    x = x.detach().requires_grad_(True)
    (g,) = mg.autograd.grad(f(x), x, create_graph=True)   # the gradient, as a graph
    (hv,) = mg.autograd.grad((g * v).sum(), x)             # d(g . v)/dx = H v
    return hv


assert check(check_hvp, hvp)

# %% [markdown]
# ## Test yourself
#
# **1.** What is the third derivative of $x^4$ at $x = 2$? Get it with three calls of `grad`.
#
# <details><summary>Answer</summary>
#
# $(x^4)''' = 24x = 48$. The first two calls need `create_graph=True`, so that their results
# can be differentiated again; the last one does not.
#
# </details>

# %%
x2 = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)
(g1,) = grad(x2 ** 4, x2, create_graph=True)
(g2,) = grad(g1, x2, create_graph=True)
(g3,) = grad(g2, x2)
assert (g1.item(), g2.item(), g3.item()) == (32.0, 48.0, 48.0)

# %% [markdown]
# **2.** A model has $n = 10{,}000$ parameters. How many backward passes does the full Hessian
# take, and how many an $Hv$? How much memory does the Hessian need in float64?
#
# <details><summary>Answer</summary>
#
# The Hessian: one pass to build the gradient as a graph, then one per row, $10{,}001$; an
# $Hv$: $2$. The Hessian has $10^8$ entries of 8 bytes: 800 MB, against 80 kB for $Hv$.
#
# </details>

# %%
n_q = 10_000
assert n_q * n_q * 8 == 800e6 and n_q * 8 == 80e3
# the pass count, measured on the small MLP of section 2 with a hook on theta
passes_h = [0]


def counted_loss(th):
    """The loss, with a hook counting every backward pass that reaches its input."""
    th.register_hook(lambda g: passes_h.__setitem__(0, passes_h[0] + 1))
    return loss(th)


functional.hessian(counted_loss, theta)
assert passes_h[0] == n + 1, passes_h
passes_h[0] = 0
functional.hvp(counted_loss, theta, v)
assert passes_h[0] == 2, passes_h

# %% [markdown]
# **3.** $F: \mathbb{R}^3 \to \mathbb{R}^{100}$. Which mode builds its Jacobian with fewer
# passes, and how many?
#
# <details><summary>Answer</summary>
#
# Forward mode, one pass per input: 3 (reverse mode would need 100, one per output).
#
# </details>

# %%
W_q = mg.tensor(np.random.default_rng(6).standard_normal((100, 3)))
_, p_forward = jacobian_forward(lambda x: (W_q @ x).sin(), mg.tensor(np.array([0.1, 0.2, 0.3])))
_, p_reverse = jacobian_reverse(lambda x: (W_q @ x).sin(), mg.tensor(np.array([0.1, 0.2, 0.3])))
assert (p_forward, p_reverse) == (3, 100)

# %% [markdown]
# **4.** For a linear model $f(x) = w \cdot x$, what is the gradient penalty
# $\lVert \nabla_x f \rVert^2$, and what is its gradient with respect to $w$?
#
# <details><summary>Answer</summary>
#
# $\nabla_x f = w$, so the penalty is $\lVert w \rVert^2$ whatever $x$ is, and its gradient is
# $2w$: on a linear model the penalty is plain weight decay.
#
# </details>

# %%
w_q = mg.tensor([1.0, -2.0, 0.5], dtype=mg.float64, requires_grad=True)
x_q = mg.tensor([0.3, 0.1, -0.4], dtype=mg.float64, requires_grad=True)
(gx_q,) = grad((w_q * x_q).sum(), x_q, create_graph=True)
penalty_q = (gx_q ** 2).sum()
(gw_q,) = grad(penalty_q, w_q)
assert math.isclose(penalty_q.item(), 5.25) and np.allclose(gw_q.numpy(), 2 * w_q.numpy())
print("all exercises check out")
