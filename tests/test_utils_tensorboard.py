"""minigrad.utils.tensorboard against torch.utils.tensorboard: the same calls write event files
that TensorBoard's own reader (EventAccumulator) reads back with the same tags, steps and
values; the missing-package error is PyTorch's."""
import importlib
import os
import re
import socket
import sys

import numpy as np
import pytest

import minigrad as mg

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402


def log_everything(lib, log_dir):
    """The calls a training script makes, through `lib`'s SummaryWriter."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    tb = importlib.import_module(f"{lib.__name__}.utils.tensorboard")
    values = lib.tensor(np.random.default_rng(0).normal(0, 1, (40, 5)).astype(np.float32))
    with tb.SummaryWriter(log_dir) as writer:
        for step in range(4):
            writer.add_scalar("loss/train", 1.0 / (step + 1), step)
            writer.add_scalar("lr", lib.tensor(0.1 * step), global_step=step * 10)
            writer.add_scalars("loss", {"train": step * 0.5, "valid": lib.tensor([step * 0.25])},
                               step)
        writer.add_scalar("precise", 1 / 3, 0, new_style=True, double_precision=True)
        writer.add_histogram("weights", values, 3)
        writer.add_histogram("weights/few_bins", values, 4, bins=10, max_bins=4)
        writer.add_histogram("ints", np.arange(7), 1, bins="auto")
        writer.add_text("notes", "*epoch 1*: the loss fell", 1)
        figure = plt.figure(figsize=(2, 1.5), dpi=50)
        plt.plot([0, 1, 2], [2, 0, 1])
        writer.add_figure("curve", figure, 2)
        writer.add_figure("two", [plt.figure(figsize=(1, 1), dpi=20) for _ in range(2)], 5)
        writer.flush()
    return writer


def read(run_dir):
    """Everything in a run's event files, as plain data."""
    acc = EventAccumulator(str(run_dir), size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    out = {"tags": {k: sorted(v) for k, v in acc.Tags().items() if isinstance(v, list)}}
    for tag in acc.Tags()["scalars"]:
        out[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
    for tag in acc.Tags()["histograms"]:
        out[tag] = [(e.step, list(e.histogram_value.bucket_limit), list(e.histogram_value.bucket),
                     e.histogram_value.min, e.histogram_value.max, e.histogram_value.num,
                     round(e.histogram_value.sum, 4), round(e.histogram_value.sum_squares, 3))
                    for e in acc.Histograms(tag)]
    for tag in acc.Tags()["tensors"]:
        out[tag] = [(e.step, e.tensor_proto.dtype, list(e.tensor_proto.string_val),
                     list(e.tensor_proto.double_val)) for e in acc.Tensors(tag)]
    for tag in acc.Tags()["images"]:
        out[tag] = [(e.step, e.width, e.height, decode(e.encoded_image_string).tolist())
                    for e in acc.Images(tag)]
    return out


def decode(png):
    import io

    from PIL import Image
    return np.asarray(Image.open(io.BytesIO(png)))[::7, ::7]


def test_event_files_read_back_as_pytorchs(tmp_path, torch):
    for lib in (torch, mg):
        log_everything(lib, tmp_path / lib.__name__)
    def listing(lib):  # event file names hold the time and a per-process counter
        return sorted(re.sub(r"^events\.out\.tfevents\..*", "events", n)
                      for n in os.listdir(tmp_path / lib.__name__))
    runs = listing(torch)
    assert listing(mg) == runs  # add_scalars' runs included
    assert {"loss_train", "loss_valid"} <= set(runs)
    for run in ["."] + [r for r in runs if not r.startswith("events")]:
        expected, got = read(tmp_path / "torch" / run), read(tmp_path / "minigrad" / run)
        assert got == expected, run
    got = read(tmp_path / "minigrad")
    assert got["loss/train"] == [(s, pytest.approx(1 / (s + 1))) for s in range(4)]
    assert got["notes/text_summary"][0][2] == [b"*epoch 1*: the loss fell"]
    assert got["curve"][0][1:3] == (100, 75)


def test_default_log_dir_and_reopening_after_close(tmp_path, monkeypatch, torch):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter

    from minigrad.utils.tensorboard import SummaryWriter
    monkeypatch.chdir(tmp_path)
    pattern = r"runs/[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_" + re.escape(socket.gethostname()) + "_lr0.1"
    for make in (TorchWriter, SummaryWriter):
        writer = make(comment="_lr0.1")
        assert re.fullmatch(pattern, writer.log_dir) and writer.get_logdir() == writer.log_dir
        writer.close()
    writer = SummaryWriter(tmp_path / "again")
    writer.add_scalar("x", 1.0, 0)
    writer.close()
    writer.add_scalar("x", 2.0, 1)  # after close: a new event file, as PyTorch
    writer.close()
    assert len(os.listdir(tmp_path / "again")) == 2
    assert read(tmp_path / "again")["x"] == [(0, 1.0), (1, 2.0)]


def test_bad_values_are_refused_naming_the_tag(tmp_path):
    from minigrad.utils.tensorboard import SummaryWriter
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(AssertionError, match="'loss' should contain one element"):
            writer.add_scalar("loss", mg.ones(3), 0)
        with pytest.raises(ValueError, match="'w' have no element"):
            writer.add_histogram("w", np.array([]), 0)


def test_without_tensorboard_the_import_fails_as_pytorchs(monkeypatch, torch):
    class Missing:
        """An import hook that makes the tensorboard package absent."""

        def find_spec(self, name, path=None, target=None):
            if name == "tensorboard" or name.startswith("tensorboard."):
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    for name in list(sys.modules):
        if name.split(".")[0] == "tensorboard" or ".utils.tensorboard" in name:
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [Missing()] + sys.meta_path)
    errors = []
    for module in ("torch.utils.tensorboard", "minigrad.utils.tensorboard"):
        with pytest.raises(ImportError) as info:
            importlib.import_module(module)
        errors.append(info.value)
    assert [type(e) for e in errors] == [ModuleNotFoundError] * 2
    assert all("No module named 'tensorboard'" in str(e) for e in errors)
    assert "pip install tensorboard" in str(errors[1])
