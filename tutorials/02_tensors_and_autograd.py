# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 2. Tensors and autograd
#
# Every model in these tutorials learns by gradient descent, so the first thing to trust is the
# gradient. This tutorial takes one tiny computation, a single neuron with a squared error,
# and finds the gradient of its loss three ways:
#
# 1. by hand, with the chain rule;
# 2. with minigrad's reverse-mode autograd, `loss.backward()`;
# 3. numerically, by nudging each input a little and watching the loss move (finite differences).
#
# When all three agree, we can trust the gradients that autograd computes for us.
# At the end we draw the graph that autograd recorded.

# %%
import math
import shutil

from _common import SMALL, out_path, savefig, show_image

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.autograd import gradcheck
from minigrad.viz import draw_graph, render_graph

# %% [markdown]
# ## A tensor is an array that remembers where it came from
#
# A minigrad `Tensor` wraps a NumPy array (`t.numpy()` returns it). If it is created with
# `requires_grad=True`, every operation applied to it is recorded, and the result carries a
# `grad_fn`: the node of the graph that produced it.

# %%
a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = (a * a).sum()
print(a)
print(b, "made by", b.grad_fn.name())
assert b.item() == 14.0 and a.is_leaf and not b.is_leaf

# %% [markdown]
# ## The computation
#
# One neuron with input $x$, weight $w$, bias $b$ and a $\tanh$ activation, scored against a
# target $y$ with a squared error:
#
# $$u = w x, \quad z = u + b, \quad h = \tanh(z), \quad L = (h - y)^2 .$$
#
# We take $x = 1.5$, $w = 0.8$, $b = -0.2$ and $y = 0.5$, chosen so that $z$ comes out as a
# round $1$. We use float64 so that the finite differences later are not swamped by rounding.

# %%
X, W, B, Y = 1.5, 0.8, -0.2, 0.5

x = mg.tensor(X, dtype=mg.float64, requires_grad=True)
w = mg.tensor(W, dtype=mg.float64, requires_grad=True)
b = mg.tensor(B, dtype=mg.float64, requires_grad=True)
y = mg.tensor(Y, dtype=mg.float64)  # a target: no gradient wanted

u = w * x
z = u + b
h = z.tanh()
L = (h - y) ** 2
print(f"u = {u.item():.4f}, z = {z.item():.4f}, h = {h.item():.4f}, L = {L.item():.4f}")

# %% [markdown]
# So $u = 1.2$, $z = 1$, $h = \tanh 1 \approx 0.7616$ and $L \approx 0.0684$.

# %%
assert math.isclose(u.item(), 1.2) and math.isclose(z.item(), 1.0)
assert round(h.item(), 4) == 0.7616
assert round(L.item(), 4) == 0.0684

# %% [markdown]
# ## 1. The chain rule by hand
#
# Walk backwards from the loss, multiplying local derivatives:
#
# - $\partial L / \partial h = 2(h - y)$
# - $\partial h / \partial z = 1 - \tanh^2 z = 1 - h^2$
# - $\partial z / \partial u = 1$ and $\partial z / \partial b = 1$
# - $\partial u / \partial w = x$ and $\partial u / \partial x = w$
#
# Each gradient we want is a product along the path from $L$ to that input:
#
# $$\frac{\partial L}{\partial w} = 2(h-y)(1-h^2)\,x, \qquad
#   \frac{\partial L}{\partial b} = 2(h-y)(1-h^2), \qquad
#   \frac{\partial L}{\partial x} = 2(h-y)(1-h^2)\,w .$$
#
# The shared factor $\delta = \partial L/\partial z = 2(h-y)(1-h^2)$ is computed once and
# reused: that reuse is exactly what makes reverse mode cheap.

# %%
hv = math.tanh(X * W + B)
dL_dh = 2 * (hv - Y)
dh_dz = 1 - hv ** 2
delta = dL_dh * dh_dz
by_hand = {"w": delta * X, "b": delta, "x": delta * W}
print(f"dL/dh = {dL_dh:.4f}, dh/dz = {dh_dz:.4f}, delta = {delta:.4f}")
print({k: round(v, 4) for k, v in by_hand.items()})

# %% [markdown]
# By hand: $\partial L/\partial h \approx 0.5232$, $\partial h/\partial z \approx 0.42$,
# $\delta \approx 0.2197$, hence $\partial L/\partial w \approx 0.3296$,
# $\partial L/\partial b \approx 0.2197$ and $\partial L/\partial x \approx 0.1758$.

# %%
assert round(dL_dh, 4) == 0.5232 and round(dh_dz, 2) == 0.42 and round(delta, 4) == 0.2197
assert round(by_hand["w"], 4) == 0.3296
assert round(by_hand["b"], 4) == 0.2197
assert round(by_hand["x"], 4) == 0.1758

# %% [markdown]
# ## 2. `backward()`
#
# `L.backward()` does the same walk automatically. It visits the recorded nodes from $L$ back
# to the leaves, calls each node's local `backward` rule, and adds the results into the `.grad`
# of every leaf that asked for gradients ($x$, $w$, $b$; not $y$).

# %%
L.backward()
by_autograd = {"w": w.grad.item(), "b": b.grad.item(), "x": x.grad.item()}
print(by_autograd)
for name in by_hand:
    assert math.isclose(by_autograd[name], by_hand[name], rel_tol=1e-12), name
assert y.grad is None  # y did not ask for a gradient

# %% [markdown]
# The graph behind `L` is a chain of nodes; each one knows its inputs through
# `next_functions`. Reading them from the loss backwards gives the reverse of the order in
# which we wrote the forward pass.

# %%
node, chain = L.grad_fn, []
while node is not None and hasattr(node, "next_functions"):
    chain.append(node.name())
    nxt = [n for n, _ in node.next_functions if n is not None and n.next_functions]
    node = nxt[0] if nxt else None
print(" <- ".join(chain))
assert chain == ["PowBackward0", "SubBackward0", "TanhBackward0", "AddBackward0", "MulBackward0"]

# %% [markdown]
# ## 3. Finite differences
#
# A derivative is a limit of slopes, so a small step gives an estimate of it. The *central*
# difference
#
# $$\frac{\partial L}{\partial w} \approx \frac{L(w+\varepsilon) - L(w-\varepsilon)}{2\varepsilon}$$
#
# has an error proportional to $\varepsilon^2$, against $\varepsilon$ for the one-sided
# $\big(L(w+\varepsilon) - L(w)\big)/\varepsilon$. Here it is by hand, with no autograd at all.

# %%
def loss_value(xv, wv, bv, yv=Y):
    """The same computation on plain floats."""
    return (math.tanh(wv * xv + bv) - yv) ** 2


eps = 1e-6
numeric = {
    "w": (loss_value(X, W + eps, B) - loss_value(X, W - eps, B)) / (2 * eps),
    "b": (loss_value(X, W, B + eps) - loss_value(X, W, B - eps)) / (2 * eps),
    "x": (loss_value(X + eps, W, B) - loss_value(X - eps, W, B)) / (2 * eps),
}
print({k: round(v, 8) for k, v in numeric.items()})
for name in numeric:
    assert abs(numeric[name] - by_autograd[name]) < 1e-8, name

# %% [markdown]
# How small should $\varepsilon$ be? Too large and the slope is not the tangent; too small and
# the two losses agree in almost every digit, so their difference is mostly rounding error.
# The plot shows both effects for $\partial L/\partial w$.

# %%
eps_grid = np.logspace(-12, -1, 12 if SMALL else 45)
exact = by_autograd["w"]
err_forward = [abs((loss_value(X, W + e, B) - loss_value(X, W, B)) / e - exact) for e in eps_grid]
err_central = [abs((loss_value(X, W + e, B) - loss_value(X, W - e, B)) / (2 * e) - exact)
               for e in eps_grid]

fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog(eps_grid, err_forward, "o-", label="one-sided  (L(w+e) - L(w)) / e")
ax.loglog(eps_grid, err_central, "s-", label="central  (L(w+e) - L(w-e)) / 2e")
ax.set_title("Finite-difference error for dL/dw")
ax.set_xlabel("step size epsilon")
ax.set_ylabel("|estimate - autograd|")
ax.legend()
savefig(fig, "02_finite_difference_error")

# %% [markdown]
# At $\varepsilon = 10^{-3}$ the central difference is already more than ten times closer
# to the true value than the one-sided one, and at $\varepsilon = 10^{-12}$ rounding makes
# both estimates worse than they are at $10^{-6}$.

# %%
def fd_errors(e):
    fwd = abs((loss_value(X, W + e, B) - loss_value(X, W, B)) / e - exact)
    cen = abs((loss_value(X, W + e, B) - loss_value(X, W - e, B)) / (2 * e) - exact)
    return fwd, cen


fwd3, cen3 = fd_errors(1e-3)
assert cen3 < fwd3 / 10
assert min(fd_errors(1e-12)) > max(fd_errors(1e-6))

# %% [markdown]
# `minigrad.autograd.gradcheck(fn, inputs)` automates this for tensors of any shape: it
# perturbs every element of every input that requires a gradient, in float64, and compares
# the central differences with `backward()`. It raises an error naming the worst element if
# they disagree, and returns `True` otherwise.

# %%
def neuron_loss(x, w, b):
    return ((w * x + b).tanh() - y) ** 2


inputs = [mg.tensor(v, dtype=mg.float64, requires_grad=True) for v in (X, W, B)]
assert gradcheck(neuron_loss, inputs)

# %% [markdown]
# The same check on a batch: a layer with a $(3, 4)$ weight matrix applied to a $(5, 4)$ batch.
# Every one of the $12 + 20$ input numbers is perturbed in turn.

# %%
mg.manual_seed(0)
Wm = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)
Xm = mg.randn(5, 4, dtype=mg.float64, requires_grad=True)
assert Wm.numel() + Xm.numel() == 32
assert gradcheck(lambda Xm, Wm: (Xm @ Wm.T).tanh(), [Xm, Wm])
print("gradcheck passed for a (5, 4) @ (4, 3) layer")

# %% [markdown]
# ## The drawn graph
#
# `minigrad.viz.draw_graph` turns the recorded graph into Graphviz. Blue ellipses are the
# leaves that require gradients (named through `params=`), grey boxes are operations with the
# shape of the tensor they produced, and the green ellipse is the output. The DOT text needs
# nothing installed; turning it into a picture needs the Graphviz `dot` program.

# %%
# a fresh forward pass, since backward() freed the saved values of the first one
L2 = neuron_loss(x, w, b)
graph = draw_graph(L2, params={"x": x, "w": w, "b": b})
graph.attr(label="L = (tanh(w x + b) - y)^2", labelloc="t")
print(graph.source)
dot_file = out_path("02_neuron_graph.dot")
with open(dot_file, "w") as f:
    f.write(graph.source)
print("saved", dot_file)
if shutil.which("dot"):
    show_image(render_graph(graph, out_path("02_neuron_graph.png"), format="png"))
else:
    print("Graphviz `dot` not found: only the .dot file was written")

# %%
for op in ("Mul", "Add", "Tanh", "Sub", "Pow"):
    assert op in graph.source, op

# %% [markdown]
# ## From scalars to tensors: one node per array
#
# The engine of tutorial 1 made a node for every single number. A layer's matrix product
# $Y = XW^\top$ with $X$ of shape $(5, 4)$ and $W$ of shape $(3, 4)$ computes 15 outputs, each a
# sum of 4 products: written with scalar `Value`s that is $15 \cdot (4 + 4) = 120$ new nodes,
# plus 32 leaves, and a Python call per node in both passes. minigrad records **two** nodes:
# one for the transpose $W^\top$ (a view of $W$'s memory, nothing copied) and one for the whole
# product, whose backward rule is two more matrix products,
# $\partial L/\partial X = G W$ and $\partial L/\partial W = G^\top X$ for the incoming gradient
# $G$ of shape $(5, 3)$. The arithmetic is the same; the bookkeeping shrinks sixtyfold here
# (and grows with the matrices for scalars, not at all for arrays), and the work goes to NumPy's
# (or a Numba kernel's) tight loops.

# %%
def count_nodes(t):
    """How many op nodes the graph behind tensor `t` holds (leaves not counted)."""
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is None or node in seen or not hasattr(node, "backward"):
            continue
        seen.add(node)
        todo.extend(n for n, _ in node.next_functions)
    return len(seen)


Y_mat = Xm @ Wm.T
scalar_nodes = 5 * 3 * (4 + 4)  # per output: 4 products and 4 additions (from a zero)
print("scalar engine:", scalar_nodes, "nodes; minigrad:", count_nodes(Y_mat), "nodes")
print("minigrad's nodes:", Y_mat.grad_fn.name(), "<-", Y_mat.grad_fn.next_functions[1][0].name())
assert count_nodes(Y_mat) == 2 and Y_mat.grad_fn.name() == "MmBackward0"

# %% [markdown]
# ## Writing your own `Function`
#
# A differentiable operation of your own is a subclass of `minigrad.autograd.Function`, written
# exactly as for PyTorch's `torch.autograd.Function`, with two static methods side by side:
#
# - `forward(ctx, *args)` receives the caller's tensors, computes the result with tensor
#   methods (recording is off inside it) and keeps what backward will need with
#   `ctx.save_for_backward(...)`;
# - `backward(ctx, grad)` receives the gradient of the output (a tensor of the output's shape)
#   and returns one gradient per input of forward (None for an input that is not a tensor),
#   reading what was saved from `ctx.saved_tensors`.
#
# `MyFn.apply(tensor, ...)` runs forward and, when some input requires a gradient, records
# `ctx` as the output's `grad_fn`, a node named `MyFnBackward` as in PyTorch. Here is softplus,
# $\log(1 + e^x)$, a smooth ReLU whose derivative is the sigmoid $\sigma(x) = 1 / (1 + e^{-x})$.

# %%
class SoftplusFn(mg.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0) + (-x.abs()).exp().log1p()  # log(1 + e^x), no overflow

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * x.sigmoid()


z_in = mg.tensor([-2.0, 0.0, 3.0], dtype=mg.float64, requires_grad=True)
sp = SoftplusFn.apply(z_in)
sp.sum().backward()
print(sp, sp.grad_fn.name())
print("gradient:", z_in.grad)
assert sp.grad_fn.name() == "SoftplusFnBackward"
assert np.allclose(sp.numpy(), np.log1p(np.exp([-2.0, 0.0, 3.0])))
assert np.allclose(z_in.grad.numpy(), 1 / (1 + np.exp(-np.array([-2.0, 0.0, 3.0]))))
assert gradcheck(SoftplusFn.apply, [mg.randn(4, 3, dtype=mg.float64, requires_grad=True)])

# %% [markdown]
# Because backward is written with tensor operations, it can itself be differentiated:
# `create_graph=True` records the backward pass, and the gradient of the gradient (here the
# second derivative $\sigma(x)(1 - \sigma(x))$) comes out of a second pass. (Decorating
# backward with `minigrad.autograd.function.once_differentiable` says it cannot be: it then runs
# without recording.)

# %%
(g1,) = mg.autograd.grad(SoftplusFn.apply(z_in).sum(), z_in, create_graph=True)
(g2,) = mg.autograd.grad(g1.sum(), z_in)
s_z = 1 / (1 + np.exp(-z_in.detach().numpy()))
assert np.allclose(g2.numpy(), s_z * (1 - s_z))

# %% [markdown]
# ## The library's own ops: `Op`
#
# minigrad's built-in ops are written one level lower, as subclasses of
# `minigrad.autograd.op.Op`: `forward(ctx, *arrays)` receives NumPy arrays (never tensors) and
# `backward(ctx, grad)` receives and returns arrays. Each op is then one array computation, with
# no graph of small ops built inside its backward: the first-order backward pass, which every
# training step runs, pays for NumPy alone. A second derivative of an `Op` comes from a
# separate tensor-level rule (`minigrad.graph_rules`), used only under `create_graph`. The same
# softplus as an `Op`:

# %%
from minigrad.autograd.op import Op


class Softplus(Op):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.logaddexp(0.0, x)  # log(1 + e^x) without overflow for large x

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad / (1.0 + np.exp(-x))  # grad * sigmoid(x)


sp_op = Softplus.apply(z_in)
print(sp_op, sp_op.grad_fn.name())
assert np.allclose(sp_op.numpy(), sp.numpy())
assert gradcheck(Softplus.apply, [mg.randn(4, 3, dtype=mg.float64, requires_grad=True)])

# %% [markdown]
# `gradcheck` is how every op of the library is tested, and it catches the mistakes people
# make. A backward that forgets the chain rule's incoming `grad` passes a test that only calls
# `.sum().backward()` (where `grad` is all ones), but `gradcheck` weights the outputs randomly,
# so it fails:

# %%
class SoftplusForgetsGrad(Op):
    forward = Softplus.forward

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return 1.0 / (1.0 + np.exp(-x))  # wrong: the incoming gradient is dropped


zz = mg.randn(3, dtype=mg.float64, requires_grad=True)
SoftplusForgetsGrad.apply(zz).sum().backward()
assert np.allclose(zz.grad.numpy(), 1 / (1 + np.exp(-zz.numpy())))  # the sum test passes
try:
    gradcheck(SoftplusForgetsGrad.apply, [zz])
    raise AssertionError("gradcheck should have failed")
except (AssertionError, RuntimeError) as err:  # PyTorch raises a RuntimeError subclass
    print("gradcheck:", str(err).splitlines()[0])

# %% [markdown]
# An `Op` (like a `Function`) may also return its gradient in a broadcast shape: an op on a
# $(3,)$ bias added to a $(5, 3)$ batch can hand back a $(5, 3)$ gradient, and the engine sums
# it over the batch axis to the bias's shape. Tutorial 3 opens the engine and shows where that
# happens.

# %% [markdown]
# ## Exercise: the chain rule
#
# Write `neuron_gradients(x, w, b, y)` returning $(\partial L/\partial w, \partial L/\partial b,
# \partial L/\partial x)$ for $L = (\tanh(wx + b) - y)^2$, with plain Python floats and the chain
# rule (no autograd). The checker compares it with the exact values at three points.
#
# Replace the `raise NotImplementedError` and run the cell: the checker tries your function and
# says what is wrong, if anything. A worked solution is in the next cell, hidden in Jupyter
# (click the bar to show it); the tutorial uses it, so the rest runs either way.

# %%
from _exercises import check, check_neuron_gradients


def neuron_gradients(x, w, b, y):
    """(dL/dw, dL/db, dL/dx) for L = (tanh(w x + b) - y)^2, by the chain rule."""
    raise NotImplementedError


check(check_neuron_gradients, neuron_gradients);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def neuron_gradients(x, w, b, y):
    """(dL/dw, dL/db, dL/dx) for L = (tanh(w x + b) - y)^2, by the chain rule."""
    h = math.tanh(w * x + b)
    delta = 2 * (h - y) * (1 - h * h)       # dL/dz, shared by all three
    return delta * x, delta, delta * w


assert check(check_neuron_gradients, neuron_gradients)

# %% [markdown]
# ## Test yourself
#
# **1.** What is $\partial L / \partial y$, the gradient with respect to the target? Work it out
# by hand, then let autograd confirm it.
#
# <details><summary>Answer</summary>
#
# Only the last node involves $y$: $\partial L/\partial y = -2(h - y)
# \approx -0.5232$.
#
# </details>

# %%
y_req = mg.tensor(Y, dtype=mg.float64, requires_grad=True)
L_y = ((w * x + b).tanh() - y_req) ** 2
L_y.backward()
assert round(y_req.grad.item(), 4) == -0.5232
assert math.isclose(y_req.grad.item(), -2 * (hv - Y), rel_tol=1e-12)

# %% [markdown]
# **2.** Let $f(t) = t \cdot t \cdot t$ at $t = 2$. The variable $t$ is used three times. What
# does `backward()` put in `t.grad`, and why?
#
# <details><summary>Answer</summary>
#
# $f'(t) = 3t^2 = 12$. Autograd sees three uses of $t$ and adds the gradient arriving
# along each path, $t^2 + t^2 + t^2$: when a value is reused, its gradients sum.
#
# </details>

# %%
t = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)
(t * t * t).backward()
assert t.grad.item() == 12.0

# %% [markdown]
# **3.** Run the forward and backward pass for $f(t) = t^2$ at $t = 3$ twice in a row without
# resetting `t.grad`. What do you find, and how do training loops avoid it?
#
# <details><summary>Answer</summary>
#
# $2t = 6$ after the first pass and $12$ after the second: gradients accumulate in
# `.grad` (as in PyTorch). Training loops reset them before each step (`t.grad = None`, or an
# optimizer's `zero_grad()`).
#
# </details>

# %%
t = mg.tensor(3.0, dtype=mg.float64, requires_grad=True)
(t * t).backward()
assert t.grad.item() == 6.0
(t * t).backward()
assert t.grad.item() == 12.0
t.grad = None
(t * t).backward()
assert t.grad.item() == 6.0
print("all exercises check out")
