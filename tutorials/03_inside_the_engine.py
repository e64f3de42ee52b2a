# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # 3. Inside minigrad's engine
#
# Tutorial 1 wrote an engine for single numbers; tutorial 2 wrote an `Op` for arrays. This
# one opens the engine that runs every model of the later tutorials, `minigrad/autograd/`, and
# reads its two central functions: `Op.apply`, which records the graph during the forward
# pass, and `run_backward`, which walks it. We print the order in which it visits the nodes of
# a small graph, replay a naive recursive backward beside it to see what goes wrong without
# that order, watch the engine sum a broadcast gradient back to its input's shape, and step
# through a whole backward pass frame by frame. At the end a 60-line reference engine, kept in
# the library and tested against the real one, shows what the real one adds and why.

# %%
import html
import inspect
import shutil

from _common import SMALL, out_path, savefig

import graphviz
import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.autograd import engine, op
from minigrad.autograd.hooks import add_pre_hook
from minigrad.autograd.reference import fit, reference_backward, topological_order

# %% [markdown]
# ## Recording: `Op.apply`
#
# Every op, from `+` to attention, ends in `SomeOp.apply(...)`. Here it is, as the library has
# it:

# %%
print(inspect.getsource(op.Op.apply))

# %% [markdown]
# Reading it from the top:
#
# 1. `ctx = _new(cls)` makes the node before anything runs: the same object serves as the
#    forward's scratch space (`ctx.save_for_backward`) and, later, as the graph's node.
# 2. The loop over `args` swaps each tensor for its NumPy array and, if it requires a gradient,
#    finds the node its gradient must go to: its `grad_fn`, or, for a leaf, its
#    `AccumulateGrad`. Those are the node's `next_nodes`, the graph's edges.
# 3. `cls.forward(ctx, *arrays)` computes the result on arrays; autograd is not involved.
# 4. The output is wrapped in a `Tensor`. Only if some input wanted a gradient (and the result is
#    a float: integers carry none) does `ctx` become its `grad_fn`, numbered by `sequence_nr`,
#    the order of creation that the backward pass uses.
#
# A tensor that nobody asked gradients for costs one loop and no node: `no_grad()` simply makes
# `grad_enabled` false.

# %%
a = mg.tensor([1.0, 2.0], requires_grad=True)
b = a * 3
with mg.no_grad():
    c = a * 3
print("b.grad_fn:", b.grad_fn, "next:", b.grad_fn.next_nodes)
print("c.grad_fn:", c.grad_fn)
assert b.grad_fn is not None and c.grad_fn is None
assert b.grad_fn.next_nodes[0] is a._acc  # the leaf's accumulator, made on first use

# %% [markdown]
# ## Walking: `run_backward`

# %%
print(inspect.getsource(engine.run_backward))

# %% [markdown]
# The loop keeps two things: `grads`, the gradient each waiting node has received so far, and a
# heap `queue` ordered by `sequence_nr`, newest first. Why newest first? A node can only receive
# gradient from nodes created *after* it (their inputs existed before them), so when the newest
# waiting node is popped nothing left in the queue can send it more: its gradient is complete.
# That is the topological order of tutorial 1, obtained without sorting the graph and without
# recursion.
#
# For each popped node: hooks may look at or replace the gradient; a leaf's `AccumulateGrad`
# adds it into `.grad`; any other node checks that its saved arrays are still there and
# unchanged, calls its `backward`, frees what it saved, and hands each input's gradient on:
# fitted to the input's shape and dtype (`_fit`), then either stored (first arrival, the node
# joins the queue) or **added** to what is there (a later arrival along another path; added
# into the stored array itself when nothing else refers to it, which `adoption.accumulable`
# checks by reference count, as PyTorch's engine adds into a buffer no one else uses).
#
# ## The order of visits on a diamond
#
# `d = a * b`, `e = a + b`, `f = d * e`: both $a$ and $b$ feed two nodes, so their gradients
# arrive in two parts. A pre-hook on every node, the same mechanism `register_hook` uses,
# prints what the engine does as it does it.

# %%
def watch(out):
    """Put a pre-hook on every node behind `out`; return the list it fills with
    (node name, gradient received) in the order the engine visits them."""
    visits = []
    for node in topological_order(out.grad_fn):
        name = node.name() if not isinstance(node, op.AccumulateGrad) else \
            f"AccumulateGrad({leaf_names.get(id(node.variable), '?')})"
        add_pre_hook(node, lambda g, name=name: visits.append((name, g.numpy().copy())))
    return visits


a = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)
b = mg.tensor(3.0, dtype=mg.float64, requires_grad=True)
leaf_names = {id(a): "a", id(b): "b"}
d, e = a * b, a + b
f = d * e
visits = watch(f)
f.backward()
for name, g in visits:
    print(f"{name:20s} receives {g}")
names = [n for n, _ in visits]
assert names[0] == "MulBackward0" and names.count("AccumulateGrad(a)") == 1
# df/da = b e + d = 3 * 5 + 6 = 21 and df/db = a e + d = 2 * 5 + 6 = 16, each arriving once
assert a.grad.item() == 21.0 and b.grad.item() == 16.0

# %% [markdown]
# Every node is visited once, and `a`'s accumulator receives 21 in one piece: the $b \cdot e =
# 15$ from the multiplication and the $d = 6$ from the addition were added in `grads` before it
# was popped.
#
# ## A naive recursive backward, replayed beside it
#
# The question learners ask most about the topological sort is why it is needed at all: why
# not let each node pass its gradient on as soon as it gets some? Here is that engine (it calls
# the very same `backward` rules), on a graph whose inner node `c = a * b` feeds two others:
# $f = 2c + 3c$, so $\partial f/\partial c = 5$, $\partial f/\partial a = 5b = 15$ and
# $\partial f/\partial b = 5a = 10$. Version one passes each arrival on separately; version two
# passes on the total received so far, which is what "just add it to the node's gradient and
# continue" amounts to.

# %%
def naive_backward(node, g, received, calls, mode):
    """Recursive backward without an order: each arrival is passed on at once."""
    received[node] = received.get(node, 0) + g
    calls[node] = calls.get(node, 0) + 1
    if isinstance(node, op.AccumulateGrad):
        return
    passed = g if mode == "each arrival" else received[node]
    for child, ig in zip(node.next_nodes, node.backward(node, passed)):
        if child is not None:
            naive_backward(child, fit(ig, child.out_shape, child.out_dtype), received, calls,
                           mode)


for mode in ("each arrival", "total so far"):
    c = a * b
    f = c * 2 + c * 3
    received, calls = {}, {}
    naive_backward(f.grad_fn, np.array(1.0), received, calls, mode)
    got = {leaf_names[id(n.variable)]: float(v) for n, v in received.items()
           if isinstance(n, op.AccumulateGrad)}
    print(f"{mode:13s}: df/da = {got['a']:5.1f}, df/db = {got['b']:5.1f}, "
          f"{sum(calls.values())} backward calls")
    if mode == "each arrival":
        assert got == {"a": 15.0, "b": 10.0}
    else:
        assert got == {"a": 21.0, "b": 14.0}  # c's first 2 is passed on twice: 2 + (2 + 3)

# %% [markdown]
# Passing each arrival on separately gives the right numbers here, but every path from the
# output to a node is walked separately, and the number of paths doubles with each diamond
# stacked on the last. Passing on the running total counts the first arrival again with the
# second: $7b = 21$ instead of $5b = 15$. The engine's order avoids both: one visit per node, after its
# gradient is complete.

# %%
def chain_of_diamonds(n):
    x = mg.tensor(1.1, dtype=mg.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = (y * 0.5) + (y * 0.5)  # every step is a diamond
    return x, y


for n in (2, 6, 10):
    x, y = chain_of_diamonds(n)
    received, calls = {}, {}
    naive_backward(y.grad_fn, np.array(1.0), received, calls, "each arrival")
    engine_visits = watch(y)
    y.backward()
    print(f"{n:2d} diamonds: naive {sum(calls.values()):5d} calls, engine {len(engine_visits)}")
    assert len(engine_visits) == len(topological_order(y.grad_fn))
assert sum(calls.values()) > 1000

# %% [markdown]
# ## Broadcasting, and the gradient summed back
#
# Adding a bias of shape $(3,)$ to a batch of shape $(5, 3)$ uses each bias number five times.
# The `Add` node's backward simply returns the incoming $(5, 3)$ gradient for both inputs;
# the engine's `_fit` notices that the bias's node expects $(3,)$ and sums the five copies.
# Calling the pieces by hand shows the two steps:

# %%
x = mg.randn(5, 3, requires_grad=True)
bias = mg.zeros(3, requires_grad=True)
y = x + bias
node = y.grad_fn
g = np.ones((5, 3), dtype=np.float32)
from_op = node.backward(node, g)
print("the op returns shapes", [t.shape for t in from_op])
fitted = engine._fit(node, node.next_nodes[1], from_op[1])
print("the engine hands the bias", fitted.shape, fitted)
assert from_op[1].shape == (5, 3) and fitted.shape == (3,) and np.all(fitted == 5)

# %% [markdown]
# ## Shapes made visible: the Jacobian, its product, and the broadcast sum
#
# For small shapes we can ask the engine for the whole Jacobian of an op, one row per output
# element: backpropagating the one-hot gradient $e_i$ gives row $i$. For
# $y = x \odot w$ with $x$ of shape $(2, 3)$ and $w$ of shape $(3,)$ broadcast over the rows,
# $\partial y/\partial w$ is a $6 \times 3$ matrix. A backward rule never builds it: it returns
# $g^\top J$, the vector-Jacobian product, directly. And because $w$ was broadcast, each column
# of $J$ has two non-zeros, one per row of $x$: multiplying by $g$ sums over the broadcast axis,
# which is the sum `_fit` performs.

# %%
def jacobian_rows(fn, inp):
    """J[i, j] = d out.flat[i] / d inp.flat[j], one backward pass per output element."""
    out = fn(inp)
    J = np.zeros((out.numel(), inp.numel()))
    for i in range(out.numel()):
        onehot = np.zeros(out.numel())
        onehot[i] = 1.0
        inp.grad = None
        out.backward(mg.tensor(onehot.reshape(out.shape)), retain_graph=True)
        J[i] = inp.grad.numpy().ravel()
    return J, out


xj = mg.tensor(np.arange(1.0, 7.0).reshape(2, 3), dtype=mg.float64)
wj = mg.tensor([0.5, -1.0, 2.0], dtype=mg.float64, requires_grad=True)
J, yj = jacobian_rows(lambda w: xj * w, wj)
print("J = dy/dw, shape", J.shape, "\n", J)
gj = np.array([[1.0, 0.0, -1.0], [2.0, 1.0, 0.5]])
wj.grad = None
(xj * wj).backward(mg.tensor(gj))
print("g^T J   =", gj.ravel() @ J)
print("backward =", wj.grad.numpy())
assert np.allclose(gj.ravel() @ J, wj.grad.numpy())
assert np.allclose(gj.ravel() @ J, (gj * xj.numpy()).sum(0))  # the sum over the broadcast rows

fig, ax = plt.subplots(figsize=(3.5, 4))
ax.imshow(J, cmap="RdBu", vmin=-6, vmax=6)
ax.set_xticks(range(3), [f"w[{j}]" for j in range(3)])
ax.set_yticks(range(6), [f"y[{i // 3},{i % 3}]" for i in range(6)])
for (i, j), v in np.ndenumerate(J):
    ax.text(j, i, f"{v:g}", ha="center", va="center", fontsize=8)
ax.set_title("dy/dw for y = x * w, w broadcast over 2 rows")
savefig(fig, "03_jacobian")

# %% [markdown]
# ## Stepping through a backward pass
#
# Now the whole pass on a small network, frame by frame. Each frame shows the graph with the
# gradient every node has received so far; the node running in that step is outlined, and the
# edges on which its `+=` lands are red. We capture the frames from the real engine by wrapping
# each node's `backward` so that it also reports what it returns (the engine calls
# `node.backward(node, g)`, so an attribute set on the node takes the class's place).

# %%
def capture_frames(out, names):
    """Run out.backward() and return the frames: (running node, {node: gradient so far}, edges
    that received gradient in this step)."""
    nodes = topological_order(out.grad_fn)
    so_far, frames = {out.grad_fn: np.ones(out.shape)}, []

    for node in nodes:
        if isinstance(node, op.AccumulateGrad):
            continue

        def spy(ctx, g, node=node, rule=type(node).backward):
            in_grads = rule(ctx, g)
            in_grads = in_grads if isinstance(in_grads, tuple) else (in_grads,)
            landed = []
            for child, ig in zip(node.next_nodes, in_grads):
                if child is not None and ig is not None:
                    ig = fit(np.asarray(ig), child.out_shape, child.out_dtype)
                    so_far[child] = so_far.get(child, 0) + ig
                    landed.append(child)
            frames.append((node, dict(so_far), landed))
            return in_grads
        node.backward = spy
    out.backward()
    return nodes, frames


def frame_graph(nodes, names, running, so_far, landed):
    dot = graphviz.Digraph(graph_attr={"rankdir": "BT", "size": "6,5"},
                           node_attr={"fontsize": "10", "fontname": "Helvetica"})
    for n in nodes:
        g = so_far.get(n)
        shown = "—" if g is None else np.array2string(np.asarray(g), precision=2,
                                                       suppress_small=True)
        style = {"penwidth": "3", "color": "black"} if n is running else {"color": "gray50"}
        shape = "ellipse" if isinstance(n, op.AccumulateGrad) else "box"
        dot.node(str(id(n)), f"{names.get(n, n.name())}\ngrad so far: {shown}", shape=shape,
                 **style)
        for child in n.next_nodes:
            if child is not None:
                hot = n is running and child in landed
                dot.edge(str(id(n)), str(id(child)), color="red" if hot else "gray60",
                         penwidth="2.5" if hot else "1", label="+=" if hot else "")
    return dot


mg.manual_seed(0)
xs = mg.randn(2, 3, dtype=mg.float64)
W1 = mg.randn(3, 2, dtype=mg.float64, requires_grad=True)
b1 = mg.zeros(2, dtype=mg.float64, requires_grad=True)
h = (xs @ W1 + b1).tanh()
loss = (h * h).sum()
names = {W1._acc or W1: "W1", b1._acc or b1: "b1"}
nodes, frames = capture_frames(loss, names)
names = {n: (f"AccumulateGrad({'W1' if n.variable is W1 else 'b1'})"
             if isinstance(n, op.AccumulateGrad) else n.name()) for n in nodes}
for k, (running, so_far, landed) in enumerate(frames):
    print(f"step {k + 1}: {names[running]} runs; += lands on "
          f"{', '.join(names[c] for c in landed)}")
assert np.allclose(so_far[W1._acc], W1.grad.numpy())
assert np.allclose(so_far[b1._acc], b1.grad.numpy())

# %% [markdown]
# The frames as a stepper: in Jupyter (and in the book) the buttons move through the pass. The
# same page is written to `03_backward_stepper.html` in the output folder.

# %%
def stepper_html(svgs, captions):
    """A self-contained HTML widget: one SVG per frame, Previous / Next buttons."""
    uid = f"stepper{abs(hash(tuple(captions))) % 10**8}"
    frames = "".join(
        f'<div class="frame" data-step="{k}" style="display:{"block" if k == 0 else "none"}">'
        f'<p><b>Step {k + 1} of {len(svgs)}</b>: {html.escape(c)}</p>{s}</div>'
        for k, (s, c) in enumerate(zip(svgs, captions)))
    return f"""<div id="{uid}" class="backward-stepper">
<button class="prev">&larr; Previous</button> <button class="next">Next &rarr;</button>
{frames}
<script>
(function() {{
  var root = document.getElementById("{uid}"), k = 0;
  var frames = root.querySelectorAll(".frame");
  function show(j) {{
    k = Math.max(0, Math.min(frames.length - 1, j));
    frames.forEach(function(f, i) {{ f.style.display = i === k ? "block" : "none"; }});
  }}
  root.querySelector(".prev").onclick = function() {{ show(k - 1); }};
  root.querySelector(".next").onclick = function() {{ show(k + 1); }};
}})();
</script></div>"""


captions = [f"{names[r]} runs; += lands on {', '.join(names[c] for c in landed)}"
            for r, _, landed in frames]
if shutil.which("dot"):
    svgs = [frame_graph(nodes, names, r, s, landed).pipe(format="svg").decode()
            for r, s, landed in frames]
    svgs = [s[s.index("<svg"):] for s in svgs]  # drop the XML prologue inside HTML
    page = stepper_html(svgs, captions)
    with open(out_path("03_backward_stepper.html"), "w") as fh:
        fh.write(f"<!doctype html><meta charset='utf-8'><title>backward</title>{page}")
    try:
        from IPython.display import HTML, display
        from _common import INLINE
        if INLINE:
            display(HTML(page))
    except ImportError:
        pass
    assert page.count('class="frame"') == len(frames)
else:
    print("Graphviz `dot` not found: the frames are printed above, not drawn")

# %% [markdown]
# ## A reference engine you can hold in your head
#
# `minigrad/autograd/reference.py` is the backward pass with nothing but the algorithm: a
# topological order, a dictionary of gradients, and the broadcast fit. The library's tests run
# it beside the real engine on the toy Transformer's loss and require the same gradients.

# %%
from minigrad.autograd import reference

print(inspect.getsource(reference.reference_backward))

a = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
w = mg.tensor([[0.5], [1.5]], dtype=mg.float64, requires_grad=True)
out = ((a * w).tanh() + a).sum()
ref = reference_backward(out)
out.backward()
assert np.allclose(ref[a], a.grad.numpy()) and np.allclose(ref[w], w.grad.numpy())

# %% [markdown]
# What does the real engine add, and why?
#
# - **No recursion.** The reference's depth-first search recurses once per node, and Python
#   stops at its recursion limit (`sys.getrecursionlimit()`: 1000 by default, 3000 once
#   IPython is imported, as under Jupyter). The real engine's heap handles a chain of any length.
# - **Freed memory.** After a node's backward has run, its saved arrays are dropped
#   (`node.saved = None`), so activations are given back as the pass goes instead of at the end.
#   A second backward through the same graph then fails with a clear message.
# - **Version counters.** An array saved for backward and then changed in place would give a
#   silently wrong gradient; every tensor counts its in-place changes, and the engine refuses
#   to use a saved array whose count moved.
# - **Hooks.** `register_hook` and `retain_grad` are pre-hooks run as a node's gradient arrives
#   (the mechanism `watch` used above).

# %%
import sys

depth = sys.getrecursionlimit() + 500  # longer than Python lets a function recurse
x_long = mg.tensor(1.0, dtype=mg.float64, requires_grad=True)
y_long = x_long
for _ in range(depth):
    y_long = y_long * 1.0
try:
    reference_backward(y_long)
    raise AssertionError("the recursive reference should hit Python's recursion limit")
except RecursionError:
    print(f"reference engine: RecursionError on a chain of {depth} ops "
          f"(recursion limit {sys.getrecursionlimit()})")
y_long.backward()  # the real engine: no recursion
assert x_long.grad.item() == 1.0

v = mg.tensor([1.0, 2.0], requires_grad=True)
s = v.exp()  # exp saves its output for backward
try:
    with mg.no_grad():
        s.mul_(2)  # changed in place after it was saved
    s.sum().backward()
    raise AssertionError("the engine should refuse a changed saved array")
except RuntimeError as err:
    print("version counter:", str(err).splitlines()[0][:110])

# %% [markdown]
# ## Exercise: the broadcast fit
#
# Write `unbroadcast(g, shape)`: given the gradient `g` of a broadcast result, return the
# gradient of the input of shape `shape` (sum over the axes broadcasting added in front, and
# over the axes where the input had size 1). The checker tries random shapes, shrinks a failure
# to the smallest shape that shows it, and says what it finds wrong.

# %%
from _exercises import check, check_unbroadcast


def unbroadcast(g, shape):
    """Sum `g` down to `shape`, undoing NumPy broadcasting."""
    raise NotImplementedError


check(check_unbroadcast, unbroadcast);

# %% tags=["solution"] jupyter={"source_hidden": true}
# Solution
def unbroadcast(g, shape):
    """Sum `g` down to `shape`, undoing NumPy broadcasting."""
    lead = g.ndim - len(shape)
    g = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    return g.sum(axis=axes, keepdims=True) if axes else g


assert check(check_unbroadcast, unbroadcast)

# %% [markdown]
# ## Test yourself
#
# **1.** The engine pops the node with the largest `sequence_nr` first. Give a graph in which
# popping the *oldest* node first would be wrong.
#
# <details><summary>Answer</summary>
#
# Any graph where a node feeds two others, such as the diamond above: popped oldest first, the
# leaf-side node `a * b` could run before `f`, with no gradient yet (or only part of it). Newest
# first guarantees that everything that could send gradient to a node has already run.
#
# </details>

# %%
a = mg.tensor(2.0, requires_grad=True)
d, e = a * 3, a * 4
f = d * e
assert f.grad_fn.sequence_nr > d.grad_fn.sequence_nr and f.grad_fn.sequence_nr > e.grad_fn.sequence_nr

# %% [markdown]
# **2.** Why does `y = x + b` with `x` of shape $(64, 20, 128)$ and `b` of shape $(128,)` give
# `b.grad` the shape $(128,)$, and what does each of its numbers add up?
#
# <details><summary>Answer</summary>
#
# `_fit` sums the incoming $(64, 20, 128)$ gradient over the two leading axes that broadcasting
# added: each of the 128 numbers is the sum of $64 \times 20 = 1280$ gradients, one per token
# the bias was added to.
#
# </details>

# %%
xb = mg.randn(4, 5, 6)
bb = mg.zeros(6, requires_grad=True)
(xb + bb).sum().backward()
assert bb.grad.shape == (6,) and np.all(bb.grad.numpy() == 20)
print("all checks of tutorial 3 pass")
