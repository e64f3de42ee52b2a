"""Checkers for the tutorials' "implement it" exercises.

Each `check_*` function takes the learner's function, tries it on small cases against minigrad
(or a formula), and raises `Wrong` with a sentence saying what is wrong at the first problem.
`check(checker, fn)` runs one, prints the verdict and returns True only if all is well, so an
unfinished exercise (a function that raises NotImplementedError) never stops a tutorial.
"""
import math

import numpy as np


class Wrong(AssertionError):
    """The learner's answer is wrong; the message says how."""


def check(checker, fn):
    """Run `checker(fn)`; print "correct", "not implemented yet" or what is wrong; return bool."""
    try:
        checker(fn)
    except NotImplementedError:
        print(f"{fn.__name__}: not implemented yet (replace the `raise NotImplementedError`)")
        return False
    except Wrong as e:
        print(f"{fn.__name__}: not yet right: {e}")
        return False
    print(f"{fn.__name__}: correct")
    return True


def _expect(condition, message):
    if not condition:
        raise Wrong(message)


def _array(value, who):
    try:
        return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise Wrong(f"{who} should return an array or a tensor, got {type(value).__name__}") from e


def _shape(out, expected, who):
    _expect(out.shape == expected, f"{who} should return shape {expected}, got {out.shape}")


# -- 01: the chain rule ------------------------------------------------------------------------

def check_neuron_gradients(fn):
    """fn(x, w, b, y) -> (dL/dw, dL/db, dL/dx) for L = (tanh(w x + b) - y)^2."""
    for x, w, b, y in [(1.5, 0.8, -0.2, 0.5), (-0.3, 2.0, 0.4, -1.0), (0.7, -1.1, 0.0, 0.2)]:
        h = math.tanh(w * x + b)
        delta = 2 * (h - y) * (1 - h * h)
        got = fn(x, w, b, y)
        _expect(len(got) == 3, "return three numbers: (dL/dw, dL/db, dL/dx)")
        for name, g, want in zip(("dL/dw", "dL/db", "dL/dx"), got, (delta * x, delta, delta * w)):
            if not math.isclose(float(g), want, rel_tol=1e-6, abs_tol=1e-12):
                hint = ""
                if math.isclose(float(g), want / (1 - h * h), rel_tol=1e-6):
                    hint = " (the factor dh/dz = 1 - tanh(z)^2 is missing)"
                raise Wrong(f"{name} at x={x}, w={w}, b={b}, y={y} is {float(g):.6f}, "
                            f"expected {want:.6f}{hint}")


# -- 01: the topological order -----------------------------------------------------------------

class _Node:
    """A bare graph node for the checker: a name and the nodes it was made from."""

    def __init__(self, name, parents=()):
        self.name, self.parents = name, tuple(parents)

    def __repr__(self):
        return self.name


def _random_graphs():
    """Random graphs, smallest first, so the first failure is the smallest that shows it.
    A node may use the same parent twice (as in a * a)."""
    rng = np.random.default_rng(7)
    yield [_Node("a")]
    for n in range(2, 9):
        for _ in range(6):
            nodes = []
            for i in range(n):
                k = int(rng.integers(0, min(i, 3) + 1)) if i else 0
                parents = [nodes[int(j)] for j in rng.integers(0, i, k)] if k else []
                if i == n - 1 and not parents:  # the root uses something, so the graph has edges
                    parents = [nodes[-1]]
                nodes.append(_Node(chr(ord("a") + i), parents))
            yield nodes


def _describe(nodes):
    return ", ".join(f"{n.name} <- ({' '.join(p.name for p in n.parents)})" if n.parents
                     else f"{n.name} (leaf)" for n in nodes)


def _reachable(root):
    seen, todo = {root}, [root]
    while todo:
        for p in todo.pop().parents:
            if p not in seen:
                seen.add(p)
                todo.append(p)
    return seen


def check_topological_order(fn):
    """fn(root) -> every node behind root once, each after its parents, root last."""
    for nodes in _random_graphs():
        root, where = nodes[-1], f"on the graph {_describe(nodes)} (root {nodes[-1].name})"
        got = fn(root)
        try:
            got = list(got)
        except TypeError:
            raise Wrong(f"return a list of nodes, got {type(got).__name__}") from None
        names = [getattr(n, "name", repr(n)) for n in got]
        dupes = sorted({m for m in names if names.count(m) > 1})
        if dupes:
            raise Wrong(f"{where} node {dupes[0]} is listed {names.count(dupes[0])} times in "
                        f"{names}: remember which nodes you have visited (a set) and skip them, "
                        f"or a node used twice is processed twice")
        want = _reachable(root)
        missing = sorted(n.name for n in want - set(got))
        _expect(not missing, f"{where} the order {names} misses {missing}: follow every "
                             f"parent, and the parents of parents")
        extra = sorted(n.name for n in set(got) - want)
        _expect(not extra, f"{where} the order {names} has {extra}, which root does not use")
        pos = {n: i for i, n in enumerate(got)}
        if len(got) > 1 and got[0] is root:
            raise Wrong(f"{where} you returned {names}: root first, so the order is reversed; "
                        f"a node goes in the list after all its parents (the engine reverses "
                        f"the list when it runs backward)")
        for n in got:
            for p in n.parents:
                _expect(pos[p] < pos[n], f"{where} {n.name} comes before its parent {p.name} in "
                                         f"{names}: append a node only once all its parents "
                                         f"have been visited")
        _expect(got[-1] is root, f"{where} root should come last in {names}")


# -- 02: one head of attention -----------------------------------------------------------------

def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def check_attention(fn):
    """fn(Q, K, V) -> softmax(Q K^T / sqrt(d_k)) V for arrays (T, d_k), (S, d_k), (S, d_v)."""
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((4, 8)), rng.standard_normal((6, 8)), rng.standard_normal((6, 3))
    out = _array(fn(Q, K, V), "attention")
    _shape(out, (4, 3), "attention(Q (4, 8), K (6, 8), V (6, 3))")
    want = _softmax(Q @ K.T / math.sqrt(8)) @ V
    if np.allclose(out, want, atol=1e-6):
        return
    if np.allclose(out, _softmax(Q @ K.T) @ V, atol=1e-6):
        raise Wrong("the scores are not divided by sqrt(d_k)")
    if np.allclose(out, (_softmax((Q @ K.T / math.sqrt(8)).T).T) @ V, atol=1e-6):
        raise Wrong("the softmax runs down the columns; each query's row must sum to 1")
    raise Wrong(f"largest difference from softmax(Q K^T / sqrt(d_k)) V is "
                f"{np.abs(out - want).max():.3g}")


# -- 03: splitting heads -----------------------------------------------------------------------

def check_split_heads(fn):
    """fn(x, n_heads): (B, T, E) tensor -> (B, H, T, E / H), head h holding features h*d:(h+1)*d."""
    import minigrad as mg

    x_np = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8)
    out = _array(fn(mg.tensor(x_np), 4), "split_heads")
    _shape(out, (2, 4, 3, 2), "split_heads(x (2, 3, 8), 4)")
    want = x_np.reshape(2, 3, 4, 2).transpose(0, 2, 1, 3)
    if np.array_equal(out, want):
        return
    if np.array_equal(out, x_np.reshape(2, 4, 3, 2)):
        raise Wrong("reshaping (B, T, E) straight to (B, H, T, d_k) mixes positions into heads: "
                    "reshape to (B, T, H, d_k) first, then move the head axis forward")
    raise Wrong("out[b, h, t] should be x[b, t, h*d_k:(h+1)*d_k]")


# -- 04: the causal mask -----------------------------------------------------------------------

def check_causal_mask(fn):
    """fn(T) -> (T, T) float mask: 0 on and below the diagonal, -inf above."""
    for T in (1, 3, 6):
        m = _array(fn(T), "causal_mask")
        _shape(m, (T, T), f"causal_mask({T})")
        above = np.triu(np.ones((T, T), bool), 1)
        if T > 1 and np.all(np.isneginf(m[above.T])):
            raise Wrong("the mask blocks the past: -inf belongs above the diagonal (keys after "
                        "the query), not below")
        _expect(np.all(m[~above] == 0), f"causal_mask({T}) must be 0 on and below the diagonal "
                                        f"(a position may see itself and the past)")
        _expect(np.all(np.isneginf(m[above])), f"causal_mask({T}) must be -inf above the "
                                               f"diagonal (0 or a large finite number is not)")


# -- 05: the sinusoid table --------------------------------------------------------------------

def check_sinusoid_table(fn):
    """fn(max_len, d_model) -> (max_len, d_model): sin at even, cos at odd dimensions."""
    from minigrad.nn import sinusoidal_table

    P = _array(fn(10, 16), "sinusoid_table")
    _shape(P, (10, 16), "sinusoid_table(10, 16)")
    want = sinusoidal_table(10, 16, dtype=np.float64)
    if np.allclose(P, want, atol=1e-6):
        return
    _expect(np.allclose(P[0], np.tile([0.0, 1.0], 8), atol=1e-6),
            "row 0 should be [0, 1, 0, 1, ...]: sin(0) at even and cos(0) at odd dimensions")
    _expect(np.allclose(P[:, 0], np.sin(np.arange(10)), atol=1e-6),
            "dimension 0 should be sin(j): the first frequency is 1")
    raise Wrong("the frequencies are off: pair (2i, 2i+1) uses 1 / 10000^(2i / d_model)")


# -- 06: layer norm ----------------------------------------------------------------------------

def check_layer_norm(fn):
    """fn(x, eps) -> x normalised over its last axis (biased variance), no gamma or beta."""
    rng = np.random.default_rng(1)
    x = rng.normal(3.0, 2.0, (2, 5, 4))
    out = _array(fn(x, 1e-5), "layer_norm")
    _shape(out, x.shape, "layer_norm(x (2, 5, 4))")
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    if np.allclose(out, want, atol=1e-6):
        return
    bn = (x - x.mean((0, 1), keepdims=True)) / np.sqrt(x.var((0, 1), keepdims=True) + 1e-5)
    if np.allclose(out, bn, atol=1e-6):
        raise Wrong("that is batch norm (statistics over the batch and time axes); layer norm "
                    "takes them over each token's own features, the last axis")
    unbiased = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, ddof=1, keepdims=True) + 1e-5)
    if np.allclose(out, unbiased, atol=1e-6):
        raise Wrong("use the biased variance (divide by D, not D - 1), as the formula does")
    raise Wrong("each token's row should come out with mean 0 and variance 1")


# -- 07: Add & Norm ----------------------------------------------------------------------------

def check_add_and_norm(fn):
    """fn(x, sublayer, norm, norm_first) -> post-norm norm(x + f(x)) or pre-norm x + f(norm(x))."""
    import minigrad as mg
    from minigrad import nn

    mg.manual_seed(0)
    sub, norm = nn.Linear(6, 6), nn.LayerNorm(6)
    with mg.no_grad():
        norm.weight.copy_(np.linspace(0.5, 2.0, 6))
    x = mg.randn(2, 3, 6) * 3 + 1
    post, pre = norm(x + sub(x)).numpy(), (x + sub(norm(x))).numpy()
    got_post = _array(fn(x, sub, norm, False), "add_and_norm")
    got_pre = _array(fn(x, sub, norm, True), "add_and_norm")
    if np.allclose(got_post, pre, atol=1e-5) and np.allclose(got_pre, post, atol=1e-5):
        raise Wrong("the two variants are swapped: norm_first=True is pre-norm, x + f(norm(x))")
    _expect(np.allclose(got_post, post, atol=1e-5),
            "norm_first=False (the paper's post-norm) should return norm(x + sublayer(x))")
    _expect(np.allclose(got_pre, pre, atol=1e-5),
            "norm_first=True (pre-norm) should return x + sublayer(norm(x))")


# -- 08: the warm-up schedule ------------------------------------------------------------------

def check_noam(fn):
    """fn(step, d_model, warmup) -> d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)."""
    for step in (1, 1000, 4000, 16000):
        want = 512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5)
        got = float(fn(step, 512, 4000))
        if math.isclose(got, want, rel_tol=1e-9):
            continue
        if math.isclose(got, 512 ** -0.5 * max(step ** -0.5, step * 4000 ** -1.5), rel_tol=1e-9):
            raise Wrong(f"step {step}: use the minimum of the two curves, not the maximum")
        if math.isclose(got, min(step ** -0.5, step * 4000 ** -1.5), rel_tol=1e-9):
            raise Wrong(f"step {step}: the factor d_model^-0.5 is missing")
        raise Wrong(f"rate at step {step} is {got:.4g}, expected {want:.4g}")


# -- 09: one BPE merge -------------------------------------------------------------------------

def check_merge_pair(fn):
    """fn(symbols, pair) -> symbols with every adjacent occurrence of pair joined, left to right."""
    cases = [(["▁", "l", "o", "w"], ("l", "o"), ["▁", "lo", "w"]),
             (["▁", "a", "a", "a"], ("a", "a"), ["▁", "aa", "a"]),
             (["▁", "a", "b", "a", "b"], ("a", "b"), ["▁", "ab", "ab"]),
             (["▁", "x"], ("y", "z"), ["▁", "x"])]
    for symbols, pair, want in cases:
        got = list(fn(list(symbols), pair))
        _expect(got == want, f"merging {pair} in {symbols} should give {want}, got {got}"
                + (" (after a merge, skip the symbol just used)" if pair == ("a", "a") else ""))


# -- 10: attention over a graph ----------------------------------------------------------------

def check_neighbour_softmax(fn):
    """fn(scores (N, N), adjacency (N, N) bool) -> weights over each node's neighbours and itself."""
    rng = np.random.default_rng(2)
    scores = rng.standard_normal((4, 4))
    adj = np.array([[0, 1, 1, 0], [1, 0, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0]], bool)
    out = _array(fn(scores, adj), "neighbour_softmax")
    _shape(out, (4, 4), "neighbour_softmax(scores (4, 4), adjacency (4, 4))")
    allowed = adj | np.eye(4, dtype=bool)
    _expect(np.allclose(out.sum(1), 1.0), "each node's weights should sum to 1")
    _expect(np.all(out[~allowed] == 0), "pairs without an edge must get weight exactly 0")
    _expect(np.all(out[np.eye(4, dtype=bool)] > 0), "a node attends to itself too: N(i) "
                                                   "includes i")
    want = _softmax(np.where(allowed, scores, -np.inf))
    _expect(np.allclose(out, want, atol=1e-6), "the weights should be a softmax of the scores "
                                               "over the allowed pairs")


# -- A1: a stable softmax ----------------------------------------------------------------------

def check_stable_softmax(fn):
    """fn(x (N, C)) -> softmax over the last axis, without overflow for large scores."""
    x = np.array([[1.0, 2.0, 3.0], [1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 5.0]])
    with np.errstate(all="ignore"):
        out = _array(fn(x), "softmax")
    _shape(out, x.shape, "softmax(x (3, 3))")
    _expect(np.all(np.isfinite(out)), "scores of 1000 overflow exp(): subtract each row's "
                                      "maximum first (the result does not change)")
    _expect(np.allclose(out, _softmax(x), atol=1e-9), "each row should be exp(x) / sum(exp(x))")


CHECKERS = {f.__name__: f for f in (
    check_topological_order, check_neuron_gradients, check_attention, check_split_heads, check_causal_mask,
    check_sinusoid_table, check_layer_norm, check_add_and_norm, check_noam, check_merge_pair,
    check_neighbour_softmax, check_stable_softmax)}
