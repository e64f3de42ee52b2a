"""Draw the autograd graph behind a tensor with Graphviz.

    with recording():                     # note module paths and values as ops run
        loss = model(x)
    dot = draw_graph(loss, max_depth=1)   # a graphviz.Digraph; shows inline in Jupyter
    print(dot.source)                     # DOT text, needs no Graphviz install
    render_graph(dot, "graph.svg")        # writes graph.dot and graph.svg (needs `dot`)

The picture (edges follow the data, from inputs towards the output):

* **Tensor nodes** (ellipses) are the graph's ends. A leaf parameter is labelled with its dotted
  name (`encoder.layers.0.linear1.weight`, or the key given in `params=`), any other leaf with
  "input"; the tensor you pass in gets one extra node, "output". Leaves that do not require grad
  (data batches, masks) are not recorded by autograd, so they do not appear at all.
* **Op nodes** (rounded boxes) are the recorded ops, named without "Backward" ("MatMul"). An op
  node also stands for the intermediate tensor it produced: with `show_shapes` its label gets a
  second line with that tensor's shape and dtype, "MatMul\\n(64, 20, 128) float32".
  Under `show_values` / `show_grads` more lines follow: "data: 0.5" for a one-element tensor,
  "data: mean=... std=... min=... max=..." otherwise; "grad: ..." likewise, for leaves after
  `backward()` and for intermediates only if `retain_grad()` was called.
* **Edges** go input -> op -> consumer op -> ... -> output, one per (producer, consumer) pair.
* **Clusters** (dashed boxes) group ops by the module whose `forward` created them, nested by
  module path and labelled with it: "encoder" holds "encoder.layers.0", which holds
  "encoder.layers.0.self_attn". A parameter sits in the innermost cluster holding all its users.
* **Collapsed modules** (3-D boxes, labelled "path\\n(N ops)") replace whole module subtrees
  when `max_depth` is set; see `module_levels` for how depth is counted.

Module paths and values are not part of the graph: inside `recording()`, a record hook notes,
for every op recorded, the module that ran it, the array it produced (kept as long as the graph
lives, so that `show_values` can describe it) and a weak reference to its tensor (for
`show_grads` after `retain_grad()`). Run the forward pass you want to draw inside it; ops
recorded outside are drawn without clusters, values or grads. Importing this module changes
nothing by itself.
"""
from __future__ import annotations

import contextlib
import os
import warnings
import weakref

import graphviz
import numpy as np

from .autograd.op import SharedRecordHook
from .grad_mode import current_module_path

# node -> (path of the module that created it, its output's array, weak reference to it)
_recorded = weakref.WeakKeyDictionary()


def _remember(node, out):
    _recorded[node] = (current_module_path(), out._array, weakref.ref(out))


_remembering = SharedRecordHook(_remember)


class recording(contextlib.ContextDecorator):
    """Inside (a `with` block or a decorated function), every op recorded notes its module and
    its values for `draw_graph`. Blocks nest; while any is open, ops of every thread are noted."""

    def __enter__(self):
        _remembering.acquire()
        return self

    def __exit__(self, *exc):
        _remembering.release()
        return False


_INSTALL_HINT = ("install Graphviz to render it: `apt-get install graphviz` (Debian/Ubuntu), "
                 "`brew install graphviz` (macOS) or `conda install -c conda-forge graphviz`")


class GraphvizNotFoundError(RuntimeError):
    """Raised when rendering needs the Graphviz `dot` program and it is not on PATH."""


def _explain_missing_dot(graph, err):
    """Make sure the DOT source is on disk, then raise an error that says where and what to do."""
    path = graph.filepath
    if not os.path.exists(path):  # graphviz saves before running dot; this is belt and braces
        path = graph.save()
    raise GraphvizNotFoundError(f"the Graphviz `dot` program was not found ({err}). The graph "
                                f"source was written to the .dot file {path}; "
                                f"{_INSTALL_HINT}.") from err


class ComputationGraph(graphviz.Digraph):
    """A `graphviz.Digraph` whose `render` says how to install Graphviz when `dot` is missing."""

    def render(self, *args, **kwargs):
        """As `graphviz.Digraph.render`, but a missing `dot` raises `GraphvizNotFoundError`."""
        try:
            return super().render(*args, **kwargs)
        except graphviz.ExecutableNotFound as err:
            _explain_missing_dot(self, err)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs):
        """Jupyter display; without `dot` show a hint and the DOT text instead of a traceback."""
        try:
            return super()._repr_mimebundle_(include, exclude, **kwargs)
        except graphviz.ExecutableNotFound:
            return {"text/plain": f"(Graphviz `dot` not found; {_INSTALL_HINT})\n{self.source}"}


def render_graph(dot, path, format="svg"):
    """Write `dot` to `<path stem>.dot` and render `<path stem>.<format>`; return the image path."""
    path = os.fspath(path)
    stem = path[: -len(format) - 1] if path.endswith("." + format) else path
    try:
        return dot.render(filename=stem + ".dot", outfile=stem + "." + format, format=format)
    except graphviz.ExecutableNotFound as err:  # a plain graphviz.Digraph was passed in
        _explain_missing_dot(dot, err)


def module_levels(path):
    """The nested module scopes of `path`, outermost first; len() is the module's depth.

    Each dotted component is one level, except that a list index is glued to its container's
    name, because `layers.0` is one module (the first layer) while `layers` alone never runs:
    "encoder.layers.0.self_attn" -> ["encoder", "encoder.layers.0", "encoder.layers.0.self_attn"]
    has depth 3. Ops created outside any module have path None and depth 0.
    """
    if not path:
        return []
    levels, parts = [], []
    for part in path.split("."):
        glue = part.isdigit() and len(parts) > 0 and not parts[-1].isdigit()
        parts.append(part)
        if glue:
            levels[-1] = ".".join(parts)
        else:
            levels.append(".".join(parts))
    return levels


def _summary(tag, arr):
    """One line describing an array: its value if it has one element, else its statistics."""
    arr = np.asarray(arr)
    if arr.size == 1:
        return f"{tag}: {arr.reshape(()).item():.4g}"
    if arr.size == 0:
        return f"{tag}: (empty)"
    a = arr.astype(np.float64)
    return f"{tag}: mean={a.mean():.3g} std={a.std():.3g} min={a.min():.3g} max={a.max():.3g}"


def _tensor_lines(t, show_shapes, show_values, show_grads, values=None):
    """Label lines (after the name) for tensor `t` (None if it was freed) holding `values`."""
    lines = []
    values = t._array if t is not None else values
    if show_shapes and t is not None:
        lines.append(f"{tuple(t.shape)} {t.dtype}")
    if show_values:
        lines.append(_summary("data", values) if values is not None else "data: (not recorded)")
    if show_grads and t is not None and t.grad is not None:
        lines.append(_summary("grad", t.grad._array))
    return lines


def _op_lines(node, show_shapes, show_values, show_grads):
    """Label lines of an op node: its name, then the tensor it produced."""
    lines = [type(node).__name__]  # the op's class (`Mul`), not its node's name (`MulBackward0`)
    if show_shapes:  # known even if the output was freed
        lines.append(f"{tuple(node.out_shape)} {node.out_dtype}")
    _, values, ref = _recorded.get(node, (None, None, None))
    return lines + _tensor_lines(ref() if ref else None, False, show_values, show_grads, values)


def _common_prefix(lists):
    """The longest list that starts every list in `lists`."""
    common = []
    for items in zip(*lists):
        if len(set(items)) > 1:
            break
        common.append(items[0])
    return common


def _walk(root):
    """All nodes reachable from `root`, producers before consumers, and the data-flow edges.

    Edges are (producer, consumer) index pairs. Explicit stacks and queues instead of recursion:
    a long training graph is thousands of ops deep.
    """
    nodes, index, edges = [root], {id(root): 0}, {}
    stack = [root]
    while stack:
        fn = stack.pop()
        for child in fn.next_nodes:
            if child is None:  # an input that does not require grad
                continue
            if id(child) not in index:
                index[id(child)] = len(nodes)
                nodes.append(child)
                stack.append(child)
            edges[(index[id(child)], index[id(fn)])] = None  # a dict: ordered and deduplicated
    # Number the nodes in execution order (Kahn's algorithm), so the DOT reads top to bottom.
    consumers, pending = [[] for _ in nodes], [0] * len(nodes)
    for src, dst in edges:
        consumers[src].append(dst)
        pending[dst] += 1
    order = [i for i in reversed(range(len(nodes))) if pending[i] == 0]
    for i in order:  # `order` grows while we iterate over it
        for j in consumers[i]:
            pending[j] -= 1
            if pending[j] == 0:
                order.append(j)
    rank = {old: new for new, old in enumerate(order)}
    return [nodes[i] for i in order], sorted((rank[s], rank[d]) for s, d in edges)


def _add_nodes(dot, drawn, cluster_modules):
    """Declare every drawn node, inside nested `cluster_` subgraphs, one per module level used."""
    clusters = {}
    for key, (lines, attrs, levels) in drawn.items():
        target = dot
        if cluster_modules and levels:
            for depth in range(1, len(levels) + 1):
                if tuple(levels[:depth]) not in clusters:
                    sub = graphviz.Digraph(name=f"cluster_{len(clusters)}")
                    sub.attr(label=levels[depth - 1], style="rounded,dashed", fontsize="10")
                    clusters[tuple(levels[:depth])] = sub
            target = clusters[tuple(levels)]
        target.node(key, "\\n".join(lines), **attrs)
    # `subgraph()` copies the child's text, so children must be complete before their parents.
    for levels in sorted(clusters, key=len, reverse=True):
        parent = clusters[levels[:-1]] if len(levels) > 1 else dot
        parent.subgraph(clusters[levels])


def draw_graph(output, show_shapes=True, show_values=False, show_grads=False, max_depth=None,
               cluster_modules=True, rankdir="LR", params=None):
    """Return a `ComputationGraph` (a `graphviz.Digraph`) of the ops that produced `output`.

    `max_depth=k` draws every module deeper than k levels (see `module_levels`) as one node,
    together with the parameters only it uses; `max_depth=0` leaves only top-level modules.
    `params` maps names to tensors, overriding the names parameters got from their model.
    """
    if max_depth is not None and max_depth < 0:
        raise ValueError(f"draw_graph: max_depth must be None or >= 0, got {max_depth}")
    names = {id(t): name for name, t in (params or {}).items()}
    dot = ComputationGraph(graph_attr={"rankdir": rankdir, "fontname": "Helvetica"},
                           node_attr={"fontsize": "10", "fontname": "Helvetica"})
    # Each drawn node: key -> [label lines, attributes, levels of the cluster it sits in].
    drawn = {}
    leaf_style = {"shape": "ellipse", "style": "filled"}

    def tensor_name(t):
        return names.get(id(t)) or getattr(t, "_name", None)

    if output.grad_fn is None:  # nothing was recorded: the picture is the tensor itself
        lines = [tensor_name(output) or "output"]
        lines += _tensor_lines(output, show_shapes, show_values, show_grads)
        dot.node("output", "\\n".join(lines), **leaf_style, fillcolor="palegreen")
        return dot

    nodes, edges = _walk(output.grad_fn)
    if max_depth is not None and not any(n in _recorded for n in nodes):
        warnings.warn("draw_graph: no module paths were recorded for this graph, so max_depth "
                      "collapses nothing; run the forward pass inside minigrad.viz.recording()",
                      stacklevel=2)
    display = [None] * len(nodes)  # graph node index -> key of the drawn node it appears in
    collapsed = {}                 # module path -> key of its collapsed node
    for i, node in enumerate(nodes):
        if hasattr(node, "variable"):  # leaves are placed below, once their users are known
            continue
        levels = module_levels(_recorded.get(node, (None,))[0])
        if max_depth is not None and len(levels) > max_depth:
            path = levels[max_depth]
            if path not in collapsed:
                collapsed[path] = key = f"m{len(collapsed)}"
                drawn[key] = [[path, 0], {"shape": "box3d", "style": "filled",
                                          "fillcolor": "lightsteelblue"}, levels[:max_depth]]
            display[i] = collapsed[path]
            drawn[display[i]][0][1] += 1
            continue
        display[i] = f"op{i}"
        drawn[display[i]] = [_op_lines(node, show_shapes, show_values, show_grads),
                             {"shape": "box", "style": "rounded,filled", "fillcolor": "lightgrey"},
                             levels]
    for key in collapsed.values():  # the op count becomes the collapsed node's second line
        path, count = drawn[key][0]
        drawn[key][0] = [path, f"({count} op{'s' if count != 1 else ''})"]

    users = {}  # leaf index -> drawn keys of the ops that read it
    for src, dst in edges:
        if display[src] is None:
            users.setdefault(src, []).append(display[dst])
    for i, node in enumerate(nodes):
        if display[i] is not None:
            continue
        t = node.variable
        name = tensor_name(t)
        places = [drawn[k][2] + ([drawn[k][0][0]] if k.startswith("m") else [])
                  for k in users.get(i, [])]
        if name and len(set(users.get(i, []))) == 1 and users[i][0].startswith("m"):
            display[i] = users[i][0]  # a parameter used only inside a collapsed module
            continue
        display[i] = f"t{i}"
        lines = [name or "input"] + _tensor_lines(t, show_shapes, show_values, show_grads)
        # A parameter sits in the deepest cluster shared by all its users; inputs stay outside.
        drawn[display[i]] = [lines, dict(leaf_style, fillcolor="lightblue" if name else
                                         "lightyellow"), _common_prefix(places) if name else []]
    drawn["output"] = [["output"] + _tensor_lines(output, show_shapes, show_values, show_grads),
                       dict(leaf_style, fillcolor="palegreen", peripheries="2"), []]

    _add_nodes(dot, drawn, cluster_modules)
    # Edges last, so every node is already declared inside its cluster.
    final = {(display[s], display[d]): None for s, d in edges if display[s] != display[d]}
    final[(display[-1], "output")] = None  # the last node in execution order is the root
    for src, dst in final:
        dot.edge(src, dst)
    return dot
