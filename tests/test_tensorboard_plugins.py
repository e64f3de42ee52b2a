"""SummaryWriter's plugin records against PyTorch's: add_hparams, add_pr_curve(_raw),
add_custom_scalars, add_audio, add_video, add_mesh and add_embedding, each made with both
libraries' writers on the same data; the event files are read back with tensorboard's own
protobuf readers and compared record by record (run folders, steps, tags, plugin names, the
plugins' data parsed, the values decoded), and the projector's files line by line."""
import importlib
import importlib.util

import numpy as np
import pytest

import minigrad as mg

pytest.importorskip("tensorboard")
from tensorboard_events import approx_equal, other_files, runs  # noqa: E402


def writer_of(lib, log_dir):
    return importlib.import_module(f"{lib.__name__}.utils.tensorboard").SummaryWriter(log_dir)


def both(tmp_path, torch, program):
    """The logs `program(lib, writer)` leaves, written by PyTorch and by minigrad."""
    out = []
    for lib in (torch, mg):
        with writer_of(lib, tmp_path / lib.__name__) as writer:
            program(lib, writer)
        out.append((runs(tmp_path / lib.__name__), other_files(tmp_path / lib.__name__)))
    return out


def assert_same_logs(tmp_path, torch, program):
    (expected, expected_files), (got, got_files) = both(tmp_path, torch, program)
    assert sorted(got) == sorted(expected)
    for run in expected:
        assert approx_equal(got[run], expected[run]), run
    assert got_files == expected_files
    return got


def test_hparams(tmp_path, torch):
    def program(lib, w):
        w.add_hparams({"lr": 0.1, "bsize": 32, "optim": "adam", "nesterov": True,
                       "dropout": lib.tensor([0.25]), "unused": None},
                      {"hparam/accuracy": 0.9, "hparam/loss": lib.tensor(0.25)},
                      hparam_domain_discrete={"optim": ["adam", "sgd"], "bsize": [16, 32]},
                      run_name="run1")
        w.add_hparams({"lr": 0.01}, {"hparam/accuracy": 0.7}, run_name="step", global_step=3)
    got = assert_same_logs(tmp_path, torch, program)
    assert sorted(got) == [".", "run1", "step"]
    plugins = [v["plugin"] for e in got["run1"] if e[0] == "summary" for v in e[2]]
    assert plugins == ["hparams"] * 3 + ["scalars"] * 2  # the metrics
    start = got["run1"][2][2][0]["content"]["sessionStartInfo"]["hparams"]
    assert start["nesterov"] == 1.0 and start["optim"] == "adam" and "unused" not in start


def test_hparams_default_run_name_and_errors(tmp_path, torch):
    import os
    w = writer_of(mg, tmp_path)
    w.add_hparams({"a": 1}, {"m": 2.0})
    w.close()
    (run,) = [d for d in os.listdir(tmp_path) if os.path.isdir(tmp_path / d)]
    assert float(run) > 1e9  # the time, as PyTorch names it
    for lib in (torch, mg):
        with writer_of(lib, tmp_path / "bad" / lib.__name__) as w:
            with pytest.raises(TypeError, match="should be dictionary"):
                w.add_hparams([("a", 1)], {})
            with pytest.raises(TypeError, match=r"hparam_domain_discrete\[a\] should be a list"):
                w.add_hparams({"a": 1}, {}, hparam_domain_discrete={"a": ["x"]})
            with pytest.raises(ValueError, match="value should be one of int, float, str"):
                w.add_hparams({"a": [1, 2]}, {})


def test_pr_curves(tmp_path, torch):
    rng = np.random.default_rng(0)
    labels, probs = rng.integers(0, 2, 50), rng.random(50).astype(np.float32)
    weights = rng.random(50)

    def program(lib, w):
        w.add_pr_curve("pr", lib.tensor(labels), lib.tensor(probs), 0)
        w.add_pr_curve("pr/few", labels, probs, 1, num_thresholds=5, weights=weights)
        w.add_pr_curve("pr/many", labels.astype(bool), probs, 2, num_thresholds=300)
        counts = [[5, 3, 1], [4, 2, 0], [0, 2, 4], [0, 2, 4], [0.5, 0.6, 1.0], [1.0, 0.6, 0.2]]
        w.add_pr_curve_raw("raw", *counts, global_step=4, num_thresholds=3)
    got = assert_same_logs(tmp_path, torch, program)
    (pr,) = got["."][1][2]
    assert pr["plugin"] == "pr_curves" and pr["content"] == {"numThresholds": 127}
    assert pr["value"][1] == (6, 127)


def test_custom_scalars(tmp_path, torch):
    def program(lib, w):
        w.add_custom_scalars({"Taiwan": {"twse": ["Multiline", ["twse/0050", "twse/2330"]]},
                              "USA": {"dow": ["Margin", ["dow/aaa", "dow/bbb", "dow/ccc"]],
                                      "nasdaq": ["Multiline", ["nasdaq/aaa"]]}})
        w.add_custom_scalars_multilinechart(["loss/.*"], category="train", title="losses")
        w.add_custom_scalars_marginchart(["acc", "acc_low", "acc_high"])
        with pytest.raises(AssertionError):
            w.add_custom_scalars_marginchart(["acc", "acc_low"])
    got = assert_same_logs(tmp_path, torch, program)
    layout = got["."][1][2][0]["value"]
    assert [c["title"] for c in layout["category"]] == ["Taiwan", "USA"]


def test_audio_video_mesh(tmp_path, torch, capsys):
    t = np.linspace(0, 1, 800)
    rng = np.random.default_rng(1)
    frames = rng.random((3, 4, 3, 6, 5)).astype(np.float32)
    vertices = rng.random((1, 5, 3)).astype(np.float32)
    colors = rng.integers(0, 256, (1, 5, 3))
    faces = np.array([[[0, 1, 2], [1, 3, 4]]])

    def program(lib, w):
        w.add_audio("sine", lib.tensor(np.sin(2 * np.pi * 440 * t)), 0, sample_rate=8000)
        w.add_audio("loud", 1.5 * np.sin(2 * np.pi * 5 * t)[None], 1)  # clipped, with a warning
        w.add_video("video", lib.tensor(frames), 2, fps=2)
        w.add_mesh("cloud", lib.tensor(vertices), global_step=3)
        w.add_mesh("mesh", vertices, colors=colors, faces=faces, global_step=4,
                   config_dict={"camera": {"cls": "PerspectiveCamera", "fov": 75}})
    got = assert_same_logs(tmp_path, torch, program)
    printed = capsys.readouterr().out
    assert printed.count("audio amplitude out of range, auto clipped") == 2
    if importlib.util.find_spec("moviepy") is None:  # PyTorch's fallback: a value with a tag
        assert printed.count("add_video needs package moviepy") == 2
        assert got["."][3][2] == [{"tag": "video", "plugin": "", "kind": None, "content": b""}]
    sine = got["."][1][2][0]
    # the reader turns the audio record into the audio plugin's tensor of WAV files
    assert sine["plugin"] == "audio" and sine["value"][2][0][:4] == b"RIFF"
    assert [v["tag"] for v in got["."][5][2]] == ["mesh_VERTEX", "mesh_FACE", "mesh_COLOR"]


def test_audio_errors(tmp_path, torch):
    for lib in (torch, mg):
        with writer_of(lib, tmp_path / lib.__name__) as w:
            with pytest.raises(AssertionError, match="1 dimensional"):
                w.add_audio("stereo", np.zeros((2, 10)))


def test_embedding(tmp_path, torch):
    rng = np.random.default_rng(2)
    mat = rng.normal(size=(10, 4)).astype(np.float32)
    images = rng.random((10, 1, 3, 3)).astype(np.float32)

    def program(lib, w):
        w.add_embedding(lib.tensor(mat), metadata=list("abcdefghij"),
                        label_img=lib.tensor(images))
        w.add_embedding(mat[:3], metadata=[[1, "x"], [2, "y"], [3, "z"]],
                        metadata_header=["n", "letter"], global_step=7, tag="a/b%c")
        w.add_embedding(lib.tensor(mat[:2]), global_step=12, tag="features")
    (_, expected), (_, got) = both(tmp_path, torch, program)
    assert got == expected
    assert sorted(got) == ["00000/default/metadata.tsv", "00000/default/sprite.png",
                           "00000/default/tensors.tsv", "00007/a%2fb%25c/metadata.tsv",
                           "00007/a%2fb%25c/tensors.tsv", "00012/features/tensors.tsv",
                           "projector_config.pbtxt"]
    assert got["00007/a%2fb%25c/metadata.tsv"] == b"n\tletter\n1\tx\n2\ty\n3\tz\n"


def test_embedding_errors(tmp_path, torch):
    for lib in (torch, mg):
        with writer_of(lib, tmp_path / lib.__name__) as w:
            with pytest.raises(AssertionError, match="#labels should equal with #data points"):
                w.add_embedding(lib.zeros(3, 2), metadata=["a"])
            with pytest.raises(AssertionError, match="mat should be 2D"):
                w.add_embedding(lib.zeros(3), global_step=1)


def test_images_and_raw_histograms(tmp_path, torch):
    rng = np.random.default_rng(3)
    images = rng.random((3, 1, 4, 5)).astype(np.float32)

    def program(lib, w):
        w.add_images("batch", lib.tensor(images), 0)
        w.add_images("nhwc", (images.transpose(0, 2, 3, 1) * 255).astype(np.uint8), 1,
                     dataformats="NHWC")
        w.add_histogram_raw("raw", min=0.0, max=3.0, num=6, sum=9.0, sum_squares=19.0,
                            bucket_limits=[1.0, 2.0, 3.0], bucket_counts=[1, 2, 3], global_step=2)
        with pytest.raises(ValueError, match=r"len\(bucket_limits\) != len\(bucket_counts\)"):
            w.add_histogram_raw("bad", 0, 1, 1, 1, 1, [1.0], [1, 2])
    got = assert_same_logs(tmp_path, torch, program)
    assert [e[2][0]["plugin"] for e in got["."][1:]] == ["images", "images", "histograms"]


def test_tensors_of_every_dtype(tmp_path, torch):
    rng = np.random.default_rng(4)
    base = rng.normal(size=(2, 3)) * 3

    def program(lib, w):
        for i, name in enumerate(["float16", "float32", "float64", "int8", "uint8", "int16",
                                  "int32", "int64", "bool", "complex64", "complex128"]):
            dtype = getattr(lib, name)
            x = lib.tensor(base).to(dtype) if name != "bool" else lib.tensor(base > 0)
            if name.startswith("complex"):
                x = lib.complex(lib.tensor(base), lib.tensor(-base)).to(dtype)
            w.add_tensor(name, x, i)
        w.add_tensor("scalar", lib.tensor(2.5), 20)
        w.add_tensor("empty", lib.zeros(0, 3), 21)
        w.add_tensor("strided", lib.tensor(base).t(), 22)
    got = assert_same_logs(tmp_path, torch, program)
    assert [e[2][0]["plugin"] for e in got["."][1:]] == ["tensor"] * 14


def test_images_with_boxes(tmp_path, torch):
    rng = np.random.default_rng(5)
    picture = rng.random((3, 40, 60)).astype(np.float32)
    boxes = np.array([[2, 3, 30, 25], [10.5, 12, 55, 38]])

    def program(lib, w):
        w.add_image_with_boxes("boxes", lib.tensor(picture), lib.tensor(boxes), 0)
        w.add_image_with_boxes("labelled", picture, boxes, 1, labels=["cat", "dog"])
        w.add_image_with_boxes("one", picture.transpose(1, 2, 0), boxes[:1], 2, rescale=2,
                               labels="cat", dataformats="HWC")
        w.add_image_with_boxes("miscounted", picture, lib.tensor(boxes), 3, labels=["cat"])
    got = assert_same_logs(tmp_path, torch, program)
    width, height = got["."][3][2][0]["value"][2][:2]
    assert (width, height) == (b"60", b"40")  # the size before rescaling, as PyTorch records
