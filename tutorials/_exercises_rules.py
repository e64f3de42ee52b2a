"""Checkers for tutorial 4's backward rules: the matrix product, softmax, layer norm,
cross-entropy with label smoothing and one attention head.

Each rule is compared with the exact gradient (itself checked against `gradcheck` in the
tests) on whole-number inputs that hypothesis draws and shrinks. An answer that agrees to
float32 rounding is right; a wrong one is matched against the usual mistakes, on the failing
input and on random inputs of the same shapes (so a coincidence of small numbers cannot name the
wrong mistake); failing that, gradcheck's central differences show where it goes wrong.
"""
import math

import numpy as np

from _exercise_search import (FLOAT32, Later, Wrong, as_array, call, compare, expect, factor_hint,
                              float32_note, hypothesis_modules, search, show, whole_arrays)


def _named(names, arrays):
    return ", ".join(f"{n} = {show(a)}" + (f" (shape {a.shape})" if a.ndim > 1 else "")
                     for n, a in zip(names, arrays))


def _learner_function(forward, backward):
    """An Op whose forward is the library's and whose backward is the learner's rule."""
    from minigrad.autograd.op import Op

    class LearnerRule(Op):
        @staticmethod
        def forward(ctx, *arrays):
            ctx.save_for_backward(*arrays)
            return forward(*arrays)

        @staticmethod
        def backward(ctx, grad):
            return backward(*ctx.saved_tensors, grad)
    return LearnerRule


def _gradients(value, n, who):
    """The learner's gradients as float64 arrays, and whether any came in float32."""
    value = value if isinstance(value, (tuple, list)) else (value,)
    expect(len(value) == n, f"{who} should return {n} gradient{'s' * (n > 1)}, got {len(value)}")
    pairs = [as_array(v, who) for v in value]
    return tuple(a for a, _ in pairs), any(low for _, low in pairs)


def _matches(results, mistake):
    """True if `mistake` explains the learner's gradients on every (inputs, G, got, want): it
    gives each gradient the learner got wrong, agrees on the rest it gives, and differs from
    the right answer somewhere (else a transpose of a 1 x 1 matrix would 'match')."""
    differs = False
    for inputs, G, got, want in results:
        try:
            wrong = mistake(*inputs, G)
        except (ValueError, IndexError):  # the mistake needs shapes these inputs do not have
            return False
        wrong = wrong if isinstance(wrong, tuple) else (wrong,)
        for g, w, right in zip(got, wrong, want):
            if w is None:
                if compare(g, right) not in ("exact", "float32"):
                    return False
                continue
            if not (np.shape(w) == g.shape and np.allclose(
                    g, w, rtol=1e-6, atol=FLOAT32 * (np.abs(w).max(initial=0) or 1))):
                return False
            differs = differs or compare(np.asarray(w, dtype=np.float64), right) not in (
                "exact", "float32")
    return differs


def _rule_verdict(who, names, spec, case):
    inputs, G, params = case
    forward, learner, reference, mistakes, about = spec(params)
    where = f"for {_named(names, inputs)}{about}" + (f" and G = {show(G)}" if G.ndim else "")
    want = reference(*inputs, G)
    got, low = _gradients(call(learner, where, *[a.copy() for a in inputs], G.copy()),
                          len(want), who)
    for n, g, w in zip(names, got, want):
        if g.shape != w.shape:
            extra = ""
            if g.size == w.size or (g.ndim == w.ndim and g.shape == w.shape[::-1]):
                extra = " (a transpose is missing or misplaced)"
            raise Wrong(f"{where}, the gradient of {n} has shape {g.shape}; it must have {n}'s "
                        f"shape {w.shape}{extra}")
    kinds = [compare(g, w) for g, w in zip(got, want)]
    if all(k in ("exact", "float32") for k in kinds):
        return float32_note(who, "float32" if "float32" in kinds else "exact", low)
    raise Later(lambda: _rule_diagnosis(who, names, where, case, spec(params), got, want, kinds))


def _rule_diagnosis(who, names, where, case, spec, got, want, kinds):
    """Raise the `Wrong` naming the mistake in a rule that gave `got` instead of `want`."""
    inputs, G, _ = case
    forward, learner, reference, mistakes, _ = spec
    rng = np.random.default_rng(0)
    generic = [rng.standard_normal(a.shape) for a in inputs] + [rng.standard_normal(G.shape)]
    results = [(inputs, G, got, want)]
    try:
        results.append((generic[:-1], generic[-1],
                         _gradients(learner(*generic), len(want), who)[0], reference(*generic)))
    except Exception:  # noqa: BLE001  the failing input alone names the mistake then
        pass
    if G.ndim and _matches(results, lambda *a: reference(*a[:-1], np.ones_like(a[-1]))):
        raise Wrong(f"{where}: the incoming gradient G is not used; the chain rule multiplies "
                    f"the local derivative by it (a test with G = 1 everywhere, such as "
                    f".sum().backward(), cannot see this)")
    for label, mistake in mistakes:
        if _matches(results, mistake):
            raise Wrong(f"{where}: {label}")
    bad = [i for i, k in enumerate(kinds) if k not in ("exact", "float32")]
    i = max(bad, key=lambda j: kinds[j])
    hint = factor_hint(got[i], want[i])
    if hint and len(results) > 1 and factor_hint(results[1][2][i], results[1][3][i]) == hint:
        raise Wrong(f"{where}, the gradient of {names[i]} is {show(got[i])}, expected "
                    f"{show(want[i])}: {hint}")
    from minigrad import float64, tensor
    from minigrad.autograd import gradcheck

    rule = _learner_function(forward, lambda *a: _gradients(learner(*a), len(want), who)[0])
    try:
        gradcheck(rule.apply, [tensor(a, dtype=float64, requires_grad=True) for a in inputs])
    except AssertionError as e:
        raise Wrong(f"{where}, your gradient of {names[i]} is {show(got[i])}, expected "
                    f"{show(want[i])}; {e}") from None
    raise Wrong(f"{where}, your gradient of {names[i]} is {show(got[i])}, expected "
                f"{show(want[i])}: close enough for gradcheck's tolerance, but off by "
                f"{kinds[i]:.2g}, more than rounding")


def _check_rule(who, names, cases, spec, typical_shapes, max_examples=30):
    """Search `cases`, then the typical cases: each a case as `cases` draws them, or a tuple of
    shapes (the inputs', then G's) filled with random float64 values."""
    rng = np.random.default_rng(3)
    typical = [case if len(case) == 3 and isinstance(case[0], tuple) and isinstance(
        case[0][0], np.ndarray) else (tuple(rng.standard_normal(s) for s in case[:-1]),
                                      rng.standard_normal(case[-1]), None)
        for case in typical_shapes]
    return search(cases, lambda case: _rule_verdict(who, names, spec, case),
                  max_examples=max_examples, typical=typical)


def _plain(forward, learner, reference, mistakes):
    """A rule without parameters: the same forward, learner, reference and mistakes always."""
    return lambda params: (forward, learner, reference, mistakes, "")


def _rule_cases(st, shapes, lo=-2, hi=2):
    """(inputs, G, None) with whole-number inputs of the drawn shapes and G of the output's."""
    @st.composite
    def case(draw):
        dims = draw(shapes)
        inputs, out_shape = dims[:-1], dims[-1]
        arrays = tuple(draw(whole_arrays(st, s, lo, hi)) for s in inputs)
        return arrays, draw(whole_arrays(st, out_shape, lo, hi)), None
    return case()


def check_matmul_backward(fn):
    """fn(A (n, k), B (k, m), G (n, m)) -> (dA, dB) for C = A @ B."""
    _, st = hypothesis_modules()
    d = st.integers(1, 2)  # every usual mistake shows at 2 x 2; the typical cases go bigger
    shapes = st.tuples(d, d, d).map(lambda t: ((t[0], t[1]), (t[1], t[2]), (t[0], t[2])))
    mistakes = [("dA should be G B^T (G times B transposed), not G B",
                 lambda A, B, G: (G @ B, None)),
                ("dB should be A^T G: A transposed, on the left",
                 lambda A, B, G: (None, G.T @ A)),
                ("dA and dB are swapped", lambda A, B, G: (A.T @ G, G @ B.T)),
                ("off by a factor 2 in dA: a gradient computed twice, or added where it "
                 "should be assigned", lambda A, B, G: (2 * G @ B.T, None))]
    return _check_rule("matmul_backward", ("A", "B"), _rule_cases(st, shapes), _plain(
        lambda A, B: A @ B, fn, lambda A, B, G: (G @ B.T, A.T @ G), mistakes),
        [((2, 3), (3, 1), (2, 1)), ((3, 2), (2, 4), (3, 4)), ((4, 4), (4, 4), (4, 4))])


def _softmax_rows(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _batch_shapes(st, min_last=1):
    """Shapes (..., C) of one to three axes, each at most 2 long and C at most 3, C at least
    `min_last`."""
    @st.composite
    def shape(draw):
        lead = [draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 2)))]
        return (*lead, draw(st.integers(min_last, 3)))
    return shape()


def check_softmax_backward(fn):
    """fn(y, g) -> dL/dx for y = softmax(x) over the last axis and g = dL/dy."""
    _, st = hypothesis_modules()

    def mistake(rule):
        return lambda x, G: rule(_softmax_rows(x), G)

    mistakes = [("that is only the Jacobian's diagonal y(1 - y); the off-diagonal terms -y_i y_j "
                 "are missing: dx = y * (g - sum(g * y))", mistake(lambda y, g: g * y * (1 - y))),
                ("the sum runs over the whole array; each row is its own softmax: sum over the "
                 "last axis with keepdims", mistake(lambda y, g: y * (g - (g * y).sum()))),
                ("subtract sum(g * y) (weighted by y), not sum(g)",
                 mistake(lambda y, g: y * (g - g.sum(-1, keepdims=True)))),
                ("g passes through unchanged: softmax's Jacobian diag(y) - y y^T is missing",
                 lambda x, G: G)]
    return _check_rule("softmax_backward", ("x",), _rule_cases(
        st, _batch_shapes(st).map(lambda s: (s, s))), _plain(
        _softmax_rows, lambda x, G: fn(_softmax_rows(x), G),
        lambda x, G: (_softmax_rows(x) * (G - (G * _softmax_rows(x)).sum(-1, keepdims=True)),),
        mistakes), [((2, 3), (2, 3)), ((2, 3, 5), (2, 3, 5))])


def _normalise(x, eps):
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(x.var(-1, keepdims=True) + eps)


def check_layer_norm_backward(fn):
    """fn(x, g, eps) -> dL/dx for y = (x - mean) / sqrt(var + eps) over the last axis."""
    _, st = hypothesis_modules()
    eps = 1e-5

    def sigma(x):
        return np.sqrt(x.var(-1, keepdims=True) + eps)

    def reference(x, G):
        xhat = _normalise(x, eps)
        return ((G - G.mean(-1, keepdims=True) - xhat * (G * xhat).mean(-1, keepdims=True))
                / sigma(x),)

    mistakes = [("the mean and the variance depend on x too; dividing g by the standard "
                 "deviation treats them as constants", lambda x, G: G / sigma(x)),
                ("the path through the mean is missing: subtract mean(g)",
                 lambda x, G: (G - _normalise(x, eps) * (G * _normalise(x, eps)).mean(
                     -1, keepdims=True)) / sigma(x)),
                ("the path through the variance is missing: subtract xhat * mean(g * xhat)",
                 lambda x, G: (G - G.mean(-1, keepdims=True)) / sigma(x)),
                ("the statistics run over the whole array; each row is normalised on its own: "
                 "mean over the last axis with keepdims",
                 lambda x, G: reference(x.reshape(1, -1), G.reshape(1, -1))[0].reshape(x.shape))]
    return _check_rule("layer_norm_backward", ("x",), _rule_cases(
        st, _batch_shapes(st, 2).map(lambda s: (s, s)), -3, 3), _plain(
        lambda x: _normalise(x, eps), lambda x, G: fn(x, G, eps), reference, mistakes),
        [((3, 5), (3, 5)), ((2, 3, 4), (2, 3, 4))])


def check_cross_entropy_backward(fn):
    """fn(logits (N, C), target (N,), eps) -> dL/dlogits for PyTorch's mean cross-entropy with
    label smoothing eps (q = (1 - eps) one_hot + eps / C)."""
    _, st = hypothesis_modules()

    @st.composite
    def cases(draw):
        N, C = draw(st.integers(1, 3)), draw(st.integers(2, 4))
        target = np.array(draw(st.lists(st.integers(0, C - 1), min_size=N, max_size=N)))
        eps = draw(st.sampled_from((0.0, 0.1, 0.2, 0.3)))
        return (draw(whole_arrays(st, (N, C))),), np.array(1.0), (target, eps)

    def spec(params):
        target, eps = params

        def q(others, correct, shape):
            """A target distribution: `others` on every class, `correct` on the right one."""
            out = np.full(shape, others)
            out[np.arange(shape[0]), target] = correct
            return out

        def grad_for(make_q, divide=True):
            return lambda z, G: (_softmax_rows(z) - make_q(*z.shape)) * G / (len(z) if divide
                                                                             else 1)

        def pytorch_q(N, C):
            return q(eps / C, 1 - eps + eps / C, (N, C))

        def forward(z):
            logp = z - z.max(-1, keepdims=True)
            logp = logp - np.log(np.exp(logp).sum(-1, keepdims=True))
            return np.asarray(-(pytorch_q(*z.shape) * logp).sum() / len(z))

        mistakes = [("the loss is the mean over the N rows: divide the gradient by N",
                     grad_for(pytorch_q, divide=False)),
                    ("the smoothing is missing: the target is (1 - eps) one_hot + eps / C",
                     grad_for(lambda N, C: q(0.0, 1.0, (N, C)))),
                    ("PyTorch spreads eps over all C classes, the correct one included (eps / C), "
                     "not over the C - 1 others",
                     grad_for(lambda N, C: q(eps / max(C - 1, 1), 1 - eps, (N, C)))),
                    ("the sign is flipped: the gradient is softmax(z) - q",
                     lambda z, G: -grad_for(pytorch_q)(z, G))]
        def learner(z, G):
            grad, low = as_array(fn(z, target.copy(), eps), "cross_entropy_backward")
            return (grad * G).astype(np.float32 if low else np.float64)

        return (forward, learner, lambda z, G: (grad_for(pytorch_q)(z, G),), mistakes,
                f", target = {target.tolist()}, eps = {eps}")

    rng = np.random.default_rng(5)
    typical = [((rng.standard_normal((len(t), 5)),), np.array(1.0), (np.array(t), eps))
               for t, eps in (([1, 0, 3], 0.1), ([0, 2, 1, 2], 0.3))]
    return _check_rule("cross_entropy_backward", ("logits",), cases(), spec, typical)


def _head(Q, K, V):
    P = _softmax_rows(Q @ np.swapaxes(K, -1, -2) / math.sqrt(Q.shape[-1]))
    return P, P @ V


def check_attention_backward(fn):
    """fn(Q (T, d), K (S, d), V (S, d_v), G (T, d_v)) -> (dQ, dK, dV) for one attention head,
    O = softmax(Q K^T / sqrt(d)) V."""
    _, st = hypothesis_modules()
    d = st.integers(1, 2)
    shapes = st.tuples(d, d, d, d).map(
        lambda t: ((t[0], t[2]), (t[1], t[2]), (t[1], t[3]), (t[0], t[3])))

    def reference(Q, K, V, G):
        P, _ = _head(Q, K, V)
        dP = G @ V.T
        dS = P * (dP - (dP * P).sum(-1, keepdims=True)) / math.sqrt(Q.shape[-1])
        return dS @ K, dS.T @ Q, P.T @ G

    def unscaled(Q, K, V, G):
        dQ, dK, dV = reference(Q, K, V, G)
        return dQ * math.sqrt(Q.shape[-1]), dK * math.sqrt(Q.shape[-1]), dV

    def no_softmax_jacobian(Q, K, V, G):
        P, _ = _head(Q, K, V)
        dS = P * (G @ V.T) / math.sqrt(Q.shape[-1])
        return dS @ K, dS.T @ Q, P.T @ G

    mistakes = [("dQ and dK miss the factor 1/sqrt(d) of the scores", unscaled),
                ("dV is P^T G (the weights transposed), not P G",
                 lambda Q, K, V, G: (None, None, _head(Q, K, V)[0] @ G)),
                ("the softmax step is missing its second term: dS = P * (dP - rowsum(dP * P)), "
                 "not P * dP", no_softmax_jacobian)]
    return _check_rule("attention_backward", ("Q", "K", "V"), _rule_cases(st, shapes), _plain(
        lambda Q, K, V: _head(Q, K, V)[1], fn, reference, mistakes),
        [((3, 2), (3, 2), (3, 2), (3, 2)), ((4, 3), (5, 3), (5, 2), (4, 2))])
