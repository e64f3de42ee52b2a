"""Reading TensorBoard logs back as plain data, with the protobuf readers tensorboard ships, so
that what minigrad's SummaryWriter wrote can be compared with what PyTorch's wrote for the same
calls: every event of every run (wall times left out), each summary value with its tag, its
plugin, the plugin's data parsed with that plugin's own proto, and its value decoded (tensors
as arrays, images and audio as their bytes); graphs parsed as GraphDefs; the projector's files
as text."""
import os

import numpy as np
from google.protobuf.json_format import MessageToDict
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
from tensorboard.compat.proto.graph_pb2 import GraphDef
from tensorboard.compat.proto.summary_pb2 import Summary
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.hparams.plugin_data_pb2 import HParamsPluginData
from tensorboard.plugins.mesh.plugin_data_pb2 import MeshPluginData
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
from tensorboard.util import tensor_util

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
    if out["kind"] == "tensor":
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
