"""The projector plugin's files, as PyTorch's `add_embedding` writes them: for each call a
folder `<global_step as 5 digits>/<tag, with % / \\ escaped>` under the log dir holding
`tensors.tsv` (one point a line), `metadata.tsv` (one label a line, or a header line and tab-
separated columns) and `sprite.png` (the label images on a square grid), and one
`projector_config.pbtxt` in the log dir listing every embedding logged so far."""
import io
import math
import os

import numpy as np
from google.protobuf import text_format
from tensorboard.plugins.projector.projector_config_pb2 import EmbeddingInfo, ProjectorConfig

from .summary import _grid, make_np

__all__ = ["Projector", "folder_name"]


def folder_name(tag, global_step):
    """The embedding's folder, relative to the log dir."""
    escaped = tag.replace("%", "%25").replace("/", "%2f").replace("\\", "%5c")
    return f"{str(global_step).zfill(5)}/{escaped}"


def _write(path, text):
    with open(path, "wb") as f:
        f.write(text.encode("utf-8") if isinstance(text, str) else text)


def _metadata_tsv(metadata, header):
    if not header:
        return "\n".join(str(x) for x in metadata) + "\n"
    if len(header) != len(metadata[0]):
        raise AssertionError("len of header must be equal to the number of columns in metadata")
    return "\n".join("\t".join(str(e) for e in row) for row in [header] + list(metadata)) + "\n"


def _sprite_png(images):
    """(N, C, H, W) images (C 1 or 3, floats in [0, 1]) on a square grid of ceil(sqrt(N))
    columns, the rows below the last image black."""
    from PIL import Image
    images = make_np(images)
    if images.shape[1] == 1:
        images = np.concatenate([images] * 3, 1)
    columns = math.ceil(images.shape[0] ** 0.5)
    grid = _grid(images, columns).transpose(1, 2, 0)
    square = np.zeros((grid.shape[1], grid.shape[1], 3))
    square[:grid.shape[0]] = grid
    png = io.BytesIO()
    Image.fromarray(np.uint8((square * 255).clip(0, 255))).save(png, format="PNG")
    return png.getvalue()


def _tensors_tsv(mat):
    return "".join("\t".join(str(v.item()) for v in row) + "\n" for row in mat)


class Projector:
    """The embeddings one writer logged into `log_dir` (the config lists them all)."""

    def __init__(self):
        self.config = ProjectorConfig()

    def add(self, log_dir, mat, metadata=None, label_img=None, global_step=None, tag="default",
            metadata_header=None):
        """Write one embedding: `mat` (N, D) points, `metadata` N labels (or N rows of columns
        named by `metadata_header`), `label_img` (N, C, H, W) images."""
        mat = make_np(mat)
        global_step = 0 if global_step is None else global_step
        subdir = folder_name(tag, global_step)
        path = os.path.join(log_dir, subdir)
        if os.path.isdir(path):
            print("warning: Embedding dir exists, did you set global_step for add_embedding()?")
        elif os.path.exists(path):
            raise NotADirectoryError(f"Path: `{path}` exists, but is a file. Cannot proceed.")
        else:
            os.makedirs(path)
        info = EmbeddingInfo(tensor_name=f"{tag}:{str(global_step).zfill(5)}",
                             tensor_path=f"{subdir}/tensors.tsv")
        if metadata is not None:
            if mat.shape[0] != len(metadata):
                raise AssertionError("#labels should equal with #data points")
            _write(os.path.join(path, "metadata.tsv"), _metadata_tsv(metadata, metadata_header))
            info.metadata_path = f"{subdir}/metadata.tsv"
        if label_img is not None:
            if mat.shape[0] != label_img.shape[0]:
                raise AssertionError("#images should equal with #data points")
            _write(os.path.join(path, "sprite.png"), _sprite_png(label_img))
            info.sprite.image_path = f"{subdir}/sprite.png"
            info.sprite.single_image_dim.extend([label_img.shape[3], label_img.shape[2]])
        if mat.ndim != 2:
            raise AssertionError("mat should be 2D, where mat.size(0) is the number of data points")
        _write(os.path.join(path, "tensors.tsv"), _tensors_tsv(mat))
        self.config.embeddings.extend([info])
        _write(os.path.join(log_dir, "projector_config.pbtxt"),
               text_format.MessageToString(self.config))
