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

    def hvp_without_create_graph(f, x, v):
        import minigrad as mg
        x = x.detach().requires_grad_(True)
        (g,) = mg.autograd.grad(f(x), x)
        return mg.autograd.grad((g * v).sum(), x)[0]

    return {
        "check_neuron_gradients": no_tanh_factor,
        "check_hvp": hvp_without_create_graph,
        "check_attention": lambda Q, K, V: softmax(Q @ K.T) @ V,
        "check_split_heads": lambda x, h: x.reshape(x.shape[0], h, x.shape[1], x.shape[2] // h),
        "check_causal_mask": lambda T: np.tril(np.full((T, T), -np.inf), k=-1),
        "check_sinusoid_table": sin_cos_swapped,
        "check_layer_norm": layer_norm_over_batch,
        "check_add_and_norm": lambda x, f, norm, norm_first: norm(x + f(x)),
        "check_noam": lambda s, d, w: min(s ** -0.5, s * w ** -1.5),
        "check_merge_pair": greedy_merge_overlap,
        "check_neighbour_softmax": lambda e, adj: softmax(np.where(adj, e, -1e9)),
        "check_stable_softmax": lambda x: np.exp(x) / np.exp(x).sum(-1, keepdims=True),
    }


@pytest.mark.parametrize("name", sorted(_exercises.CHECKERS))
def test_checker_rejects_a_wrong_answer_with_a_reason(name, capsys):
    wrong = _wrong_answers()[name]
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
