"""The tutorials' "implement it" exercises: every checker accepts the tutorial's own solution,
rejects a typical wrong answer with a message, and reports an unfinished stub without failing.

Solutions are the code cells tagged "solution" in each tutorial (hidden in Jupyter); each one
defines the function and asserts `check(checker, function)` itself, so running it is the test.
"""
from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

jupytext = pytest.importorskip("jupytext")

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "tutorials"
FILES = sorted(TUTORIALS.glob("[0-9][0-9]_*.py")) + sorted(TUTORIALS.glob("A[0-9]_*.py"))
sys.path.insert(0, str(TUTORIALS))
import _exercises  # noqa: E402  (lives beside the tutorials)


def solution_cells(path):
    return [cell.source for cell in jupytext.read(path).cells
            if cell.cell_type == "code" and "solution" in cell.metadata.get("tags", [])]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_solutions_pass_their_checkers(path):
    cells = solution_cells(path)
    assert cells, f"{path.name} has no exercise solution (a code cell tagged 'solution')"
    import minigrad as mg
    from minigrad import nn
    from minigrad.nn import functional as F
    for source in cells:
        assert "assert check(" in source, f"a solution cell of {path.name} checks nothing"
        namespace = {"np": np, "math": math, "mg": mg, "nn": nn, "F": F,
                     "check": _exercises.check, **_exercises.CHECKERS}
        exec(compile(source, f"{path.name}:solution", "exec"), namespace)


def _wrong_answers():
    """One typical mistake per checker."""
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

    return {
        "check_hvp": [hvp_without_create_graph],
        "check_greedy_decode": [
            lambda *a: greedy(*a, feed_back=False), lambda *a: greedy(*a, position=0),
            lambda *a: greedy(*a, mask_pad=False), lambda *a: greedy(*a, keep_bos=True),
            lambda *a: greedy(*a, stop=False), lambda *a: greedy(*a, keep_eos=False),
            lambda model, src, max_len, bos, eos: greedy(model, src, max_len + 1, bos, eos)],
        "check_encoder_layer": [
            encoder_layer(lambda self, x, src_key_padding_mask=None:
                          post_norm(self, x, src_key_padding_mask, (False, True))),
            encoder_layer(lambda self, x, src_key_padding_mask=None:
                          post_norm(self, x, src_key_padding_mask, (True, False))),
            encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: h + self.norm2(self.ffn(h)))(
                    x + self.norm1(self.sa(x, src_key_padding_mask)))),
            encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: h + self.ffn(self.norm2(h)))(
                    x + self.sa(self.norm1(x), src_key_padding_mask))),
            encoder_layer(lambda self, x, src_key_padding_mask=None: post_norm(self, x, None)),
            encoder_layer(lambda self, x, src_key_padding_mask=None: F.dropout(
                post_norm(self, x, src_key_padding_mask), self.p, training=True)),
            encoder_layer(lambda self, x, src_key_padding_mask=None: (
                lambda h: self.norm2(h + self.linear2(self.linear1(h))))(
                    self.norm1(x + self.sa(x, src_key_padding_mask)))),
        ],
        "check_topological_order": [topo_without_seen, topo_reversed,
                                    lambda root: [*root.parents, root]],
        "check_unbroadcast": [lambda g, shape: g,
                              lambda g, shape: g.sum(axis=tuple(range(g.ndim - len(shape))))
                              if g.ndim > len(shape) else g,
                              lambda g, shape: g.sum(axis=tuple(range(g.ndim - len(shape))))
                              .reshape(-1)[:int(np.prod(shape))].reshape(shape)
                              if g.ndim > len(shape) else g.mean(0, keepdims=True)
                              if g.shape != tuple(shape) else g],
        "check_matmul_backward": [lambda A, B, G: (G @ B if G.shape[1] == B.shape[0]
                                                   else G @ B.T, A.T @ G),
                                  lambda A, B, G: (np.ones_like(G) @ B.T, A.T @ np.ones_like(G)),
                                  lambda A, B, G: (2 * G @ B.T, A.T @ G)],
        "check_softmax_backward": [lambda y, g: g * y * (1 - y),
                                   lambda y, g: y * (g - (g * y).sum()),
                                   lambda y, g: y * (g - g.sum(-1, keepdims=True)),
                                   lambda y, g: g],
        "check_layer_norm_backward": [ln_backward_constant_stats, ln_backward_no_variance_path],
        "check_cross_entropy_backward": [
            lambda z, t, e: ce_backward(z, t, e, divide=False),
            lambda z, t, e: ce_backward(z, t, 0.0),
            lambda z, t, e: ce_backward(z, t, e, spread=e / (z.shape[1] - 1)),
            lambda z, t, e: -ce_backward(z, t, e)],
        "check_attention_backward": [lambda Q, K, V, G: head_backward(Q, K, V, G, scaled=False),
                                     lambda Q, K, V, G: head_backward(Q, K, V, G,
                                                                      transpose_p=False)],
        "check_neuron_gradients": [no_tanh_factor],
        "check_attention": [lambda Q, K, V: softmax(Q @ K.T) @ V],
        "check_split_heads": [lambda x, h: x.reshape(x.shape[0], h, x.shape[1], x.shape[2] // h)],
        "check_causal_mask": [lambda T: np.tril(np.full((T, T), -np.inf), k=-1)],
        "check_sinusoid_table": [sin_cos_swapped],
        "check_layer_norm": [layer_norm_over_batch],
        "check_add_and_norm": [lambda x, f, norm, norm_first: norm(x + f(x))],
        "check_noam": [lambda s, d, w: min(s ** -0.5, s * w ** -1.5), noam_for_the_paper_only],
        "check_merge_pair": [greedy_merge_overlap],
        "check_neighbour_softmax": [lambda e, adj: softmax(np.where(adj, e, -1e9))],
        "check_stable_softmax": [lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True)],
    }


WRONG = [(name, i) for name, fns in _wrong_answers().items() for i in range(len(fns))]


def test_every_checker_has_wrong_answers():
    assert sorted(_wrong_answers()) == sorted(_exercises.CHECKERS)


@pytest.mark.parametrize("name, which", WRONG, ids=[f"{n}-{i}" for n, i in WRONG])
def test_checker_rejects_a_wrong_answer_with_a_reason(name, which, capsys):
    wrong = _wrong_answers()[name][which]
    checker = _exercises.CHECKERS[name]
    with pytest.raises(_exercises.Wrong) as info:
        checker(wrong)
    assert len(str(info.value)) > 20, f"{name} gives no useful reason: {info.value!r}"
    assert _exercises.check(checker, wrong) is False
    assert "not yet right" in capsys.readouterr().out


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


def _hvp_mistakes():
    """The Hessian-vector product exercise: each typical mistake and the hint it should get."""
    import minigrad as mg

    def first_grad(f, x):
        x = x.detach().requires_grad_(True)
        return x, mg.autograd.grad(f(x), x, create_graph=True)[0]

    def only_the_gradient(f, x, v):
        return first_grad(f, x)[1]

    def gradient_times_v(f, x, v):
        return first_grad(f, x)[1] * v

    def unweighted(f, x, v):
        x, g = first_grad(f, x)
        return mg.autograd.grad(g.sum(), x)[0]

    def no_create_graph(f, x, v):
        x = x.detach().requires_grad_(True)
        (g,) = mg.autograd.grad(f(x), x)
        return mg.autograd.grad((g * v).sum(), x)[0]

    return [(only_the_gradient, "gradient of f"), (gradient_times_v, "element by element"),
            (unweighted, "vector of ones"), (no_create_graph, "create_graph=True")]


@pytest.mark.parametrize("index", range(4))
def test_hvp_checker_names_each_typical_mistake(index):
    wrong, hint = _hvp_mistakes()[index]
    with pytest.raises(_exercises.Wrong, match=hint.replace("(", r"\(")):
        _exercises.check_hvp(wrong)
