# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 1. A scalar autograd engine, written here
#
# Every model in these tutorials learns by gradient descent, and every gradient comes from one
# algorithm: reverse-mode automatic differentiation. Before we use minigrad's engine we write
# our own, for single numbers, in about seventy lines. It has everything the real one has:
#
# 1. a **node** per result, remembering which values it was computed from;
# 2. a **local backward rule** per operation, written beside its forward;
# 3. a **topological order** of the graph, so that a node passes its gradient on only after
#    every gradient it will ever receive has arrived;
# 4. gradients that **add up** when a value is used more than once.
#
# Then we train a small network with it, check its gradients against minigrad's and draw the
# graph it recorded. Tutorial 2 moves from one number per node to one array per node, which is
# how minigrad (and PyTorch) work.

# %%
import math
import shutil

from _common import SMALL, out_path, savefig, show_image

import graphviz
import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg

# %% [markdown]
# ## The `Value` class
#
# A `Value` holds a number (`data`), the gradient of the final output with respect to it
# (`grad`, zero until backward runs), the values it was made from (`parents`) and a function
# `_backward` that, given `self.grad`, adds each parent's share into the parent's `grad`.
#
# Each operation builds the result and, right beside it, its backward rule. For $c = a + b$ the
# local derivatives are $1$ and $1$; for $c = ab$ they are $b$ and $a$; for $c = \tanh a$ it is
# $1 - c^2$; for $c = e^a$ it is $c$ itself; for $c = a^n$ it is $n a^{n-1}$. The chain rule
# multiplies each by the gradient arriving at $c$.
#
# Notice `+=` everywhere: a value used twice receives gradient along both paths, and both
# contributions must survive.

# %%
class Value:
    """One number in a computation graph, with the gradient of the output with respect to it."""

    def __init__(self, data, parents=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self.parents = parents
        self.op = op
        self._backward = lambda: None  # a leaf has nobody to pass its gradient to

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), "+")

        def backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = backward
        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), "*")

        def backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = backward
        return out

    def __pow__(self, n):
        assert isinstance(n, (int, float)), "only constant exponents"
        out = Value(self.data ** n, (self,), f"**{n}")

        def backward():
            self.grad += n * self.data ** (n - 1) * out.grad
        out._backward = backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,), "tanh")

        def backward():
            self.grad += (1 - out.data ** 2) * out.grad
        out._backward = backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,), "exp")

        def backward():
            self.grad += out.data * out.grad
        out._backward = backward
        return out

    # the rest is built from the operations above, so it needs no backward rule of its own
    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-other)

    def __truediv__(self, other):
        return self * other ** -1

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other

    def __rsub__(self, other):
        return (-self) + other

    def __repr__(self):
        return f"Value(data={self.data:.4f}, grad={self.grad:.4f})"

    def backward(self):
        """Fill `grad` of every value this one depends on with d(self)/d(value)."""
        order = topological_order(self)
        for v in order:
            v.grad = 0.0
        self.grad = 1.0  # d(self)/d(self)
        for v in reversed(order):  # outputs before inputs
            v._backward()


def topological_order(root):
    """Every value `root` depends on, each once, each after all the values it was made from."""
    order, seen = [], set()

    def visit(v):
        if v not in seen:
            seen.add(v)
            for p in v.parents:
                visit(p)
            order.append(v)  # only after all its parents are in the list
    visit(root)
    return order

# %% [markdown]
# `topological_order` is a depth-first search that appends a value only after its parents.
# Reversed, the list starts at the output and reaches every value only after every value
# computed from it, which is exactly when its gradient is complete. (The recursion is fine for
# a lesson; tutorial 3 shows why minigrad's engine uses a queue instead.)
#
# ## The neuron of the lectures, by our engine
#
# One neuron with input $x$, weight $w$, bias $b$, a $\tanh$ and a squared error against a
# target $y$:
#
# $$L = (\tanh(w x + b) - y)^2, \qquad x = 1.5,\ w = 0.8,\ b = -0.2,\ y = 0.5 .$$
#
# The numbers are chosen so that $wx + b = 1$.

# %%
X, W, B, Y = 1.5, 0.8, -0.2, 0.5
x, w, b = Value(X), Value(W), Value(B)
L = ((w * x + b).tanh() - Y) ** 2
L.backward()
print("L =", L)
print("dL/dw, dL/db, dL/dx =", round(w.grad, 4), round(b.grad, 4), round(x.grad, 4))

# %% [markdown]
# By the chain rule, with $h = \tanh 1$ and $\delta = 2(h - y)(1 - h^2) \approx 0.2197$:
# $\partial L/\partial w = \delta x \approx 0.3296$, $\partial L/\partial b = \delta$ and
# $\partial L/\partial x = \delta w \approx 0.1758$. Our engine agrees.

# %%
h = math.tanh(1.0)
delta = 2 * (h - Y) * (1 - h * h)
assert round(L.data, 4) == 0.0684
assert math.isclose(w.grad, delta * X) and math.isclose(b.grad, delta)
assert math.isclose(x.grad, delta * W)
assert round(w.grad, 4) == 0.3296 and round(x.grad, 4) == 0.1758

# %% [markdown]
# The same expression in minigrad gives the same three numbers: minigrad's engine runs the same
# algorithm, on arrays instead of single numbers.

# %%
xm, wm, bm = (mg.tensor(v, dtype=mg.float64, requires_grad=True) for v in (X, W, B))
Lm = ((wm * xm + bm).tanh() - Y) ** 2
Lm.backward()
for ours, theirs in ((w, wm), (b, bm), (x, xm)):
    assert math.isclose(ours.grad, theirs.grad.item(), rel_tol=1e-12)
print("minigrad agrees:", round(wm.grad.item(), 4), round(bm.grad.item(), 4),
      round(xm.grad.item(), 4))

# %% [markdown]
# ## Why `+=`: a value used twice
#
# In $f = a \cdot a \cdot a$ the leaf $a$ feeds two multiplications. Its gradient arrives along
# each path, and the sum is the derivative $3a^2$. Had the rules written `self.grad = ...`, the
# second arrival would overwrite the first.
#
# A *diamond* makes the order matter as well: $c = a + 1$, $d = a \cdot 2$, $e = c \cdot d$.
# Node $a$ may only pass its gradient on once both $c$ and $d$ have handed theirs in, and the
# topological order guarantees that.

# %%
a = Value(2.0)
f = a * a * a
f.backward()
assert a.grad == 12.0

a = Value(3.0)
c, d = a + 1, a * 2
e = c * d
e.backward()
visits = list(reversed(topological_order(e)))
print("backward visits:", [v.op or f"leaf {v.data:g}" for v in visits])
assert a.grad == d.data * 1 + c.data * 2 == 14.0  # de/da = d + 2c
assert visits.index(a) > max(visits.index(c), visits.index(d))  # a waits for both paths

# %% [markdown]
# ## The graph it recorded
#
# Each `Value` knows its parents, so drawing the graph is a walk over `topological_order`.
# Every box shows a value's data and, after backward, its gradient; the small ellipses are the
# operations.

# %%
def draw(root):
    """A Graphviz drawing of the graph behind `root` (data and grad of every value)."""
    dot = graphviz.Digraph(graph_attr={"rankdir": "LR"})
    for v in topological_order(root):
        vid = str(id(v))
        dot.node(vid, f"data {v.data:.4f} | grad {v.grad:.4f}", shape="record")
        if v.op:
            dot.node(vid + v.op, v.op, shape="ellipse")
            dot.edge(vid + v.op, vid)
            for p in v.parents:
                dot.edge(str(id(p)), vid + v.op)
    return dot


graph = draw(L)
with open(out_path("01_value_graph.dot"), "w") as fh:
    fh.write(graph.source)
if shutil.which("dot"):
    show_image(graph.render(out_path("01_value_graph"), format="png", cleanup=True))
assert graph.source.count("tanh") >= 1 and graph.source.count("grad 0.2197") >= 1

# %% [markdown]
# ## A neuron, a layer, a network
#
# A neuron computes $\tanh(\sum_i w_i x_i + b)$; a layer is several neurons reading the same
# inputs; a multi-layer perceptron (MLP) is layers in a row. Their parameters are `Value`s, so
# the engine differentiates the whole network with no extra code.

# %%
class Neuron:
    def __init__(self, n_in, rng):
        self.w = [Value(rng.uniform(-1, 1)) for _ in range(n_in)]
        self.b = Value(0.0)

    def __call__(self, xs):
        return sum((wi * xi for wi, xi in zip(self.w, xs)), self.b).tanh()

    def parameters(self):
        return self.w + [self.b]


class Layer:
    def __init__(self, n_in, n_out, rng):
        self.neurons = [Neuron(n_in, rng) for _ in range(n_out)]

    def __call__(self, xs):
        return [n(xs) for n in self.neurons]

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP:
    def __init__(self, sizes, rng):
        self.layers = [Layer(i, o, rng) for i, o in zip(sizes[:-1], sizes[1:])]

    def __call__(self, xs):
        for layer in self.layers:
            xs = layer(xs)
        return xs[0] if len(xs) == 1 else xs

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

# %% [markdown]
# Four points in three dimensions with targets $\pm 1$, and a $3 \to 4 \to 4 \to 1$ network
# (41 parameters). The task is easy on purpose (the sign of the third input alone gives the
# target): what matters here is that the engine's gradients move all 41 parameters the right
# way. Each step computes the mean squared error, runs backward and moves every parameter
# against its gradient.

# %%
rng = np.random.default_rng(0)
net = MLP([3, 4, 4, 1], rng)
inputs = [[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]
targets = [1.0, -1.0, -1.0, 1.0]
assert all((xs[2] < 0) == (t > 0) for xs, t in zip(inputs, targets))  # an easy task
assert len(net.parameters()) == 4 * 4 + 4 * 5 + 5 == 41

losses = []
for step in range(40 if SMALL else 100):
    preds = [net(xs) for xs in inputs]
    loss = sum(((p - t) ** 2 for p, t in zip(preds, targets)), Value(0.0)) / len(inputs)
    loss.backward()
    for p in net.parameters():
        p.data -= 0.1 * p.grad
    losses.append(loss.data)
print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f}")
print("predictions:", [round(net(xs).data, 3) for xs in inputs])
assert losses[-1] < 0.1 * losses[0]

fig, ax = plt.subplots(figsize=(5, 3))
ax.plot(losses)
ax.set_xlabel("step")
ax.set_ylabel("mean squared error")
ax.set_title("A 41-parameter MLP trained by our scalar engine")
savefig(fig, "01_mlp_loss")

# %% [markdown]
# ## The same network in minigrad, gradient for gradient
#
# Copy the scalar network's weights into minigrad tensors (one matrix per layer) and compare
# all 41 gradients of one loss. They agree to rounding.

# %%
def to_minigrad(net):
    """One (out, in) weight matrix and one bias vector per layer, as float64 leaves."""
    params = []
    for layer in net.layers:
        Wl = [[wi.data for wi in n.w] for n in layer.neurons]
        bl = [n.b.data for n in layer.neurons]
        params += [mg.tensor(Wl, dtype=mg.float64, requires_grad=True),
                   mg.tensor(bl, dtype=mg.float64, requires_grad=True)]
    return params


params = to_minigrad(net)
X_all = mg.tensor(inputs, dtype=mg.float64)
T_all = mg.tensor(targets, dtype=mg.float64)
hidden = X_all
for Wl, bl in zip(params[0::2], params[1::2]):
    hidden = (hidden @ Wl.T + bl).tanh()
loss_mg = ((hidden[:, 0] - T_all) ** 2).mean()
loss_mg.backward()

preds = [net(xs) for xs in inputs]
loss = sum(((p - t) ** 2 for p, t in zip(preds, targets)), Value(0.0)) / len(inputs)
loss.backward()
ours = np.array([p.grad for p in net.parameters()])
theirs = np.concatenate([np.concatenate([Wl.grad.numpy(), bl.grad.numpy()[:, None]], 1).ravel()
                         for Wl, bl in zip(params[0::2], params[1::2])])
print("largest difference over 41 gradients:", np.abs(ours - theirs).max())
assert math.isclose(loss.data, loss_mg.item(), rel_tol=1e-12)
assert np.allclose(ours, theirs, rtol=1e-10, atol=1e-12)

# %% [markdown]
# How many nodes did one loss of the scalar engine build? Every multiply and add of every
# neuron is a `Value`: hundreds of them for 41 parameters and four points. minigrad's loss
# above has about twenty nodes: one per array operation, and one per parameter tensor where its
# gradient is collected. That difference is the subject of tutorial 2.

# %%
def graph_nodes(t):
    """Every node of minigrad's graph behind tensor `t`, each counted once."""
    seen, todo = set(), [t.grad_fn]
    while todo:
        node = todo.pop()
        if node is not None and node not in seen:
            seen.add(node)
            todo.extend(n for n, _ in node.next_functions)
    return len(seen)


n_scalar, n_minigrad = len(topological_order(loss)), graph_nodes(loss_mg)
print("scalar engine:", n_scalar, "values for one loss; minigrad:", n_minigrad, "nodes")
assert n_scalar > 300 and n_minigrad < 30

# %% [markdown]
# ## Exercise: the topological order
#
# Write `topological_order(root)` yourself: return every node `root` depends on (following
# `.parents`), each exactly once, each after all of its parents, `root` last. The checker tries
# it on random graphs; when one fails, it shrinks the graph to the smallest that still shows
# the mistake, and names it (a node listed twice, a node before its parents, a missing node).
# It works on its own small node class, so it only needs your function. `check` also returns
# True or False, for the solution cells to assert; the semicolon keeps Jupyter from echoing it.

# %%
from _exercises import check, check_topological_order


def my_topological_order(root):
    """Every node behind `root`, once each, parents before children, root last."""
    raise NotImplementedError


check(check_topological_order, my_topological_order);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution: depth-first search, appending a node once all its parents are in the list. An
# explicit stack instead of recursion, so a chain of 100,000 nodes is fine too.
def my_topological_order(root):
    """Every node behind `root`, once each, parents before children, root last."""
    order, seen, stack = [], {root}, [(root, iter(root.parents))]
    while stack:
        node, parents = stack[-1]
        for p in parents:
            if p not in seen:
                seen.add(p)
                stack.append((p, iter(p.parents)))
                break
        else:  # every parent is done
            stack.pop()
            order.append(node)
    return order


assert check(check_topological_order, my_topological_order)

# %% [markdown]
# ## Test yourself
#
# **1.** Add a `relu` operation to `Value` ($\max(0, a)$). What is its backward rule, and what
# gradient does it give at $a = -2$ and at $a = 3$?
#
# <details><summary>Answer</summary>
#
# `self.grad += (out.data > 0) * out.grad`: the local derivative is 1 where the input was
# positive and 0 elsewhere, so $0$ at $a = -2$ and $1$ at $a = 3$.
#
# </details>

# %%
def relu(v):
    out = Value(max(0.0, v.data), (v,), "relu")

    def backward():
        v.grad += (out.data > 0) * out.grad
    out._backward = backward
    return out


for a_val, want in ((-2.0, 0.0), (3.0, 1.0)):
    a = Value(a_val)
    relu(a).backward()
    assert a.grad == want

# %% [markdown]
# **2.** `backward()` above sets every `grad` to zero before it starts. What would a second call
# give without that, and what does minigrad do instead?
#
# <details><summary>Answer</summary>
#
# Every gradient would double: the rules add into `grad`. minigrad, like PyTorch, keeps adding
# into the `.grad` of leaves across calls on purpose (so gradients of several losses can be
# summed), and training loops reset them with `zero_grad()`.
#
# </details>

# %%
t = mg.tensor(3.0, dtype=mg.float64, requires_grad=True)
(t * t).backward()
(t * t).backward()
assert t.grad.item() == 12.0  # 6 + 6: accumulated, as in PyTorch

# %% [markdown]
# **3.** How many `Value` nodes does $\sum_{i=1}^{n} w_i x_i$ create for $n$ inputs, written
# as `sum(w_i * x_i)` starting from `Value(0)`?
#
# <details><summary>Answer</summary>
#
# $2n$ leaves, $n$ products, $n$ sums and the starting zero: $4n + 1$.
#
# </details>

# %%
n = 5
ws, xs = [Value(1.0) for _ in range(n)], [Value(2.0) for _ in range(n)]
s = sum((wi * xi for wi, xi in zip(ws, xs)), Value(0.0))
assert len(topological_order(s)) == 4 * n + 1
print("all checks of tutorial 1 pass")
