"""Tests for `minigrad.viz`: the DOT text is parsed back and checked node by node, edge by edge."""
import ast
import math
import pathlib
import re
import shutil
from collections import Counter

import graphviz
import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.module import Module, Parameter
from minigrad.autograd import op as autograd_op
from minigrad.viz import (GraphvizNotFoundError, draw_graph, module_levels, recording,
                          render_graph)

ATTR = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|[^\s\]]+)')


def _unquote(v):
    return v[1:-1].replace('\\"', '"') if v.startswith('"') else v


def parse(source):
    """DOT text -> (nodes {id: {attrs, "lines", "clusters"}}, edges [(src id, dst id)], labels)."""
    nodes, edges, stack, cluster_labels = {}, [], [], []
    for raw in source.splitlines():
        line = raw.strip()
        if line.startswith("subgraph "):
            stack.append(None)
        elif line == "}":
            if stack:
                stack.pop()
        elif m := re.match(r"^(\S+) -> (\S+)$", line):
            edges.append((m.group(1), m.group(2)))
        elif (m := re.match(r"^(\S+) \[(.*)\]$", line)) and m.group(1) not in ("graph", "node"):
            attrs = {k: _unquote(v) for k, v in ATTR.findall(m.group(2))}
            attrs["lines"] = attrs["label"].split("\\n")
            attrs["clusters"] = tuple(stack)
            nodes[m.group(1)] = attrs
        elif stack and "label=" in line:  # a cluster's own attributes
            stack[-1] = dict((k, _unquote(v)) for k, v in ATTR.findall(line))["label"]
            cluster_labels.append(stack[-1])
    return nodes, edges, cluster_labels


def first(nodes, key):
    return nodes[key]["lines"][0]


def labelled_edges(nodes, edges):
    return Counter((first(nodes, s), first(nodes, d)) for s, d in edges)


@recording()
def micrograd_expr(a_val=2.0, b_val=-3.0):
    a = mg.tensor(a_val, requires_grad=True)
    b = mg.tensor(b_val, requires_grad=True)
    c = a * b
    d = c + a
    e = d.tanh()
    return a, b, c, d, e, e.sum()


# --- tiny models built from Module/Parameter only (layers may not exist yet) -----------------

class MatRelu(Module):
    def __init__(self, n, scale=0.1):
        super().__init__()
        self.weight = Parameter(np.full((n, n), scale, dtype=np.float32))

    def forward(self, x):
        return (x @ self.weight).relu()


class TwoLayer(Module):
    def __init__(self, n=3):
        super().__init__()
        self.layer1 = MatRelu(n)
        self.layer2 = MatRelu(n)

    def forward(self, x):
        return self.layer2(self.layer1(x)).sum()


class Stack(Module):
    """Children named "0", "1", ... like a ModuleList."""

    def __init__(self, n, k):
        super().__init__()
        for i in range(k):
            self.add_module(str(i), MatRelu(n))

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x


class Encoder(Module):
    def __init__(self, n):
        super().__init__()
        self.layers = Stack(n, 2)

    def forward(self, x):
        return self.layers(x) * 2.0


class Net(Module):
    def __init__(self, n=3):
        super().__init__()
        self.enc = Encoder(n)
        self.head = MatRelu(n)

    def forward(self, x):
        return (self.head(self.enc(x)) + x).sum()


@recording()
def net_output():
    x = mg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    return Net()(x)


# --- the tests --------------------------------------------------------------------------------

def test_micrograd_expression_exact_nodes_and_edges():
    a, b, *_, loss = micrograd_expr()
    nodes, edges, clusters = parse(draw_graph(loss, params={"a": a, "b": b}).source)
    ops = {first(nodes, k) for k, n in nodes.items() if n["shape"] == "box"}
    tensors = {first(nodes, k) for k, n in nodes.items() if n["shape"] == "ellipse"}
    assert ops == {"Mul", "Add", "Tanh", "Sum"} and len(nodes) == 7
    assert tensors == {"a", "b", "output"}
    assert labelled_edges(nodes, edges) == Counter({
        ("a", "Mul"): 1, ("b", "Mul"): 1, ("Mul", "Add"): 1, ("a", "Add"): 1,
        ("Add", "Tanh"): 1, ("Tanh", "Sum"): 1, ("Sum", "output"): 1})
    assert clusters == []  # no module made these ops
    by_name = {first(nodes, k): n["lines"] for k, n in nodes.items()}
    assert by_name["Mul"] == ["Mul", "() float32"]
    assert by_name["a"] == ["a", "() float32"]


def test_labels_without_shapes_inputs_and_dedup():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    const = mg.tensor([5.0, 6.0])  # needs no grad: autograd does not record it
    y = (x * x + const).sum()
    nodes, edges, _ = parse(draw_graph(y, show_shapes=False).source)
    assert sorted(n["lines"] for n in nodes.values()) == [
        ["Add"], ["Mul"], ["Sum"], ["input"], ["output"]]
    assert labelled_edges(nodes, edges) == Counter(
        {("input", "Mul"): 1, ("Mul", "Add"): 1, ("Add", "Sum"): 1, ("Sum", "output"): 1})


def test_leaf_output_and_bad_depth():
    x = mg.tensor([1.0], requires_grad=True)
    nodes, edges, _ = parse(draw_graph(x).source)
    assert [n["lines"][0] for n in nodes.values()] == ["output"] and edges == []
    with pytest.raises(ValueError, match="max_depth"):
        draw_graph(micrograd_expr()[-1], max_depth=-1)


def test_clusters_carry_module_paths_and_parameter_names():
    x = mg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    with recording():
        out = TwoLayer()(x)
    nodes, edges, clusters = parse(draw_graph(out).source)
    assert sorted(clusters) == ["TwoLayer", "layer1", "layer2"]
    where = Counter((first(nodes, k), n["clusters"]) for k, n in nodes.items())
    assert where == Counter({
        ("MatMul", ("layer1",)): 1, ("Relu", ("layer1",)): 1, ("layer1.weight", ("layer1",)): 1,
        ("MatMul", ("layer2",)): 1, ("Relu", ("layer2",)): 1, ("layer2.weight", ("layer2",)): 1,
        ("Sum", ("TwoLayer",)): 1, ("input", ()): 1, ("output", ()): 1})
    assert len(edges) == 8
    flat, _, none = parse(draw_graph(out, cluster_modules=False).source)
    assert none == [] and "subgraph" not in draw_graph(out, cluster_modules=False).source
    assert {k: n["lines"] for k, n in flat.items()} == {k: n["lines"] for k, n in nodes.items()}


def test_nested_clusters_follow_dotted_prefixes():
    nodes, _, _ = parse(draw_graph(net_output()).source)
    where = {(first(nodes, k), n["clusters"]) for k, n in nodes.items()}
    assert ("enc.layers.0.weight", ("enc", "enc.layers.0")) in where
    assert ("MatMul", ("enc", "enc.layers.1")) in where
    assert ("Mul", ("enc",)) in where and ("head.weight", ("head",)) in where


def test_module_levels_definition():
    assert module_levels("encoder.layers.0.self_attn") == [
        "encoder", "encoder.layers.0", "encoder.layers.0.self_attn"]
    assert module_levels("0.lin") == ["0", "0.lin"]  # a root Sequential's child
    assert module_levels("blocks.0.1") == ["blocks.0", "blocks.0.1"]
    assert module_levels(None) == [] and module_levels("Net") == ["Net"]


def expected_collapse(nodes, edges, k):
    """Collapse the full graph by hand: node id -> id or ("module", path), plus the edge set."""
    mapping = {}
    for key, n in nodes.items():
        if n["shape"] == "box" and len(n["clusters"]) > k:
            mapping[key] = ("module", n["clusters"][k])
        else:
            mapping[key] = key
    for key, n in nodes.items():  # a parameter used by a single collapsed module joins it
        users = {mapping[d] for s, d in edges if s == key}
        named = n["shape"] == "ellipse" and first(nodes, key) not in ("input", "output")
        if named and len(users) == 1 and isinstance(next(iter(users)), tuple):
            mapping[key] = next(iter(users))
    kept = {(mapping[s], mapping[d]) for s, d in edges if mapping[s] != mapping[d]}
    return mapping, kept


@pytest.mark.parametrize("k", [0, 1, 2])
def test_max_depth_collapses_and_keeps_every_edge(k):
    out = net_output()
    full_nodes, full_edges, _ = parse(draw_graph(out).source)
    mapping, want_edges = expected_collapse(full_nodes, full_edges, k)
    nodes, edges, _ = parse(draw_graph(out, max_depth=k).source)
    ident = {key: ("module", first(nodes, key)) if n["shape"] == "box3d" else key
             for key, n in nodes.items()}
    assert set(ident.values()) == set(mapping.values())
    assert {(ident[s], ident[d]) for s, d in edges} == want_edges
    assert len(edges) == len(want_edges)  # deduplicated, and no self-loops by construction
    if k < 2:
        assert len(nodes) < len(full_nodes)
    for key, n in nodes.items():  # "(N ops)" counts the ops folded into the node
        if n["shape"] == "box3d":
            count = sum(1 for fk, m in mapping.items()
                        if m == ident[key] and full_nodes[fk]["shape"] == "box")
            assert n["lines"][1] == f"({count} op{'s' if count != 1 else ''})"
    if k == 0:
        assert sorted(first(nodes, key) for key in nodes) == [
            "Net", "enc", "head", "input", "output"]


def test_shared_parameter_stays_visible_between_collapsed_modules():
    class Tied(Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = MatRelu(2), MatRelu(2)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    with recording():
        out = Tied()(mg.tensor(np.ones((1, 2), dtype=np.float32), requires_grad=True))
    nodes, edges, _ = parse(draw_graph(out, max_depth=0).source)
    assert labelled_edges(nodes, edges) == Counter({
        ("input", "a"): 1, ("a.weight", "a"): 1, ("a.weight", "b"): 1, ("a", "b"): 1,
        ("b", "output"): 1})


def test_show_values_and_grads():
    a, b, c, d, e, loss = micrograd_expr(2.0, -3.0)
    d.retain_grad()

    def labels():
        nodes = parse(draw_graph(loss, params={"a": a, "b": b}, show_values=True,
                                 show_grads=True).source)[0]
        return {first(nodes, k): n["lines"] for k, n in nodes.items()}

    before = labels()
    assert before["Mul"] == ["Mul", "() float32", "data: -6"]
    assert before["a"] == ["a", "() float32", "data: 2"]  # no grad line before backward
    loss.backward()
    after = labels()
    da = (1 - math.tanh(-4.0) ** 2) * (-3.0 + 1.0)
    assert after["a"][-1] == f"grad: {float(a.grad.numpy()):.4g}"
    assert float(after["a"][-1].split()[-1]) == pytest.approx(da, rel=1e-3)
    assert after["Add"][-1].startswith("grad: ")  # d retained its grad
    assert after["Mul"][-1] == "data: -6"         # c did not
    x = mg.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    with recording():
        y = (x * 2.0).sum()
    nodes, _, _ = parse(draw_graph(y, show_values=True, show_shapes=False).source)
    mul = next(n["lines"] for n in nodes.values() if n["lines"][0] == "Mul")
    assert mul == ["Mul", "data: mean=5 std=2.24 min=2 max=8"]


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_render_svg(tmp_path):
    g = draw_graph(net_output(), max_depth=1)
    path = pathlib.Path(render_graph(g, tmp_path / "net.svg"))
    assert path == tmp_path / "net.svg" and (tmp_path / "net.dot").exists()
    text = path.read_text()
    assert text.startswith("<?xml") or "<svg" in text
    out = pathlib.Path(g.render(str(tmp_path / "again"), format="svg"))
    assert "<svg" in out.read_text()


def test_missing_dot_error_is_clear(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no `dot` anywhere
    g = draw_graph(micrograd_expr()[-1])
    src = tmp_path / "out" / "graph.dot"
    with pytest.raises(RuntimeError) as info:
        g.render(str(src), format="svg")
    msg = str(info.value)
    assert isinstance(info.value, GraphvizNotFoundError) and str(src) in msg
    assert "apt-get install graphviz" in msg and "brew install graphviz" in msg
    assert "conda install -c conda-forge graphviz" in msg
    assert src.read_text() == g.source
    with pytest.raises(RuntimeError, match="brew"):  # a plain Digraph through render_graph
        render_graph(graphviz.Digraph(), tmp_path / "plain.svg")
    assert (tmp_path / "plain.dot").exists()


def test_deep_chain_needs_no_recursion():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x
    for _ in range(5000):
        y = y * 1.0001
    g = draw_graph(y, show_values=True)
    nodes, edges, _ = parse(g.source)
    assert len(nodes) == 5002 and len(edges) == 5001


def test_viz_stays_in_the_core_layer():
    tree = ast.parse(pathlib.Path(draw_graph.__code__.co_filename).read_text())
    imported = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    imported += [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    assert not any(m.startswith(("minigrad.nn", "minigrad.models", "nn", "models"))
                   or m in (".nn", ".models") for m in imported)


def test_minigrad_viz_command_draws_the_transformer(tmp_path):
    """The `minigrad-viz` console script: DOT always, SVG where Graphviz is installed."""
    from minigrad.translate import graph_demo

    dot_path = tmp_path / "t.dot"
    assert graph_demo.main(["--max-depth", "2", "--out", str(dot_path), "--dot-only"]) == 0
    text = dot_path.read_text()
    assert "transformer.encoder.layers.0" in text and "transformer.decoder.layers.1" in text
    assert "generator.weight" in text and "CrossEntropy" in text
    full = tmp_path / "full.dot"
    assert graph_demo.main(["--max-depth", "-1", "--out", str(full), "--dot-only"]) == 0
    assert full.read_text().count("->") > 3 * text.count("->")
    if shutil.which("dot"):
        svg = tmp_path / "t.svg"
        assert graph_demo.main(["--max-depth", "1", "--out", str(svg)]) == 0
        assert "<svg" in svg.read_text()


def test_names_follow_modules_added_between_calls(monkeypatch):
    import minigrad.nn.module as module_mod
    x = mg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    model = Stack(3, 1)
    model(x)
    walks = []
    real = module_mod._name_tree
    monkeypatch.setattr(module_mod, "_name_tree", lambda root: walks.append(root) or real(root))
    model(x)
    assert walks == []  # nothing changed: the names stored by the first call still hold
    model.add_module("1", MatRelu(3))  # a new layer after the first call is named on the next
    with recording():
        y = model(x).sum()
    nodes, _, _ = parse(draw_graph(y).source)
    assert walks == [model]
    assert ("1.weight", ("1",)) in {(first(nodes, k), n["clusters"]) for k, n in nodes.items()}
    other = Stack(3, 0)
    other.add_module("0", model._modules["0"])  # shared with another model: its names win
    other(x)
    model(x)  # and the first model takes its names back when called again
    assert model._modules["0"]._path == "0" and model._modules["0"]._tree_root is model


def test_importing_viz_records_nothing():
    import minigrad.viz  # imported already: what its import left behind is still there
    assert not [h for h in autograd_op._record_hooks
                if getattr(h, "__module__", None) == minigrad.viz.__name__]


def test_ops_outside_recording_are_drawn_without_modules_or_values():
    x = mg.tensor(np.ones((2, 3), dtype=np.float32), requires_grad=True)
    out = TwoLayer()(x)
    nodes, _, clusters = parse(draw_graph(out, show_values=True).source)
    assert clusters == []
    assert next(n["lines"] for n in nodes.values() if n["lines"][0] == "Relu")[-1] == \
        "data: (not recorded)"
    with pytest.warns(UserWarning, match=r"inside minigrad\.viz\.recording\(\)"):
        draw_graph(out, max_depth=0)


def test_recording_blocks_nest_and_remove_their_hook():
    before = list(autograd_op._record_hooks)
    with recording():
        with recording():
            inner = (mg.tensor([1.0], requires_grad=True) * 2.0).sum()
        outer = (mg.tensor([1.0], requires_grad=True) * 2.0).sum()
        assert len(autograd_op._record_hooks) == len(before) + 1
    after = (mg.tensor([1.0], requires_grad=True) * 2.0).sum()
    assert autograd_op._record_hooks == before
    values = [parse(draw_graph(y, show_values=True, show_shapes=False).source)[0]
              for y in (inner, outer, after)]
    sums = [next(n["lines"] for n in v.values() if n["lines"][0] == "Sum") for v in values]
    assert sums == [["Sum", "data: 2"], ["Sum", "data: 2"], ["Sum", "data: (not recorded)"]]
