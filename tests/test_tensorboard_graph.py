"""SummaryWriter.add_graph against PyTorch's: the same model traced by each library gives a
GraphDef with the same input and output nodes (shapes), the same module scopes named as
PyTorch names them (`Net/Sequential[seq]/Linear[0]`), in the same order, each scope's last op
with the same output shape, the same parameters in the same scopes, and every edge pointing
at a node of the graph. The events are read back with
tensorboard's protobuf reader: the graph, then its run metadata tagged "step1"."""
import importlib

import numpy as np
import pytest

import minigrad as mg

pytest.importorskip("tensorboard")
from tensorboard_events import graph_summary as summary, runs  # noqa: E402

# PyTorch's add_graph traces with torch.jit.trace, which warns that it is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.trace:DeprecationWarning")


def models(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 2, 3)
            self.bn = nn.BatchNorm2d(2)
            self.fc1 = nn.Linear(8, 4)
            self.seq = nn.Sequential(nn.Linear(4, 3), nn.Dropout(0.5), nn.ReLU())

        def forward(self, x):
            x = F.relu(self.bn(self.conv1(x)))
            x = x.flatten(1)
            return self.seq(self.fc1(x))

    class TwoWay(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(10, 4)
            self.head = nn.Linear(4, 2)

        def forward(self, ids, scale):
            h = self.embed(ids) * scale
            return self.head(h), h.sum(-1)

    return [(Net(), (lib.zeros(2, 1, 4, 4),)),
            (TwoWay(), (lib.tensor([[1, 2, 3]]), lib.ones(1, 3, 4)))]


@pytest.mark.parametrize("which", [0, 1])
def test_graph_as_pytorchs(tmp_path, torch, which):
    got = {}
    for lib in (torch, mg):
        model, args = models(lib)[which]
        model.train()
        tb = importlib.import_module(f"{lib.__name__}.utils.tensorboard")
        with tb.SummaryWriter(tmp_path / lib.__name__) as w:
            w.add_graph(model, args if len(args) > 1 else args[0])
        assert model.training and all(m.training for m in model.modules())  # put back
        events = runs(tmp_path / lib.__name__)["."]
        # tensorboard's reader also hands out the graph and the run metadata as summaries
        assert [e[0] for e in events] == ["file_version", "graph_def", "summary", "summary"]
        assert [(v["tag"], v["plugin"]) for e in events[2:] for v in e[2]] == [
            ("__run_graph__", "graphs"), ("step1", "graph_tagged_run_metadata")]
        got[lib.__name__] = summary(events[1][2])
        if lib is mg:  # every edge has both ends (PyTorch's GetAttr nodes point at modules
            nodes = events[1][2].node  # that are not nodes)
            assert all(i in {n.name for n in nodes} for n in nodes for i in n.input)
    assert got["minigrad"] == got["torch"]
    if which == 0:
        assert got["minigrad"]["scopes"] == ["Net/Conv2d[conv1]", "Net/BatchNorm2d[bn]", "Net",
                                             "Net/Linear[fc1]", "Net/Sequential[seq]/Linear[0]",
                                             "Net/Sequential[seq]/ReLU[2]"]


def test_graph_of_the_ops_the_output_needs(tmp_path):
    from minigrad.utils.tensorboard.graph import graph

    class Net(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = mg.nn.Linear(3, 2)

        def forward(self, x):
            unused = x.exp()  # noqa: F841  (not drawn: the output does not need it)
            return (self.lin(x + mg.tensor([1.0, 2.0, 3.0])) * 2.0).sum(1)

    graph_def, stats = graph(Net(), mg.ones(4, 3))
    ops = [n.op for n in graph_def.node]
    assert "Exp" not in ops and ops[0] == "IO Node" and ops[-1] == "IO Node"
    constants = [n for n in graph_def.node if n.op == "prim::Constant"]
    assert [c.attr["attr"].s for c in constants] == [b"{ value : [1.0, 2.0, 3.0]}"]
    assert [n.attr["attr"].s for n in graph_def.node if n.op == "Mul"] == [b"{ arg1 : 2.0}"]
    assert stats.step_stats.dev_stats[0].device == "/device:CPU:0"


def test_graph_refuses_what_is_not_a_module(tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter
    with SummaryWriter(tmp_path) as w, pytest.raises(TypeError, match="add_graph: expected a "
                                                                       "Module"):
        w.add_graph(lambda x: x * 2, mg.ones(2))


def test_a_deep_graph(tmp_path):
    from minigrad.utils.tensorboard.graph import graph
    model = mg.nn.Sequential(*[mg.nn.Tanh() for _ in range(1500)])
    graph_def, _ = graph(model, mg.ones(2))  # no recursion: deeper than Python's stack
    assert len(graph_def.node) == 1502
    assert graph_def.node[-2].name == "Sequential/Tanh[1499]/" + \
        graph_def.node[-2].name.rpartition("/")[2]
    assert np.array_equal([d.size for d in graph_def.node[-1].attr["_output_shapes"]
                           .list.shape[0].dim], [2])


def test_onnx_graph_as_pytorchs(tmp_path, torch):
    pytest.importorskip("onnx")
    model = mg.nn.Sequential(mg.nn.Conv2d(1, 2, 3, padding=1), mg.nn.ReLU(), mg.nn.Flatten(),
                             mg.nn.Linear(2 * 4 * 4, 3))
    mg.onnx.export(model, (mg.ones(2, 1, 4, 4),), str(tmp_path / "model.onnx"),
                   input_names=["image"], dynamic_axes={"image": {0: "batch"}})
    got = {}
    for lib in (torch, mg):
        tb = importlib.import_module(f"{lib.__name__}.utils.tensorboard")
        with tb.SummaryWriter(tmp_path / lib.__name__) as w:
            w.add_onnx_graph(str(tmp_path / "model.onnx"))
        got[lib.__name__] = runs(tmp_path / lib.__name__)["."]
    assert got["minigrad"] == got["torch"]
    graph_def = got["minigrad"][1][2]
    assert [n.op for n in graph_def.node[:2]] == ["Variable", "Variable"]
    assert "Conv" in [n.op for n in graph_def.node]
