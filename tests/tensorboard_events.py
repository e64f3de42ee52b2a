"""Reading TensorBoard logs back as plain data, with the protobuf readers tensorboard ships, so
that what minigrad's SummaryWriter wrote can be compared with what PyTorch's wrote for the same
calls: every event of every run (wall times left out), each summary value with its tag, its
plugin, the plugin's data parsed with that plugin's own proto, and its value decoded (tensors
as arrays, images and audio as their bytes); graphs parsed as GraphDefs (`graph_summary`
keeps what PyTorch's and minigrad's graphs share); the projector's files as bytes."""
import os
import re

import numpy as np
from google.protobuf.json_format import MessageToDict
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto import types_pb2
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.util import tensor_util

_UNREADABLE = (types_pb2.DT_HALF, types_pb2.DT_UINT8)
PLUGIN_DATA = {"hparams": HParamsPluginData, "pr_curves": PrCurvePluginData,
               "mesh": MeshPluginData, "text": TextPluginData}


def _value(v: Summary.Value):
    plugin = v.metadata.plugin_data
    out = {"tag": v.tag, "plugin": plugin.plugin_name, "kind": v.WhichOneof("value")}
    if plugin.plugin_name in PLUGIN_DATA:
        out["content"] = MessageToDict(PLUGIN_DATA[plugin.plugin_name].FromString(plugin.content))
    else:
        out["content"] = plugin.content
    if v.metadata.display_name or v.metadata.summary_description:
        out["display"] = (v.metadata.display_name, v.metadata.summary_description)
    if out["kind"] == "tensor" and v.tensor.dtype in _UNREADABLE:
        # PyTorch puts each half value's float32 bits in half_val (they overflow 16 bits) and
        # uint8 values in uint32_val (the reader looks in int_val): tensorboard's reader
        # cannot decode either, so these are compared as the proto's fields
        out["value"] = MessageToDict(v.tensor)
    elif out["kind"] == "tensor":
        array = tensor_util.make_ndarray(v.tensor)
        if v.tag == "custom_scalars__config__":
            out["value"] = MessageToDict(layout_pb2.Layout.FromString(array.item()))
        else:
            out["value"] = (str(array.dtype), array.shape, array.tolist())
    elif out["kind"] is not None:
        out["value"] = MessageToDict(getattr(v, out["kind"]))
    return out


def _event(e):
    kind = e.WhichOneof("what")
    if kind == "summary":
        return ("summary", e.step, [_value(v) for v in e.summary.value])
    if kind == "graph_def":
        return ("graph_def", e.step, GraphDef.FromString(e.graph_def))
    if kind == "tagged_run_metadata":
        return ("run_metadata", e.step, e.tagged_run_metadata.tag,
                e.tagged_run_metadata.run_metadata)
    return (kind, e.step, MessageToDict(getattr(e, kind)) if kind != "file_version"
            else e.file_version)


def events(run_dir):
    """Every event of the event files directly in `run_dir`, in order."""
    out = []
    for name in sorted(os.listdir(run_dir)):
        if name.startswith("events.out.tfevents"):
            out += [_event(e) for e in EventFileLoader(os.path.join(run_dir, name)).Load()]
    return out


def runs(log_dir):
    """{run folder relative to log_dir: its events} for every folder holding event files."""
    found = {}
    for folder, _, files in os.walk(log_dir):
        if any(f.startswith("events.out.tfevents") for f in files):
            found[os.path.relpath(folder, log_dir)] = events(folder)
    return found


def other_files(log_dir):
    """{path relative to log_dir: contents} of the files that are not event files."""
    found = {}
    for folder, _, files in os.walk(log_dir):
        for f in files:
            if not f.startswith("events.out.tfevents"):
                path = os.path.join(folder, f)
                with open(path, "rb") as fh:
                    found[os.path.relpath(path, log_dir)] = fh.read()
    return found


def approx_equal(a, b, rtol=1e-6):
    """Nested data equal, floats to `rtol`."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(approx_equal(a[k], b[k], rtol) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(approx_equal(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return bool(np.isclose(a, b, rtol=rtol, atol=1e-12, equal_nan=True))
    return a == b


def shape(node):
    if "_output_shapes" not in node.attr:
        return None
    return [d.size for d in node.attr["_output_shapes"].list.shape[0].dim]


def scope(name):
    return name.rpartition("/")[0]


def graph_summary(graph_def):
    """What both libraries' graphs must agree on (node names of ops and values differ: PyTorch
    names them after its JIT's values, minigrad after its ops)."""
    nodes = list(graph_def.node)
    io = [n for n in nodes if n.op == "IO Node"]
    # minigrad's Dropout in eval mode runs no op (PyTorch's trace keeps an identity
    # aten::dropout): its scope has no node (tests/compat_notes.py)
    skipped = ("IO Node", "prim::GetAttr", "prim::Constant", "prim::ListConstruct",
               "aten::dropout")
    ops = [n for n in nodes if n.op not in skipped and shape(n) is not None]
    last = {}  # scope -> its last op's shape, scopes in the order they first appear
    for n in ops:
        last[scope(n.name)] = shape(n)
    # PyTorch's parameter nodes are `<module scope>/<name>/<name>.<k>`, minigrad's
    # `<module scope>/<name>`
    params = {re.sub(r"/(\w+)/\1(\.\d+)?$", r"/\1", n.name) for n in nodes
              if n.op == "prim::GetAttr" and "name" in n.attr["attr"].s.decode()}
    return {"inputs": [(re.sub(r"\.\d+$", "", n.name), shape(n)) for n in io
                       if n.name.startswith("input/")],
            "outputs": [(n.name, scope(n.input[0]), shape(n)) for n in io
                        if n.name.startswith("output/")],
            "scopes": list(last), "last_shapes": list(last.values()), "params": sorted(params),
            "producer": graph_def.versions.producer}
