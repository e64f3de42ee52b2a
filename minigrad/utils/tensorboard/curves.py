"""Charts built from numbers, as PyTorch writes them: precision-recall curves for the PR-curve
plugin (a (6, num_thresholds) float tensor: true and false positives, true and false
negatives, precision, recall, one column per threshold), and the custom-scalars plugin's
layout (which tags share a chart)."""
import numpy as np
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.custom_scalar import layout_pb2
from tensorboard.plugins.pr_curve.plugin_data_pb2 import PrCurvePluginData

from .summary import make_np

__all__ = ["compute_curve", "custom_scalars", "pr_curve", "pr_curve_raw"]

_MAX_THRESHOLDS = 127  # PyTorch's cap (more do not fit its protobuf encoding)
_MINIMUM_COUNT = 1e-7  # keeps precision and recall finite where no example counts


def compute_curve(labels, predictions, num_thresholds, weights=None):
    """(6, num_thresholds) counts and ratios: each prediction (in [0, 1]) falls in the bucket
    floor(p * (num_thresholds - 1)); threshold i counts the examples in buckets >= i."""
    weights = 1.0 if weights is None else weights
    buckets = np.int32(np.floor(predictions * (num_thresholds - 1)))
    labels = labels.astype(np.float64)
    span = (0, num_thresholds - 1)
    tp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=labels * weights)
    fp_buckets, _ = np.histogram(buckets, bins=num_thresholds, range=span,
                                 weights=(1.0 - labels) * weights)
    tp = np.cumsum(tp_buckets[::-1])[::-1]
    fp = np.cumsum(fp_buckets[::-1])[::-1]
    tn, fn = fp[0] - fp, tp[0] - tp
    precision = tp / np.maximum(_MINIMUM_COUNT, tp + fp)
    recall = tp / np.maximum(_MINIMUM_COUNT, tp + fn)
    return np.stack((tp, fp, tn, fn, precision, recall))


def _curve_summary(tag, data, num_thresholds):
    content = PrCurvePluginData(version=0, num_thresholds=num_thresholds).SerializeToString()
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="pr_curves", content=content))
    proto = TensorProto(dtype="DT_FLOAT", float_val=data.reshape(-1).tolist(),
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=n)
                                                           for n in data.shape]))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=proto)])


def pr_curve(tag, labels, predictions, num_thresholds=127, weights=None):
    """The curve of binary `labels` against `predictions` (probabilities), both (N,)."""
    num_thresholds = min(num_thresholds, _MAX_THRESHOLDS)
    labels, predictions = make_np(labels), make_np(predictions)
    weights = None if weights is None else make_np(weights)
    if labels.shape != predictions.shape:
        raise ValueError(f"add_pr_curve: labels of shape {labels.shape} and predictions of "
                         f"shape {predictions.shape} differ")
    return _curve_summary(tag, compute_curve(labels, predictions, num_thresholds, weights),
                          num_thresholds)


def pr_curve_raw(tag, tp, fp, tn, fn, precision, recall, num_thresholds=127, weights=None):
    """A curve from counts already computed: six (num_thresholds,) sequences."""
    num_thresholds = min(num_thresholds, _MAX_THRESHOLDS)
    data = np.stack([make_np(x) for x in (tp, fp, tn, fn, precision, recall)])
    return _curve_summary(tag, data, num_thresholds)


def _chart(title, kind_and_tags):
    kind, tags = kind_and_tags
    if kind == "Margin":
        if len(tags) != 3:
            raise AssertionError("len(tags) != 3")
        return layout_pb2.Chart(title=title, margin=layout_pb2.MarginChartContent(series=[
            layout_pb2.MarginChartContent.Series(value=tags[0], lower=tags[1], upper=tags[2])]))
    return layout_pb2.Chart(title=title, multiline=layout_pb2.MultilineChartContent(tag=tags))


def custom_scalars(layout):
    """The layout {category: {chart title: ["Multiline", [tag regexes]] or
    ["Margin", [value, lower, upper]]}} as the plugin's config record."""
    proto = layout_pb2.Layout(category=[
        layout_pb2.Category(title=category, chart=[_chart(t, c) for t, c in charts.items()])
        for category, charts in layout.items()])
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="custom_scalars"))
    tensor = TensorProto(dtype="DT_STRING", string_val=[proto.SerializeToString()],
                         tensor_shape=TensorShapeProto())
    return Summary(value=[Summary.Value(tag="custom_scalars__config__", tensor=tensor,
                                        metadata=metadata)])
