"""Checkers for the engine tutorials (1, 2, 3 and 5): the topological order, the chain rule by
hand, the broadcast fit and a Hessian-vector product (tutorial 4's rules: _exercises_rules.py).

Inputs are small whole numbers, so a shrunk failing input reads like a worked example. Each
checker needs only the learner's function: whatever else it runs is minigrad's or NumPy's.
"""
import math

import numpy as np

from _exercise_search import (Wrong, as_array, call, compare, expect, factor_hint, float32_note,
                              hypothesis_modules, search, show, whole_arrays)


# -- 01: the topological order -----------------------------------------------------------------

class _Node:
    """A bare graph node for the checker: a name and the nodes it was made from."""

    def __init__(self, name, parents=()):
        self.name, self.parents = name, tuple(parents)

    def __repr__(self):
        return self.name


def _graphs(st):
    """Graphs as parent lists by index: node i uses earlier nodes, the same one twice allowed
    (as in a * a); the last node is the root and uses at least one node."""
    @st.composite
    def graph(draw):
        n = draw(st.integers(1, 7))
        parents = [()]
        for i in range(1, n):
            p = draw(st.lists(st.integers(0, i - 1), max_size=3))
            parents.append(tuple(p) if p or i < n - 1 else (i - 1,))
        return tuple(parents)
    return graph()


def _reachable(root):
    seen, todo = {root}, [root]
    while todo:
        for p in todo.pop().parents:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def _topological_verdict(fn, spec):
    nodes = []
    for i, parents in enumerate(spec):
        nodes.append(_Node(chr(ord("a") + i), [nodes[j] for j in parents]))
    root = nodes[-1]
    graph = ", ".join(f"{n.name} <- ({' '.join(p.name for p in n.parents)})" if n.parents
                      else f"{n.name} (leaf)" for n in nodes)
    where = f"on the graph {graph} (root {root.name})"
    got = call(fn, where, root)
    try:
        got = list(got)
    except TypeError:
        raise Wrong(f"return a list of nodes, got {type(got).__name__}") from None
    names = [getattr(n, "name", repr(n)) for n in got]
    dupes = sorted({m for m in names if names.count(m) > 1})
    if dupes:
        raise Wrong(f"{where}, node {dupes[0]} is listed {names.count(dupes[0])} times in "
                    f"{names}: remember which nodes you have visited (a set) and skip them, or "
                    f"a node used twice is processed twice")
    want = _reachable(root)
    missing = sorted(n.name for n in want - set(got))
    expect(not missing, f"{where}, the order {names} misses {missing}: follow every parent, "
                        f"and the parents of parents")
    extra = sorted(n.name for n in set(got) - want)
    expect(not extra, f"{where}, the order {names} has {extra}, which root does not use")
    pos = {n: i for i, n in enumerate(got)}
    if len(got) > 1 and got[0] is root:
        raise Wrong(f"{where}, you returned {names}: root first, so the order is reversed; a "
                    f"node goes in the list after all its parents (the engine reverses the "
                    f"list when it runs backward)")
    for n in got:
        for p in n.parents:
            expect(pos[p] < pos[n], f"{where}, {n.name} comes before its parent {p.name} in "
                                    f"{names}: append a node only once all its parents have "
                                    f"been visited")
    expect(got[-1] is root, f"{where}, root should come last in {names}")


def check_topological_order(fn):
    """fn(root) -> every node behind root once, each after its parents, root last."""
    _, st = hypothesis_modules()
    typical = [((), (0,), (0,), (1, 2)), ((), (0,), (1,), (2, 0)),
               ((), (), (0, 1), (2, 0), (3, 2, 1))]
    return search(_graphs(st), lambda spec: _topological_verdict(fn, spec), max_examples=60,
                  typical=typical)


# -- 02: the chain rule ------------------------------------------------------------------------

def _neuron_verdict(fn, case):
    x, w, b, y = case
    h = math.tanh(w * x + b)
    delta = 2 * (h - y) * (1 - h * h)
    where = f"at x={x}, w={w}, b={b}, y={y}"
    got = call(fn, where, x, w, b, y)
    expect(len(got) == 3, "return three numbers: (dL/dw, dL/db, dL/dx)")
    note = None
    for name, g, want in zip(("dL/dw", "dL/db", "dL/dx"), got, (delta * x, delta, delta * w)):
        g, low = as_array(g, "neuron_gradients")
        kind = compare(g, np.asarray(want))
        if kind in ("exact", "float32"):
            note = note or float32_note("neuron_gradients", kind, low)
            continue
        g = float(g)
        hint = factor_hint(np.asarray(g), np.asarray(want))
        if hint == "off by a factor 2: it is 1/2 of the right value":
            hint += " (d(u^2)/du = 2u: the 2 is missing)"
        elif hint == "the sign is flipped":
            hint += " (dL/dh = 2 (h - y), not 2 (y - h))"
        elif math.isclose(g, want / (1 - h * h), rel_tol=1e-6):
            hint = "the factor dh/dz = 1 - tanh(z)^2 is missing"
        elif h * h != 0 and math.isclose(g, want / (1 - h * h) * h * h, rel_tol=1e-6):
            hint = "dh/dz is 1 - tanh(z)^2, not tanh(z)^2"
        raise Wrong(f"{where}, {name} is {g:.6g}, expected {want:.6g}"
                    + (f": {hint}" if hint else ""))
    return note


def check_neuron_gradients(fn):
    """fn(x, w, b, y) -> (dL/dw, dL/db, dL/dx) for L = (tanh(w x + b) - y)^2."""
    _, st = hypothesis_modules()
    halves = st.integers(-4, 4).map(lambda n: n / 2)
    return search(st.tuples(halves, halves, halves, halves),
                  lambda case: _neuron_verdict(fn, case), max_examples=40,
                  typical=[(1.5, 0.8, -0.2, 0.5), (-0.3, 2.0, 0.4, -1.0), (0.7, -1.1, 0.0, 0.2)])


# -- 03: the broadcast fit ---------------------------------------------------------------------

def _broadcasts(st):
    """(input shape, gradient g of the broadcast result): leading axes added, size-1 stretched."""
    @st.composite
    def case(draw):
        shape = tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
        lead = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
        big = lead + tuple(draw(st.integers(1, 3)) if n == 1 else n for n in shape)
        return shape, draw(whole_arrays(st, big, -3, 3))
    return case()


def _unbroadcast_verdict(fn, shape, g):
    lead = g.ndim - len(shape)
    want = g.sum(axis=tuple(range(lead))) if lead else g
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and want.shape[i] != 1)
    want = want.sum(axis=axes, keepdims=True) if axes else want
    where = f"for an input of shape {shape} and g = {show(g)} of shape {g.shape}"
    got, low = as_array(call(fn, where, g.copy(), shape), "unbroadcast")
    if got.shape != tuple(shape):
        if got.ndim > len(shape) and got.shape[got.ndim - len(shape):] == tuple(shape):
            raise Wrong(f"{where}: gradient of shape {got.shape} for an input of shape {shape}: "
                        f"the sum over the broadcast axis is missing (the leading axes that "
                        f"broadcasting added)")
        if got.shape == g.shape:
            raise Wrong(f"{where}, g came back unchanged: sum over the axes broadcasting added "
                        f"in front and over the axes where the input has size 1")
        if got.ndim > len(shape):
            raise Wrong(f"{where}: gradient of shape {got.shape} for an input of shape {shape}: "
                        f"the sum over the broadcast axis is missing (the leading axes that "
                        f"broadcasting added)")
        if got.size == int(np.prod(shape)):
            raise Wrong(f"{where}, you returned shape {got.shape}: keep the size-1 axes (sum "
                        f"with keepdims=True)")
        raise Wrong(f"{where}: gradient of shape {got.shape} for an input of shape {shape}: sum "
                    f"also over the axes where the input has size 1")
    kind = compare(got, want)
    if kind in ("exact", "float32"):
        return float32_note("unbroadcast", kind, low)
    n_copies = g.size // max(want.size, 1)
    if n_copies > 1 and np.allclose(got * n_copies, want):
        raise Wrong(f"{where}, you returned {show(got)}, the mean of the copies: every copy's "
                    f"gradient flows to the same element, so they add up (sum, not mean)")
    raise Wrong(f"{where}, expected {show(want)}, got {show(got)}")


def check_unbroadcast(fn):
    """fn(g, shape) -> g summed over the axes broadcasting added or stretched, in `shape`."""
    _, st = hypothesis_modules()
    rng = np.random.default_rng(11)
    typical = [(s, rng.integers(-3, 4, big).astype(np.float64)) for s, big in (
        ((1,), (1, 1)), ((3,), (2, 3)), ((2, 1), (2, 3)), ((), (2, 2)), ((2, 1, 3), (4, 2, 5, 3)))]
    return search(_broadcasts(st), lambda case: _unbroadcast_verdict(fn, *case), max_examples=50,
                  typical=typical)


# -- 05: a Hessian-vector product --------------------------------------------------------------

def _hvp_parts(A, x, v):
    """(H v, the gradient of f, H) for f(x) = x^T A x / 2 + sum(x^4) / 4."""
    hessian = (A + A.T) / 2 + np.diag(3 * x ** 2)
    return hessian @ v, A @ x / 2 + A.T @ x / 2 + x ** 3, hessian


def _hvp_run(fn, A, x, v):
    import minigrad as mg

    def f(t):
        return (t * (mg.tensor(A) @ t)).sum() / 2 + (t ** 4).sum() / 4
    return as_array(fn(f, mg.tensor(x), mg.tensor(v)), "hvp")


_HVP_MISTAKES = [
    ("that is the gradient of f; take the gradient of (gradient . v) once more",
     lambda A, x, v: _hvp_parts(A, x, v)[1]),
    ("that is the gradient times v, element by element; H v is the gradient of the dot product "
     "(gradient . v), with the gradient kept as a graph",
     lambda A, x, v: _hvp_parts(A, x, v)[1] * v),
    ("that is H times a vector of ones: weight the gradient by v before the second grad",
     lambda A, x, v: _hvp_parts(A, x, v)[2] @ np.ones_like(v))]


def _hvp_verdict(fn, A, x, v):
    where = (f"for f(x) = x^T A x / 2 + sum(x^4) / 4 with A = {show(A)}, at x = {show(x)}, "
             f"v = {show(v)}")
    want = _hvp_parts(A, x, v)[0]
    try:
        got, low = _hvp_run(fn, A, x, v)
    except NotImplementedError:
        raise
    except RuntimeError as e:
        if "does not require grad" in str(e):
            raise Wrong(f"{where}: the first gradient has no graph to differentiate: pass "
                        f"create_graph=True to the first grad (and make x require grad)") from e
        raise Wrong(f"{where}, your function raised RuntimeError: {e}") from e
    expect(got.shape == want.shape, f"{where}, hvp should return shape {want.shape}, got "
                                    f"{got.shape}")
    kind = compare(got, want)
    if kind in ("exact", "float32"):
        return float32_note("hvp", kind, low)
    where += f", H v = {show(want)}, yours {show(got)}"
    rng = np.random.default_rng(0)
    generic = rng.standard_normal(A.shape), rng.standard_normal(x.shape), rng.standard_normal(
        v.shape)
    runs = [((A, x, v), got), (generic, _hvp_run(fn, *generic)[0])]
    for label, mistake in _HVP_MISTAKES:
        if all(np.allclose(out, mistake(*args), atol=1e-9) for args, out in runs):
            raise Wrong(f"{where}: {label}")
    hint = factor_hint(got, want)
    raise Wrong(f"{where}" + (f": {hint}" if hint else ""))


def check_hvp(fn):
    """fn(f, x, v) -> H v for the Hessian H of a scalar f at the tensor x, v shaped like x."""
    _, st = hypothesis_modules()

    @st.composite
    def cases(draw):
        n = draw(st.integers(1, 3))
        # A is not symmetric in general: the Hessian of x^T A x / 2 is (A + A^T) / 2
        return tuple(draw(whole_arrays(st, s)) for s in ((n, n), (n,), (n,)))
    rng = np.random.default_rng(3)
    typical = [(rng.standard_normal((4, 4)), rng.standard_normal(4), rng.standard_normal(4))]
    return search(cases(), lambda case: _hvp_verdict(fn, *case), max_examples=20,
                  typical=typical)
