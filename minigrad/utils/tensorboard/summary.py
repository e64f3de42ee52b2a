"""TensorBoard `Summary` records, built as PyTorch's `torch.utils.tensorboard.summary` builds
them, so the event files read back the same: a scalar as a `simple_value` (or, new style, a
one-element tensor), a histogram as bucket limits and counts, text as a string tensor for the
text plugin, an image (a rendered matplotlib figure, or one with boxes drawn on it) as a PNG,
a whole tensor in the TensorProto field of its dtype."""
import io

import numpy as np
from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
from tensorboard.compat.proto.tensor_pb2 import TensorProto
from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData

__all__ = ["figure_to_image", "histogram", "image", "scalar", "tensor_proto", "text"]


def make_np(x):
    """A tensor, array, number or list as a NumPy array (detached)."""
    if hasattr(x, "detach"):
        return np.asarray(x.detach().numpy())
    return np.asarray(x)


def scalar(tag, value, new_style=False, double_precision=False):
    value = make_np(value).squeeze()
    if value.ndim != 0:
        raise AssertionError(f"add_scalar: the value of {tag!r} should contain one element, "
                             f"but has size {value.size} and {value.ndim} dimensions")
    value = float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    proto = (TensorProto(double_val=[value], dtype="DT_DOUBLE") if double_precision
             else TensorProto(float_val=[value], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=metadata)])


def _half_bits(values):
    """PyTorch's encoding of half values in `half_val`: each value's float32 bits as an int."""
    return values.astype(np.float32).view(np.int32).tolist()


def _complex_parts(values):
    return np.stack([values.real, values.imag], -1).reshape(-1).tolist()


# a NumPy dtype -> (TensorProto dtype, the field holding the values, how the values are put)
_TENSOR_FIELDS = {
    np.dtype(np.float16): ("DT_HALF", "half_val", _half_bits),
    np.dtype(np.float32): ("DT_FLOAT", "float_val", np.ndarray.tolist),
    np.dtype(np.float64): ("DT_DOUBLE", "double_val", np.ndarray.tolist),
    np.dtype(np.int8): ("DT_INT8", "int_val", np.ndarray.tolist),
    np.dtype(np.uint8): ("DT_UINT8", "uint32_val", np.ndarray.tolist),
    np.dtype(np.int16): ("DT_INT16", "int_val", np.ndarray.tolist),
    np.dtype(np.int32): ("DT_INT32", "int_val", np.ndarray.tolist),
    np.dtype(np.int64): ("DT_INT64", "int64_val", np.ndarray.tolist),
    np.dtype(np.bool_): ("DT_BOOL", "bool_val", np.ndarray.tolist),
    np.dtype(np.complex64): ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    np.dtype(np.complex128): ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor_proto(tag, tensor):
    """A whole tensor, its values in the TensorProto field of its dtype, for the "tensor"
    plugin."""
    array = make_np(tensor)
    if array.nbytes >= 1 << 31:
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if array.dtype not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {array.dtype}")
    dtype, field, convert = _TENSOR_FIELDS[array.dtype]
    proto = TensorProto(dtype=dtype, tensor_shape=TensorShapeProto(
        dim=[TensorShapeProto.Dim(size=n) for n in array.shape]),
        **{field: convert(array.reshape(-1))})
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=metadata, tensor=proto)])


def _merge_bins(counts, limits, max_bins):
    """At most `max_bins` buckets: neighbours summed in groups (zero-padded at the end)."""
    group = len(counts) // max_bins
    if len(counts) % group:
        counts = np.pad(counts, (0, group - len(counts) % group))
    counts = counts.reshape(-1, group).sum(axis=-1)
    return counts, np.append(limits[:-1:group], limits[-1])


def histogram(tag, values, bins, max_bins=None):
    """`values` counted into `bins` (edges, a count or a NumPy rule), trimmed to the buckets
    from one before the first non-empty one to the last non-empty one, as PyTorch does."""
    values = make_np(values).astype(float).reshape(-1)
    if values.size == 0:
        raise ValueError(f"add_histogram: the values of {tag!r} have no element")
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        counts, limits = _merge_bins(counts, limits, max_bins)
    filled = np.nonzero(counts)[0]
    if filled.size == 0:
        raise ValueError(f"add_histogram: no value of {tag!r} falls in the bins")
    first, last = int(filled[0]), int(filled[-1])
    counts = np.concatenate([[0], counts[:last + 1]]) if first == 0 else counts[first - 1:last + 1]
    limits = limits[first:last + 2]
    return Summary(value=[Summary.Value(tag=tag, histo=HistogramProto(
        min=values.min(), max=values.max(), num=len(values), sum=values.sum(),
        sum_squares=values.dot(values), bucket_limit=limits.tolist(), bucket=counts.tolist()))])


def text(tag, text_string):
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(
        plugin_name="text", content=TextPluginData(version=0).SerializeToString()))
    proto = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=metadata,
                                        tensor=proto)])


def _grid(images, columns=8):
    """(N, 3, H, W) images side by side, `columns` to a row: (3, rows*H, columns*W)."""
    n, _, h, w = images.shape
    columns = min(n, columns)
    rows = -(-n // columns)
    canvas = np.zeros((3, rows * h, columns * w), images.dtype)
    for i, img in enumerate(images):
        r, c = divmod(i, columns)
        canvas[:, r * h:(r + 1) * h, c * w:(c + 1) * w] = img
    return canvas


def _to_hwc(array, dataformats):
    """An image array in `dataformats` ("CHW", "HWC", "HW", "NCHW", ...) as (H, W, 3)."""
    fmt = dataformats.upper()
    if len(set(fmt)) != len(fmt) or array.ndim != len(fmt):
        raise AssertionError(f"add_image: an image of shape {array.shape} does not match "
                             f"dataformats={dataformats!r}")
    if len(fmt) == 4:
        nchw = array.transpose([fmt.find(c) for c in "NCHW"])
        if nchw.shape[1] == 1:
            nchw = np.concatenate([nchw] * 3, 1)
        return _grid(nchw).transpose(1, 2, 0)
    if len(fmt) == 3:
        hwc = array.transpose([fmt.find(c) for c in "HWC"])
        return np.concatenate([hwc] * 3, 2) if hwc.shape[2] == 1 else hwc
    return np.stack([array.transpose([fmt.find(c) for c in "HW"])] * 3, 2)


def _draw_box(draw, box, label):
    """One box (x_min, y_min, x_max, y_max) in red, 2 pixels wide, its label on a red
    ground above its bottom-left corner, as PyTorch draws them."""
    from PIL import ImageFont
    left, top, right, bottom = box
    draw.line([(left, top), (left, bottom), (right, bottom), (right, top), (left, top)],
              width=2, fill="Red")
    if label:
        font = ImageFont.load_default()
        x0, y0, x1, y1 = font.getbbox(label)
        width, height = x1 - x0, y1 - y0
        margin = np.ceil(0.05 * height)
        draw.rectangle([(left, bottom - height - 2 * margin), (left + width, bottom)], fill="Red")
        draw.text((left + margin, bottom - height - margin), label, fill="black", font=font)


def image(tag, img, dataformats="CHW", boxes=None, labels=None, rescale=1):
    """An image (floats in [0, 1], or uint8) as a PNG image summary; `boxes` (K, 4) drawn on
    it with their K `labels`, the picture scaled by `rescale` (the size recorded unscaled)."""
    from PIL import Image, ImageDraw
    array = _to_hwc(make_np(img), dataformats)
    scale = 1 if array.dtype == np.uint8 else 255
    array = (array.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)
    height, width, channels = array.shape
    picture = Image.fromarray(array)
    if boxes is not None:
        draw = ImageDraw.Draw(picture)
        for i, box in enumerate(make_np(boxes)):
            _draw_box(draw, box[:4], None if labels is None else labels[i])
    if rescale != 1:
        picture = picture.resize((int(width * rescale), int(height * rescale)),
                                 Image.Resampling.LANCZOS)
    png = io.BytesIO()
    picture.save(png, format="PNG")
    return Summary(value=[Summary.Value(tag=tag, image=Summary.Image(
        height=height, width=width, colorspace=channels, encoded_image_string=png.getvalue()))])


def figure_to_image(figures, close=True):
    """A matplotlib figure drawn as a (3, H, W) uint8 array (a list: (N, 3, H, W))."""
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    def render(figure):
        canvas = FigureCanvasAgg(figure)
        canvas.draw()
        w, h = figure.canvas.get_width_height()
        rgb = np.frombuffer(canvas.buffer_rgba(), dtype=np.uint8).reshape(h, w, 4)[:, :, :3]
        if close:
            plt.close(figure)
        return np.moveaxis(rgb, 2, 0)

    if isinstance(figures, list):
        return np.stack([render(f) for f in figures])
    return render(figures)
