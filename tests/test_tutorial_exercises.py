"""The tutorials' "implement it" exercises: every checker accepts the tutorial's own solution,
rejects each typical wrong answer naming the mistake and showing the smallest input that shows
it, accepts float32 rounding with a remark, and reports an unfinished stub without failing; one
unsolved exercise never fails another.

Solutions are the code cells tagged "solution" in each tutorial (hidden in Jupyter); each one
defines the function and asserts `check(checker, function)` itself, so running it is the test.
The fast suite tries two typical mistakes per checker (about 15 s); `-m slow` tries the others.
"""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

jupytext = pytest.importorskip("jupytext")
pytest.importorskip("hypothesis")

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
FILES = sorted(TUTORIALS.glob("[0-9][0-9]_*.py")) + sorted(TUTORIALS.glob("A[0-9]_*.py"))
sys.path.insert(0, str(TUTORIALS))
import _exercises  # noqa: E402  (lives beside the tutorials)


def code_cells(path, solutions):
    """The solution cells (tagged "solution") or the exercise cells (a stub and its check)."""
    cells = [cell.source for cell in jupytext.read(path).cells if cell.cell_type == "code"]
    tagged = {cell.source for cell in jupytext.read(path).cells
              if "solution" in cell.metadata.get("tags", [])}
    if solutions:
        return [c for c in cells if c in tagged]
    return [c for c in cells if c not in tagged and "raise NotImplementedError" in c
            and "check(check_" in c]


def solution_cells(path):
    return code_cells(path, solutions=True)


def _namespace():
    import minigrad as mg
    from minigrad import nn
    from minigrad.nn import functional as F
    return {"np": np, "math": math, "mg": mg, "nn": nn, "F": F, "check": _exercises.check,
            **_exercises.CHECKERS}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_solutions_pass_their_checkers(path):
    cells = solution_cells(path)
    assert cells, f"{path.name} has no exercise solution (a code cell tagged 'solution')"
    for source in cells:
        assert "assert check(" in source, f"a solution cell of {path.name} checks nothing"
        exec(compile(source, f"{path.name}:solution", "exec"), _namespace())


MULTI = [p for p in FILES if len(solution_cells(p)) > 1]


@pytest.mark.parametrize("path", MULTI, ids=[p.stem for p in MULTI])
def test_one_unsolved_exercise_never_fails_another(path, capsys):
    """Every exercise of the tutorial left as its stub (each reported "not implemented yet"),
    then each solution alone among the stubs: it passes whatever the others are."""
    stubs, solutions = code_cells(path, solutions=False), solution_cells(path)
    assert len(stubs) == len(solutions), f"{path.name}: a stub per solution"
    unsolved = _namespace()
    for source in stubs:
        exec(compile(source, f"{path.name}:exercise", "exec"), unsolved)
    out = capsys.readouterr().out
    assert out.count("not implemented yet") == len(stubs) and "not yet right" not in out, out
    for source in solutions:
        exec(compile(source, f"{path.name}:solution", "exec"), dict(unsolved))
        out = capsys.readouterr().out
        assert out.count(": correct") == 1 and "not" not in out, out


def _wrong_answers():
    """Typical mistakes for each checker: (answer, what the message must say, the smallest
    failing input it must show, or None where several inputs are equally small)."""
    def softmax(s, axis=-1):
        e = np.exp(s - s.max(axis, keepdims=True))
        return e / e.sum(axis, keepdims=True)

    def no_tanh_factor(x, w, b, y):
        d = 2 * (math.tanh(w * x + b) - y)
        return d * x, d, d * w

    def layer_norm_over_batch(x, eps=1e-5):
        return (x - x.mean((0, 1), keepdims=True)) / np.sqrt(x.var((0, 1), keepdims=True) + eps)

    def sin_cos_swapped(max_len, d):
        j = np.arange(max_len)[:, None]
        w = 10000.0 ** (-np.arange(0, d, 2) / d)
        out = np.zeros((max_len, d))
        out[:, 0::2], out[:, 1::2] = np.cos(w * j), np.sin(w * j)
        return out

    def greedy_merge_overlap(symbols, pair):
        out = list(symbols)
        for i in range(len(out) - 1):
            if (out[i], out[i + 1]) == pair:
                out[i] = out[i] + out[i + 1]
        return [s for s in out if s not in pair] if pair[0] != pair[1] else out

    def topo_without_seen(root):
        out = []

        def visit(n):
            for p in n.parents:
                visit(p)
            out.append(n)
        visit(root)
        return out

    def topo_reversed(root):
        out, seen, todo = [], set(), [root]
        while todo:
            n = todo.pop()
            if n not in seen:
                seen.add(n)
                out.append(n)
                todo.extend(n.parents)
        return out

    def topo_breadth_first_reversed(root):
        """Breadth-first from root, reversed: a node may come before a parent it shares."""
        order, seen, todo = [], {root}, [root]
        while todo:
            n = todo.pop(0)
            order.append(n)
            for p in n.parents:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return order[::-1]

    def ln_backward_constant_stats(x, g, eps):
        return g / np.sqrt(x.var(-1, keepdims=True) + eps)

    def ln_backward_no_variance_path(x, g, eps):
        return (g - g.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)

    def ce_backward(logits, target, eps, spread=None, divide=True):
        N, C = logits.shape
        q = np.full((N, C), eps / C if spread is None else spread)
        q[np.arange(N), target] = 1 - eps + (eps / C if spread is None else 0)
        return (softmax(logits) - q) / (N if divide else 1)

    def head_backward(Q, K, V, G, scaled=True, transpose_p=True):
        s = 1 / math.sqrt(Q.shape[-1]) if scaled else 1.0
        P = softmax(Q @ K.T / math.sqrt(Q.shape[-1]))
        dP = G @ V.T
        dS = P * (dP - (dP * P).sum(-1, keepdims=True))
        dV = P.T @ G if transpose_p or P.shape[0] != P.shape[1] else P @ G
        return dS @ K * s, dS.T @ Q * s, dV

    def noam_for_the_paper_only(step, d_model, warmup):
        """Right for d_model 512 and 4000 warm-up steps only (as if copied from a table)."""
        return 512 ** -0.5 * min(step ** -0.5, step * 4000 ** -1.5)

    from minigrad import nn
    from minigrad.nn import functional as F

    class EncoderLayer(nn.Module):
        """The tutorial's stub constructor; each wrong answer below is one forward."""

        def __init__(self, d_model, nhead, dim_feedforward, dropout=0.1):
            super().__init__()
            self.self_attn = nn.MultiheadAttention(d_model, nhead, dropout=dropout,
                                                   batch_first=True)
            self.linear1 = nn.Linear(d_model, dim_feedforward)
            self.linear2 = nn.Linear(dim_feedforward, d_model)
            self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            self.p = dropout

        def sa(self, x, pad):
            return self.self_attn(x, x, x, key_padding_mask=pad, need_weights=False)[0]

        def ffn(self, x):
            return self.linear2(self.linear1(x).relu())

    def encoder_layer(forward):
        return type("EncoderLayer", (EncoderLayer,), {"forward": forward})

    def post_norm(self, x, pad=None, residual=(True, True)):
        x = self.norm1(x * residual[0] + self.sa(x, pad))
        return self.norm2(x * residual[1] + self.ffn(x))

    def greedy(model, src, max_len, bos_id, eos_id, feed_back=True, position=-1,
               mask_pad=True, keep_bos=False, stop=True, keep_eos=True):
        import minigrad as mg

        with mg.no_grad():
            memory, src_pad = model.encode(np.array([src]))
            out = [bos_id]
            for _ in range(max_len):
                hidden = model.decode(np.array([out if feed_back else [bos_id]]), memory, src_pad)
                scores = model.generator(hidden[:, position]).numpy()[0]
                if mask_pad:
                    scores[model.pad_id] = -np.inf
                out.append(int(scores.argmax()))
                if stop and out[-1] == eos_id:
                    if not keep_eos:
                        out.pop()
                    break
        return out if keep_bos else out[1:]

    def hvp_without_create_graph(f, x, v):
        import minigrad as mg
        x = x.detach().requires_grad_(True)
        (g,) = mg.autograd.grad(f(x), x)
        return mg.autograd.grad((g * v).sum(), x)[0]


    def unbroadcast_no_leading_sum(g, shape):
        lead = g.ndim - len(shape)
        axes = tuple(lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
        return g.sum(axis=axes, keepdims=True) if axes else g

    def unbroadcast_no_keepdims(g, shape):
        lead = g.ndim - len(shape)
        g = g.sum(axis=tuple(range(lead))) if lead else g
        axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
        return g.sum(axis=axes) if axes else g

    def no_softmax_jacobian(Q, K, V, G):
        P = softmax(Q @ K.T / math.sqrt(Q.shape[-1]))
        dS = P * (G @ V.T) / math.sqrt(Q.shape[-1])
        return dS @ K, dS.T @ Q, P.T @ G

    def ln_backward_no_mean_path(x, g, eps):
        sigma = np.sqrt(x.var(-1, keepdims=True) + eps)
        xhat = (x - x.mean(-1, keepdims=True)) / sigma
        return (g - xhat * (g * xhat).mean(-1, keepdims=True)) / sigma

    def first_grad(f, x):
        import minigrad as mg
        x = x.detach().requires_grad_(True)
        return x, mg.autograd.grad(f(x), x, create_graph=True)[0]

    def hvp_gradient_only(f, x, v):
        return first_grad(f, x)[1]

    def hvp_gradient_times_v(f, x, v):
        return first_grad(f, x)[1] * v

    def hvp_unweighted(f, x, v):
        import minigrad as mg
        x, g = first_grad(f, x)
        return mg.autograd.grad(g.sum(), x)[0]

    def split_heads_interleaved(x, h):
        B, T, E = x.shape
        return x.reshape(B, T, E // h, h).permute(0, 3, 1, 2)

    def split_heads_no_permute(x, h):
        B, T, E = x.shape
        return x.reshape(B, T, h, E // h)

    def sinusoid(max_len, d, halves=False, step=2):
        j = np.arange(max_len)[:, None]
        w = 10000.0 ** (-np.arange(0, d, 2) * step / 2 / d)
        if halves:
            return np.concatenate([np.sin(w * j), np.cos(w * j)], axis=1)
        out = np.zeros((max_len, d))
        out[:, 0::2], out[:, 1::2] = np.sin(w * j), np.cos(w * j)
        return out

    def merge(symbols, pair, skip=True, first_only=False):
        out, i, done = [], 0, False
        while i < len(symbols):
            if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair and not (
                    first_only and done):
                out.append(symbols[i] + symbols[i + 1])
                done, i = True, i + (2 if skip else 1)
            else:
                out.append(symbols[i])
                i += 1
        return out

    def stable(x, shift):
        e = np.exp(x - shift(x))
        return e / e.sum(-1, keepdims=True)

    return {
        "check_topological_order": [
            (topo_without_seen, "listed 2 times", "b <- (a a) (root b)"),
            (topo_reversed, "order is reversed", "a (leaf), b <- (a) (root b)"),
            (lambda root: [*root.parents, root], "listed 2 times", "b <- (a a) (root b)"),
            (topo_breadth_first_reversed, "comes before its parent", None)],
        "check_neuron_gradients": [
            (no_tanh_factor, "1 - tanh(z)^2 is missing", None),
            (lambda x, w, b, y: tuple(-g for g in _exercise_neuron(x, w, b, y)),
             "sign is flipped", None),
            (lambda x, w, b, y: tuple(g / 2 for g in _exercise_neuron(x, w, b, y)),
             "off by a factor 2", None)],
        "check_unbroadcast": [
            (lambda g, shape: g, "sum over the broadcast axis is missing",
             "input of shape () and g = [0] of shape (1,)"),
            (unbroadcast_no_leading_sum, "gradient of shape (1,) for an input of shape (): "
                                         "the sum over the broadcast axis is missing", None),
            (unbroadcast_no_keepdims, "keepdims=True", "input of shape (1,) and g = [0, 0]"),
            (lambda g, shape: g.sum(axis=tuple(range(g.ndim - len(shape))))
             .reshape(-1)[:int(np.prod(shape))].reshape(shape)
             if g.ndim > len(shape) else g.mean(0, keepdims=True)
             if g.shape != tuple(shape) else g, "sum, not mean", None)],
        "check_matmul_backward": [
            (lambda A, B, G: (G @ B if G.shape[1] == B.shape[0] else G @ B.T, A.T @ G),
             "not G B", "B = [[0, 0], [1, 0]]"),
            (lambda A, B, G: (np.ones_like(G) @ B.T, A.T @ np.ones_like(G)),
             "G is not used", "A = [[0]] (shape (1, 1)), B = [[1]] (shape (1, 1)) and G = [[0]]"),
            (lambda A, B, G: (2 * G @ B.T, A.T @ G), "off by a factor 2", None),
            (lambda A, B, G: (A.T @ G, G @ B.T) if A.shape == B.shape else (G @ B.T, A.T @ G),
             "swapped", None)],
        "check_softmax_backward": [
            (lambda y, g: g * y * (1 - y), "only the Jacobian's diagonal", "x = [0, 0]"),
            (lambda y, g: y * (g - (g * y).sum()), "each row is its own softmax", None),
            (lambda y, g: y * (g - g.sum(-1, keepdims=True)), "not sum(g)", "x = [0, 0]"),
            (lambda y, g: g, "Jacobian diag(y) - y y^T is missing", None)],
        "check_layer_norm_backward": [
            (ln_backward_constant_stats, "treats them as constants", None),
            (ln_backward_no_variance_path, "path through the variance", "x = [0, 1]"),
            (ln_backward_no_mean_path, "path through the mean", None)],
        "check_cross_entropy_backward": [
            (lambda z, t, e: ce_backward(z, t, e, divide=False), "divide the gradient by N",
             "target = [0, 0], eps = 0.0"),
            (lambda z, t, e: ce_backward(z, t, 0.0), "the smoothing is missing",
             "logits = [[0, 0]] (shape (1, 2)), target = [0], eps = 0.1"),
            (lambda z, t, e: ce_backward(z, t, e, spread=e / (z.shape[1] - 1)),
             "not over the C - 1 others", "eps = 0.1"),
            (lambda z, t, e: -ce_backward(z, t, e), "sign is flipped", "eps = 0.0")],
        "check_attention_backward": [
            (lambda Q, K, V, G: head_backward(Q, K, V, G, scaled=False), "1/sqrt(d)", None),
            (lambda Q, K, V, G: head_backward(Q, K, V, G, transpose_p=False), "not P G", None),
            (no_softmax_jacobian, "rowsum(dP * P)", None)],
        "check_hvp": [
            (hvp_without_create_graph, "create_graph=True", "A = [[0]], at x = [0], v = [0]"),
            (hvp_gradient_only, "gradient of f", None),
            (hvp_gradient_times_v, "element by element", None),
            (hvp_unweighted, "vector of ones", None)],
        "check_attention": [
            (lambda Q, K, V: softmax(Q @ K.T) @ V, "not divided by sqrt(d_k)", None),
            (lambda Q, K, V: softmax(Q @ K.T / Q.shape[-1]) @ V, "divided by d_k", None),
            (lambda Q, K, V: softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=0) @ V,
             "down the columns", None),
            (lambda Q, K, V: Q @ K.T / math.sqrt(Q.shape[-1]) @ V, "softmax is missing", None)],
        "check_split_heads": [
            (lambda x, h: x.reshape(x.shape[0], h, x.shape[1], x.shape[2] // h),
             "mixes positions into heads", "x = [[[0, 1], [2, 3]]] of shape (1, 2, 2) and 2 heads"),
            (split_heads_interleaved, "every H-th feature", None),
            (split_heads_no_permute, "move the head axis forward", None)],
        "check_causal_mask": [
            (lambda T: np.tril(np.full((T, T), -np.inf), k=-1), "blocks the past",
             "causal_mask(2)"),
            (lambda T: np.triu(np.full((T, T), -np.inf)), "may see itself", "causal_mask(1)"),
            (lambda T: np.triu(np.full((T, T), -1e9), k=1), "not a large finite number",
             "causal_mask(2)")],
        "check_sinusoid_table": [
            (sin_cos_swapped, "swapped", "sinusoid_table(1, 2)"),
            (lambda n, d: sinusoid(n, d, halves=True), "first half", None),
            (lambda n, d: sinusoid(n, d, step=1), "i / d_model", None)],
        "check_layer_norm": [
            (layer_norm_over_batch, "batch norm", None),
            (lambda x, eps=1e-5: (x - x.mean(-1, keepdims=True))
             / np.sqrt(x.var(-1, ddof=1, keepdims=True) + eps), "biased variance", None),
            (lambda x, eps=1e-5: x / np.sqrt(x.var(-1, keepdims=True) + eps),
             "mean is not subtracted", None),
            (lambda x, eps=1e-5: (x - x.mean(-1, keepdims=True))
             / np.sqrt(x.var(-1, keepdims=True)), "eps is missing", "x = [[[0]]]")],
        "check_add_and_norm": [
            (lambda x, f, norm, norm_first: norm(x + f(x)), "norm_first=True gives post-norm",
             None),
            (lambda x, f, norm, norm_first: norm(x + f(x)) if norm_first else x + f(norm(x)),
             "swapped", None),
            (lambda x, f, norm, norm_first: x + f(norm(x)) if norm_first else norm(f(x)),
             "the residual is missing", None),
            (lambda x, f, norm, norm_first: x + f(norm(x)), "norm_first=False gives pre-norm",
             None)],
        "check_encoder_layer": [
            (encoder_layer(lambda self, x, src_key_padding_mask=None:
                           post_norm(self, x, src_key_padding_mask, (False, True))),
             "residual around self-attention", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None:
                           post_norm(self, x, src_key_padding_mask, (True, False))),
             "residual around the feed-forward", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: h + self.norm2(self.ffn(h)))(
                    x + self.norm1(self.sa(x, src_key_padding_mask)))),
             "norm is in the wrong place", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: h + self.ffn(self.norm2(h)))(
                    x + self.sa(self.norm1(x), src_key_padding_mask))), "pre-norm", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None: post_norm(self, x, None)),
             "padding mask is ignored", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None: F.dropout(
                post_norm(self, x, src_key_padding_mask), self.p, training=True)),
             "dropout is still on", None),
            (encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: self.norm2(h + self.linear2(self.linear1(h))))(
                    self.norm1(x + self.sa(x, src_key_padding_mask)))), "ReLU", None)],
        "check_noam": [
            (lambda s, d, w: min(s ** -0.5, s * w ** -1.5), "d_model^-0.5 is missing",
             "step 1 with d_model 512 and warm-up 1"),
            (noam_for_the_paper_only, "the paper's", None),
            (lambda s, d, w: d ** -0.5 * max(s ** -0.5, s * w ** -1.5), "not the maximum", None),
            (lambda s, d, w: d ** -0.5 * min(s ** -0.5, s * w ** -0.5), "warmup^-1.5", None)],
        "check_merge_pair": [
            (greedy_merge_overlap, "never adds or drops letters", None),
            (lambda s, p: merge(s, p, skip=False), "skip the symbol just used",
             "merging ('a', 'a') in ['▁', 'a', 'a']"),
            (lambda s, p: merge(s, p, first_only=True), "not only the first", None),
            (lambda s, p: list(s), "nothing was merged", None)],
        "check_greedy_decode": [
            (lambda *a: greedy(*a, feed_back=False), "depends on <bos> alone", None),
            (lambda *a: greedy(*a, position=0), "depends on <bos> alone", None),
            (lambda *a: greedy(*a, mask_pad=False), "padding", "(max_len 1)"),
            (lambda *a: greedy(*a, keep_bos=True), "starts with <bos>", "(max_len 1)"),
            (lambda *a: greedy(*a, stop=False), "went on after <eos>", None),
            (lambda *a: greedy(*a, keep_eos=False), "<eos> that ended the sentence is missing",
             None),
            (lambda model, src, max_len, bos, eos: greedy(model, src, max_len + 1, bos, eos),
             "at most max_len", "(max_len 1)")],
        "check_neighbour_softmax": [
            (lambda e, adj: softmax(np.where(adj, e, -1e9)), "N(i) includes i",
             "adjacency = [[0, 0], [0, 0]]"),
            (lambda e, adj: softmax(e), "mask them with -inf", None),
            (lambda e, adj: softmax(np.where(adj | np.eye(len(e), dtype=bool), e, -np.inf),
                                    axis=0), "down the columns", None)],
        "check_stable_softmax": [
            (lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True), "overflows", "x = [[710]]"),
            (lambda x: stable(x, lambda x: x.max()), "not the maximum of the whole array", None),
            (lambda x: stable(x, lambda x: x.min(-1, keepdims=True)), "not its minimum", None)],
    }


def _exercise_neuron(x, w, b, y):
    h = math.tanh(w * x + b)
    d = 2 * (h - y) * (1 - h * h)
    return d * x, d, d * w


# the first two mistakes of each checker run in the fast suite, the others with -m slow (each
# search and shrink takes a few tenths of a second)
WRONG = [pytest.param(name, i, id=f"{name}-{i}", marks=[pytest.mark.slow] if i >= 2 else [])
         for name, answers in _wrong_answers().items() for i in range(len(answers))]


def test_every_checker_has_several_wrong_answers():
    answers = _wrong_answers()
    assert sorted(answers) == sorted(_exercises.CHECKERS)
    few = [name for name, a in answers.items() if len(a) < 3]
    assert not few, f"checkers tested with fewer than three typical mistakes: {few}"


@pytest.mark.parametrize("name, which", WRONG)
def test_checker_names_the_mistake_on_the_smallest_input(name, which, capsys):
    wrong, diagnosis, smallest = _wrong_answers()[name][which]
    assert _exercises.check(_exercises.CHECKERS[name], wrong) is False
    message = capsys.readouterr().out
    assert "not yet right" in message, message
    assert diagnosis in message, f"{name} should say {diagnosis!r}: {message}"
    if smallest:
        assert smallest in message, f"{name} should show the smallest input {smallest!r}: {message}"


@pytest.mark.parametrize("name", sorted(_exercises.CHECKERS))
def test_unfinished_stub_is_reported_not_raised(name, capsys):
    def stub(*args, **kwargs):
        raise NotImplementedError

    assert _exercises.check(_exercises.CHECKERS[name], stub) is False
    assert "not implemented yet" in capsys.readouterr().out


def test_every_checker_is_used_by_a_tutorial():
    text = "".join(p.read_text(encoding="utf-8") for p in FILES)
    unused = [name for name in _exercises.CHECKERS if f"check({name}," not in text]
    assert not unused, f"checkers no tutorial uses: {unused}"


def test_float32_rounding_is_accepted_and_said(capsys):
    def softmax_backward_float32(y, g):
        y, g = y.astype(np.float32), g.astype(np.float32)
        return y * (g - (g * y).sum(-1, keepdims=True))

    def attention_float32(Q, K, V):
        import minigrad as mg
        from minigrad.nn import functional as F
        Q, K, V = (mg.tensor(a.astype(np.float32)) for a in (Q, K, V))
        return F.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), dim=-1) @ V

    for checker, answer in ((_exercises.check_softmax_backward, softmax_backward_float32),
                            (_exercises.check_attention, attention_float32)):
        assert _exercises.check(checker, answer) is True
        assert "correct (" in capsys.readouterr().out
        assert "float32 rounding" in checker(answer)


def test_a_float32_answer_with_a_mistake_still_fails():
    def unscaled_float32(Q, K, V):
        s = (Q @ K.T).astype(np.float32)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)) @ V.astype(np.float32)

    with pytest.raises(_exercises.Wrong, match="not divided by sqrt"):
        _exercises.check_attention(unscaled_float32)


def test_an_unknown_mistake_is_shown_with_gradcheck():
    def shifted(A, B, G):
        return G @ B.T + 0.5, A.T @ G

    with pytest.raises(_exercises.Wrong, match="gradcheck") as info:
        _exercises.check_matmul_backward(shifted)
    assert "A = [[0]] (shape (1, 1)), B = [[0]] (shape (1, 1)) and G = [[0]]" in str(info.value)


def test_the_same_answer_gets_the_same_message_every_time():
    wrong = _wrong_answers()["check_softmax_backward"][0][0]
    messages = set()
    for _ in range(2):
        with pytest.raises(_exercises.Wrong) as info:
            _exercises.check_softmax_backward(wrong)
        messages.add(str(info.value))
    assert len(messages) == 1, messages


def test_checkers_leave_the_random_stream_alone():
    """A checker that builds layers draws its weights from its own seed and gives the random
    state back, so the tutorial's numbers after it do not depend on the exercise."""
    import minigrad as mg

    mg.manual_seed(123)
    expected = mg.randn(3).numpy()
    mg.manual_seed(123)
    answers = _wrong_answers()
    for name in ("check_encoder_layer", "check_greedy_decode"):
        with pytest.raises(_exercises.Wrong):
            _exercises.CHECKERS[name](answers[name][0][0])
    assert np.array_equal(mg.randn(3).numpy(), expected)


def test_a_missing_hypothesis_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "hypothesis", None)
    with pytest.raises(ImportError, match="pip install hypothesis"):
        _exercises.check(_exercises.check_noam, lambda step, d_model, warmup: 0.0)


def test_the_solutions_of_the_backward_rules_pass_gradcheck():
    """The rule checkers judge an answer against an exact gradient to float64 rounding; the
    tutorial's solutions, which they accept, are right by central differences too."""
    import _exercises_rules as rules
    import minigrad as mg
    from minigrad.autograd import gradcheck

    ns = _namespace()
    for source in solution_cells(TUTORIALS / "04_backward_rules.py"):
        exec(compile(source, "04_backward_rules.py:solution", "exec"), ns)
    eps, target = 1e-5, np.array([2, 0, 1])
    ce_forward = (lambda z: -(np.log(rules._softmax_rows(z))[np.arange(3), target] * 0.9
                              + np.log(rules._softmax_rows(z)).sum(-1) * 0.1 / 4).mean())
    cases = [
        (lambda A, B: A @ B, ns["matmul_backward"], [(3, 2), (2, 4)]),
        (rules._softmax_rows, lambda x, g: ns["softmax_backward"](rules._softmax_rows(x), g),
         [(2, 3, 4)]),
        (lambda x: rules._normalise(x, eps), lambda x, g: ns["layer_norm_backward"](x, g, eps),
         [(3, 5)]),
        (lambda z: np.asarray(ce_forward(z)),
         lambda z, g: ns["cross_entropy_backward"](z, target, 0.1) * g, [(3, 4)]),
        (lambda Q, K, V: rules._head(Q, K, V)[1], ns["attention_backward"],
         [(3, 2), (4, 2), (4, 3)]),
    ]
    rng = np.random.default_rng(0)
    for forward, backward, shapes in cases:
        rule = rules._learner_function(forward, lambda *a, b=backward: (
            b(*a) if isinstance(b(*a), tuple) else (b(*a),)))
        inputs = [mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
                  for s in shapes]
        assert gradcheck(rule.apply, inputs)
