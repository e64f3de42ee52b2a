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


# -- 02: the chain rule ------------------------------------------------------------------------

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


# -- 03: the broadcast fit ---------------------------------------------------------------------

def _broadcast_cases():
    """(input shape, broadcast shape) pairs, smallest first."""
    yield (1,), (1, 1)
    yield (1,), (3,)
    yield (3,), (2, 3)
    yield (2, 1), (2, 3)
    yield (1, 3), (4, 3)
    yield (), (2, 2)
    yield (2, 1, 3), (4, 2, 5, 3)
    yield (3, 4), (3, 4)


def check_unbroadcast(fn):
    """fn(g, shape) -> g summed over the axes broadcasting added or stretched, in `shape`."""
    rng = np.random.default_rng(11)
    for shape, big in _broadcast_cases():
        g = rng.integers(-3, 4, big).astype(np.float64)
        lead = len(big) - len(shape)
        want = g.sum(axis=tuple(range(lead))) if lead else g
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and want.shape[i] != 1)
        want = want.sum(axis=axes, keepdims=True) if axes else want
        got = _array(fn(g.copy(), shape), "unbroadcast")
        where = f"for a gradient of shape {big} and an input of shape {shape}"
        if got.shape != tuple(shape):
            if got.shape == g.shape:
                raise Wrong(f"{where}, g came back unchanged: sum over the broadcast axes")
            if got.ndim > len(shape):
                raise Wrong(f"gradient of shape {got.shape} for an input of shape {shape}: the "
                            f"sum over the broadcast axis is missing (the leading axes that "
                            f"broadcasting added)")
            if got.size == int(np.prod(shape)):
                raise Wrong(f"{where}, you returned shape {got.shape}: keep the size-1 axes "
                            f"(sum with keepdims=True)")
            raise Wrong(f"gradient of shape {got.shape} for an input of shape {shape}: sum "
                        f"also over the axes where the input has size 1")
        if np.allclose(got, want):
            continue
        n_copies = g.size // max(want.size, 1)
        if n_copies > 1 and np.allclose(got * n_copies, want):
            raise Wrong(f"{where}, the values are the mean of the copies: every copy's "
                        f"gradient flows to the same element, so they add up (sum, not mean)")
        raise Wrong(f"{where}, expected {want.tolist()}, got {got.tolist()}")


# -- 04: backward rules ------------------------------------------------------------------------
#
# Each rule is wrapped in a minigrad `Function` and checked by `gradcheck` on random float64
# inputs, smallest shapes first, so the failure reported is the smallest one that shows the
# mistake. When gradcheck fails the checker compares the answer with the usual mistakes and names
# the one it matches.

def _learner_function(forward, backward):
    """A Function whose forward is the library's and whose backward is the learner's rule."""
    from minigrad.autograd import Function

    class LearnerRule(Function):
        @staticmethod
        def forward(ctx, *arrays):
            ctx.save_for_backward(*arrays)
            return forward(*arrays)

        @staticmethod
        def backward(ctx, grad):
            return backward(*ctx.saved_tensors, grad)
    return LearnerRule


def _as_tuple(value, n, who):
    value = value if isinstance(value, (tuple, list)) else (value,)
    _expect(len(value) == n, f"{who} should return {n} gradient{'s' * (n > 1)}, got {len(value)}")
    return tuple(_array(v, who) for v in value)


def _check_rule(who, cases, forward, learner, reference, mistakes, names):
    """cases: lists of float64 input arrays (smallest first); learner/reference(*inputs, G)."""
    import minigrad as mg
    from minigrad.autograd import gradcheck

    rng = np.random.default_rng(3)
    for inputs in cases:
        shapes = " and ".join(f"{n} {a.shape}" for n, a in zip(names, inputs))
        G = rng.standard_normal(np.shape(forward(*inputs)))
        want = reference(*inputs, G)
        got = _as_tuple(learner(*[a.copy() for a in inputs], G.copy()), len(want), who)
        for n, g, w in zip(names, got, want):
            if g.shape != w.shape:
                extra = ""
                if g.size == w.size or (g.ndim == w.ndim and g.shape == w.shape[::-1]):
                    extra = " (a transpose is missing or misplaced)"
                raise Wrong(f"for {shapes}, the gradient of {n} has shape {g.shape}; it must have "
                            f"{n}'s shape {w.shape}{extra}")
        fn = _learner_function(forward, lambda *a: _as_tuple(learner(*a), len(want), who))
        tensors = [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in inputs]
        if gradcheck(fn.apply, tensors, raise_exception=False):
            continue
        ones = reference(*inputs, np.ones_like(G))
        if all(np.allclose(g, w, atol=1e-8) for g, w in zip(got, ones)):
            raise Wrong(f"for {shapes}: the incoming gradient G is not used; the chain rule "
                        f"multiplies the local derivative by it (a test with G = 1 everywhere, "
                        f"such as .sum().backward(), cannot see this)")
        for label, mistake in mistakes:
            wrong = mistake(*inputs, G)
            wrong = wrong if isinstance(wrong, tuple) else (wrong,)
            if all(w is None or np.allclose(g, w, atol=1e-8) for g, w in zip(got, wrong)):
                raise Wrong(f"for {shapes}: {label}")
        worst = max(zip(names, got, want), key=lambda t: np.abs(t[1] - t[2]).max())
        diff = np.abs(worst[1] - worst[2]).max()
        scale = np.abs(worst[2]).max() + 1e-12
        if diff / scale < 1e-5:
            raise Wrong(f"for {shapes}, the gradient of {worst[0]} is off by {diff:.2g}, about "
                        f"float32 rounding: compute in float64 (the inputs are float64)")
        ratio = np.sum(worst[1] * worst[2]) / max(np.sum(worst[2] ** 2), 1e-300)
        if np.allclose(worst[1], ratio * worst[2], atol=1e-8) and abs(ratio - 1) > 1e-3:
            raise Wrong(f"for {shapes}, the gradient of {worst[0]} is {ratio:.3g} times the right "
                        f"one: a constant factor is wrong")
        raise Wrong(f"for {shapes}, gradcheck disagrees with your gradient of {worst[0]} (largest "
                    f"difference {diff:.3g})")


def _shapes(dims, seed=0):
    """Random float64 arrays for each tuple of shapes in `dims`."""
    rng = np.random.default_rng(seed)
    for shapes in dims:
        yield [rng.standard_normal(s) for s in shapes]


def check_matmul_backward(fn):
    """fn(A (n, k), B (k, m), G (n, m)) -> (dA, dB) for C = A @ B."""
    dims = [((1, 1), (1, 1)), ((2, 3), (3, 1)), ((1, 2), (2, 3)), ((3, 2), (2, 4)),
            ((4, 4), (4, 4)), ((2, 5), (5, 3))]
    _check_rule("matmul_backward", _shapes(dims), lambda A, B: A @ B, fn,
                lambda A, B, G: (G @ B.T, A.T @ G),
                [("dA should be G B^T (G times B transposed), not G B",
                  lambda A, B, G: (G @ B if G.shape[1] == B.shape[0] else None, None)),
                 ("dB should be A^T G: A transposed, on the left",
                  lambda A, B, G: (None, G.T @ A if A.shape == G.shape else None)),
                 ("dA and dB are swapped", lambda A, B, G: (A.T @ G, G @ B.T)
                  if A.shape == B.shape else (None, None))], ("A", "B"))


def _softmax_rows(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def check_softmax_backward(fn):
    """fn(y, g) -> dL/dx for y = softmax(x) over the last axis and g = dL/dy."""
    dims = [((1, 1),), ((1, 3),), ((2, 3),), ((3, 4),), ((2, 3, 5),)]

    def learner(x, G):
        return fn(_softmax_rows(x), G)

    def mistake(rule):
        return lambda x, G: rule(_softmax_rows(x), G)

    _check_rule("softmax_backward", _shapes(dims), _softmax_rows, learner,
                lambda x, G: (_softmax_rows(x) * (G - (G * _softmax_rows(x)).sum(-1, keepdims=True)),),
                [("that is only the Jacobian's diagonal y(1 - y); the off-diagonal terms -y_i y_j "
                  "are missing: dx = y * (g - sum(g * y))", mistake(lambda y, g: g * y * (1 - y))),
                 ("the sum runs over the whole array; each row is its own softmax: sum over the "
                  "last axis with keepdims", mistake(lambda y, g: y * (g - (g * y).sum()))),
                 ("subtract sum(g * y) (weighted by y), not sum(g)",
                  mistake(lambda y, g: y * (g - g.sum(-1, keepdims=True))))], ("x",))


def _normalise(x, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + eps)


def check_layer_norm_backward(fn):
    """fn(x, g, eps) -> dL/dx for y = (x - mean) / sqrt(var + eps) over the last axis."""
    eps = 1e-5
    dims = [((1, 2),), ((2, 3),), ((3, 5),), ((2, 3, 4),)]

    def reference(x, G):
        xhat, sigma = _normalise(x, eps), np.sqrt(x.var(-1, keepdims=True) + eps)
        return ((G - G.mean(-1, keepdims=True) - xhat * (G * xhat).mean(-1, keepdims=True))
                / sigma,)

    def parts(x, G):
        return _normalise(x, eps), np.sqrt(x.var(-1, keepdims=True) + eps)

    _check_rule("layer_norm_backward", _shapes(dims), lambda x: _normalise(x, eps),
                lambda x, G: fn(x, G, eps), reference,
                [("the mean and the variance depend on x too; dividing g by the standard "
                  "deviation treats them as constants", lambda x, G: G / parts(x, G)[1]),
                 ("the path through the mean is missing: subtract mean(g)",
                  lambda x, G: (G - parts(x, G)[0] * (G * parts(x, G)[0]).mean(-1, keepdims=True))
                  / parts(x, G)[1]),
                 ("the path through the variance is missing: subtract xhat * mean(g * xhat)",
                  lambda x, G: (G - G.mean(-1, keepdims=True)) / parts(x, G)[1])], ("x",))


def check_cross_entropy_backward(fn):
    """fn(logits (N, C), target (N,), eps) -> dL/dlogits for PyTorch's mean cross-entropy with
    label smoothing eps (q = (1 - eps) one_hot + eps / C)."""
    rng = np.random.default_rng(5)
    for N, C, eps in [(1, 2, 0.0), (1, 3, 0.1), (3, 4, 0.1), (4, 6, 0.2), (5, 3, 0.3)]:
        target, rows = rng.integers(0, C, N), np.arange(N)

        def q(others, correct, shape=(N, C), target=target, rows=rows):
            """A target distribution: `others` on every class, `correct` on the right one."""
            out = np.full(shape, others)
            out[rows, target] = correct
            return out

        pytorch_q = q(eps / C, 1 - eps + eps / C)

        def forward(z, q_=pytorch_q):
            logp = z - z.max(-1, keepdims=True)
            logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
            return np.asarray(-(q_ * logp).sum() / len(z))

        def grad_for(target_q, n=N):
            return lambda z, G: (_softmax_rows(z) - target_q) * G / n

        mistakes = [("the loss is the mean over the N rows: divide the gradient by N",
                     grad_for(pytorch_q, 1)),
                    ("the smoothing is missing: the target is (1 - eps) one_hot + eps / C",
                     grad_for(q(0.0, 1.0))),
                    ("PyTorch spreads eps over all C classes, the correct one included (eps / C), "
                     "not over the C - 1 others", grad_for(q(eps / max(C - 1, 1), 1 - eps))),
                    ("the sign is flipped: the gradient is softmax(z) - q",
                     lambda z, G: -grad_for(pytorch_q)(z, G))]
        _check_rule("cross_entropy_backward", [[rng.standard_normal((N, C))]], forward,
                    lambda z, G, t=target, e=eps: np.asarray(fn(z, t.copy(), e)) * G,
                    lambda z, G: (grad_for(pytorch_q)(z, G),), mistakes, ("logits",))


def _head(Q, K, V):
    P = _softmax_rows(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
    return P, P @ V


def check_attention_backward(fn):
    """fn(Q (T, d), K (S, d), V (S, d_v), G (T, d_v)) -> (dQ, dK, dV) for one attention head,
    O = softmax(Q K^T / sqrt(d)) V."""
    dims = [((1, 1), (1, 1), (1, 1)), ((2, 2), (3, 2), (3, 1)), ((3, 2), (3, 2), (3, 2)),
            ((3, 4), (2, 4), (2, 3)), ((4, 3), (5, 3), (5, 2))]

    def reference(Q, K, V, G):
        P, _ = _head(Q, K, V)
        dP = G @ V.T
        dS = P * (dP - (dP * P).sum(-1, keepdims=True)) / math.sqrt(Q.shape[-1])
        return dS @ K, dS.T @ Q, P.T @ G

    def unscaled(Q, K, V, G):
        dQ, dK, dV = reference(Q, K, V, G)
        return dQ * math.sqrt(Q.shape[-1]), dK * math.sqrt(Q.shape[-1]), dV

    _check_rule("attention_backward", _shapes(dims, seed=4), lambda Q, K, V: _head(Q, K, V)[1],
                fn, reference,
                [("dQ and dK miss the factor 1/sqrt(d) of the scores", unscaled),
                 ("dV is P^T G (the weights transposed), not P G",
                  lambda Q, K, V, G: (None, None, _head(Q, K, V)[0] @ G
                                      if Q.shape[0] == K.shape[0] else None))],
                ("Q", "K", "V"))


# -- 06: one head of attention -----------------------------------------------------------------

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


# -- 07: splitting heads -----------------------------------------------------------------------

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


# -- 08: the causal mask -----------------------------------------------------------------------

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


# -- 09: the sinusoid table --------------------------------------------------------------------

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


# -- 10: layer norm ----------------------------------------------------------------------------

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


# -- 11: Add & Norm ----------------------------------------------------------------------------

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


def _library_encoder_layer(d, h, ff, dropout, norm_first=False):
    from minigrad import nn

    return nn.TransformerEncoderLayer(d, h, ff, dropout=dropout, batch_first=True,
                                      norm_first=norm_first)


def _encoder_layer_variants(lib, x, pad):
    """What the usual mistakes compute, from the library layer's own modules (eval mode)."""
    def sa(h):
        return lib.self_attn(h, h, h, key_padding_mask=pad, need_weights=False)[0]

    def ffn(h, relu=True):
        a = lib.linear1(h)
        return lib.linear2(a.relu() if relu else a)

    n1, n2 = lib.norm1, lib.norm2
    h = n1(x + sa(x))
    yield "the residual around self-attention is missing: norm1(x + self_attn(x))", n2(n1(sa(x)) + ffn(n1(sa(x))))
    yield "the residual around the feed-forward network is missing: norm2(h + ffn(h))", n2(ffn(h))
    yield ("the norm is in the wrong place: it normalises the sublayer's output before the "
           "residual is added; Add & Norm is norm(x + sublayer(x))",
           (lambda g: g + n2(ffn(g)))(x + n1(sa(x))))
    yield ("that is pre-norm, x + sublayer(norm(x)); the paper's layer (norm_first=False) is "
           "post-norm, norm(x + sublayer(x))",
           (lambda g: g + ffn(n2(g)))(x + sa(n1(x))))
    yield "norm1 and norm2 are swapped", (lambda g: n1(g + ffn(g)))(n2(x + sa(x)))
    yield "the ReLU between linear1 and linear2 is missing", n2(h + ffn(h, relu=False))
    no_mask = n1(x + lib.self_attn(x, x, x, need_weights=False)[0])
    yield ("the padding mask is ignored: pass src_key_padding_mask to self_attn as "
           "key_padding_mask", n2(no_mask + ffn(no_mask)))


def check_encoder_layer(cls):
    """cls(d_model, nhead, dim_feedforward, dropout) -> a module with the library's submodule names
    whose forward(x (B, T, D), src_key_padding_mask (B, T) or None) is the paper's post-norm
    encoder layer; compared with `nn.TransformerEncoderLayer` holding the same weights."""
    import minigrad as mg

    for (B, T, d, h, ff), seed in (((1, 3, 4, 1, 8), 0), ((2, 5, 8, 2, 16), 1),
                                   ((3, 6, 12, 3, 20), 2)):
        mg.manual_seed(seed)
        lib = _library_encoder_layer(d, h, ff, dropout=0.3)
        mine = cls(d, h, ff, 0.3)
        ours_p, theirs = dict(mine.named_parameters()), dict(lib.named_parameters())
        _expect(sorted(ours_p) == sorted(theirs),
                f"keep the submodules of the stub (self_attn, linear1, linear2, norm1, norm2), so "
                f"that the library's weights can be copied in; the parameters are {sorted(ours_p)}")
        rng = np.random.default_rng(seed)
        with mg.no_grad():
            for name, p in theirs.items():  # norms away from 1 and 0, so their place shows
                if name.startswith("norm"):
                    p.copy_(rng.uniform(0.5, 1.5, p.shape) * (1 if "weight" in name else 0.3))
                ours_p[name].copy_(p)
        x = mg.tensor(rng.normal(0.5, 2.0, (B, T, d)).astype(np.float32))
        pad = np.zeros((B, T), bool)
        pad[-1, T - 1:] = True  # the last sentence ends with padding
        if B == 1:
            pad = None
        lib.eval(), mine.eval()
        where = f"for x of shape {(B, T, d)} with {h} head(s) and d_ff {ff}"
        with mg.no_grad():
            want = lib(x, src_key_padding_mask=pad).numpy()
            got = _array(mine(x, src_key_padding_mask=pad), "the encoder layer")
            _shape(got, want.shape, f"the encoder layer {where}")
            again = _array(mine(x, src_key_padding_mask=pad), "the encoder layer")
            if not np.allclose(got, again):
                raise Wrong(f"{where}, two calls in eval mode give different outputs: dropout is "
                            f"still on; use the nn.Dropout modules (they stop in eval()) or pass "
                            f"training=self.training")
            if np.allclose(got, want, atol=1e-4):
                continue
            for mistake, wrong in _encoder_layer_variants(lib, x, pad):
                if np.allclose(got, wrong.numpy(), atol=1e-4):
                    raise Wrong(f"{where}: {mistake}")
        raise Wrong(f"{where}, the output differs from TransformerEncoderLayer's by up to "
                    f"{np.abs(got - want).max():.3g}: self-attention, Add & Norm, then the "
                    f"feed-forward network, Add & Norm")


# -- 12: the warm-up schedule ------------------------------------------------------------------

def check_noam(fn):
    """fn(step, d_model, warmup) -> d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)."""
    for d_model, warmup in ((512, 4000), (128, 400), (256, 1000)):
        for step in (1, warmup // 4, warmup, 4 * warmup):
            want = d_model ** -0.5 * min(step ** -0.5, step * warmup ** -1.5)
            got = float(fn(step, d_model, warmup))
            at = f"d_model {d_model}, warm-up {warmup}, step {step}"
            if math.isclose(got, want, rel_tol=1e-9):
                continue
            if math.isclose(got, d_model ** -0.5 * max(step ** -0.5, step * warmup ** -1.5),
                            rel_tol=1e-9):
                raise Wrong(f"{at}: use the minimum of the two curves, not the maximum")
            if math.isclose(got, min(step ** -0.5, step * warmup ** -1.5), rel_tol=1e-9):
                raise Wrong(f"{at}: the factor d_model^-0.5 is missing")
            if math.isclose(got, 512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5),
                            rel_tol=1e-9):
                raise Wrong(f"{at}: the rate is the paper's (d_model 512, 4000 warm-up steps) "
                            f"whatever the arguments; use d_model and warmup")
            raise Wrong(f"{at}: the rate is {got:.4g}, expected {want:.4g}")


# -- 13: one BPE merge -------------------------------------------------------------------------

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


# -- 13: greedy decoding -----------------------------------------------------------------------

def _decoding_models():
    """Tiny untrained translators whose greedy outputs depend on the fed-back words, end with
    <eos> at various lengths or run to max_len, and are tempted by padding (its bias raised)."""
    import minigrad as mg
    from minigrad.models import Seq2SeqTransformer

    for seed in (2, 0):
        mg.manual_seed(seed)
        model = Seq2SeqTransformer(9, 9, d_model=16, nhead=2, num_encoder_layers=1,
                                   num_decoder_layers=1, dim_feedforward=32).eval()
        with mg.no_grad():
            bias = model.generator.bias.numpy().copy()
            bias[2] += 0.3
            bias[0] += 3.0
            model.generator.bias.copy_(bias)
        rng = np.random.default_rng(seed)
        yield model, [[int(t) for t in rng.integers(3, 9, n)] for n in (1, 3, 5, 7)]


def _greedy_variant(model, src, max_len, eos_id):
    """Greedy decoding that never feeds its words back: every step decodes <bos> alone."""
    import minigrad as mg

    with mg.no_grad():
        memory, src_pad = model.encode(np.array([src]))
        out = [1]
        for _ in range(max_len):
            hidden = model.decode(np.array([[1]]), memory, src_pad)
            logp = model.generator(hidden[:, -1]).numpy()[0]
            logp[model.pad_id] = -np.inf
            out.append(int(logp.argmax()))
            if out[-1] == eos_id:
                break
    return out[1:]


def check_greedy_decode(fn):
    """fn(model, src_ids, max_len, bos_id, eos_id) -> the generated ids (no <bos>, with the
    <eos> that ended the sentence, at most max_len), as the library's `greedy_decode`."""
    from minigrad.models.decoding import greedy_decode

    max_len, bos, eos = 8, 1, 2
    for model, sources in _decoding_models():
        for src in sources:
            row = [int(t) for t in greedy_decode(model, np.array([src]), max_len=max_len,
                                                 bos_id=bos, eos_id=eos).tokens[0]]
            want = row[:row.index(eos) + 1] if eos in row else row
            got = fn(model, list(src), max_len, bos, eos)
            try:
                got = [int(t) for t in got]
            except TypeError:
                raise Wrong(f"return a list of token ids, got {type(got).__name__}") from None
            if got == want:
                continue
            where = f"for the source {src} (max_len {max_len})"
            if got[:1] == [bos] and got[1:] == want:
                raise Wrong(f"{where} the output starts with <bos> ({bos}): return only the "
                            f"generated tokens")
            if want[-1:] == [eos] and got[:len(want)] == want:
                raise Wrong(f"{where} you went on after <eos>: stop as soon as <eos> is "
                            f"generated ({want}, got {got})")
            if want[-1:] == [eos] and got == want[:-1]:
                raise Wrong(f"{where} the <eos> that ended the sentence is missing: keep it")
            if model.pad_id in got:
                raise Wrong(f"{where} you generated padding (id {model.pad_id}) at step "
                            f"{got.index(model.pad_id) + 1}: padding is never a word; set its "
                            f"score to -inf before the argmax")
            if len(got) > max_len:
                raise Wrong(f"{where} you returned {len(got)} tokens: at most max_len")
            if got == _greedy_variant(model, src, max_len, eos):
                # under the causal mask, position 0 sees <bos> only: both mistakes give this
                raise Wrong(f"{where} every step's choice depends on <bos> alone: append each "
                            f"chosen word to the prefix, decode the whole prefix, and read the "
                            f"scores at its last position, hidden[:, -1] (not hidden[:, 0])")
            i = next((i for i, (g, w) in enumerate(zip(got, want)) if g != w),
                     min(len(got), len(want)))
            raise Wrong(f"{where} greedy decoding gives {want}; yours {got} differs from step "
                        f"{i + 1}: pick the argmax of the next-word scores given the whole prefix")


# -- 14: attention over a graph ----------------------------------------------------------------

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


# -- 05: a Hessian-vector product --------------------------------------------------------------

def check_hvp(fn):
    """fn(f, x, v) -> H v for the Hessian H of a scalar f at the tensor x, v shaped like x."""
    import minigrad as mg

    rng = np.random.default_rng(3)
    A = rng.standard_normal((4, 4))  # not symmetric: the Hessian of x^T A x / 2 is (A + A^T) / 2
    x_np, v_np = rng.standard_normal(4), rng.standard_normal(4)

    def f(x):
        return (x * (mg.tensor(A) @ x)).sum() / 2 + (x ** 4).sum() / 4

    hessian = (A + A.T) / 2 + np.diag(3 * x_np ** 2)
    want = hessian @ v_np
    try:
        got = _array(fn(f, mg.tensor(x_np), mg.tensor(v_np)), "hvp")
    except RuntimeError as e:
        if "does not require grad" in str(e):
            raise Wrong("the first gradient has no graph to differentiate: pass "
                        "create_graph=True to the first grad (and make x require grad)") from e
        raise
    _shape(got, (4,), "hvp(f, x (4,), v (4,))")
    if np.allclose(got, want, atol=1e-9):
        return
    gradient = A @ x_np / 2 + A.T @ x_np / 2 + x_np ** 3
    if np.allclose(got, gradient, atol=1e-9):
        raise Wrong("that is the gradient of f; take the gradient of (gradient . v) once more")
    if np.allclose(got, gradient * v_np, atol=1e-9):
        raise Wrong("that is the gradient times v, element by element; H v is the gradient of "
                    "the dot product (gradient . v), with the gradient kept as a graph")
    if np.allclose(got, hessian @ np.ones(4), atol=1e-9):
        raise Wrong("that is H times a vector of ones: weight the gradient by v before the "
                    "second grad")
    raise Wrong(f"largest difference from H v is {np.abs(got - want).max():.3g}")


CHECKERS = {f.__name__: f for f in (
    check_topological_order, check_unbroadcast, check_matmul_backward, check_softmax_backward,
    check_layer_norm_backward, check_cross_entropy_backward, check_attention_backward,
    check_neuron_gradients, check_attention, check_split_heads, check_causal_mask,
    check_sinusoid_table, check_layer_norm, check_add_and_norm, check_encoder_layer, check_noam,
    check_merge_pair, check_greedy_decode, check_neighbour_softmax, check_stable_softmax,
    check_hvp)}
