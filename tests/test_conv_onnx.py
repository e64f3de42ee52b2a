"""ONNX export of convolution and pooling: a CNN with every padding, stride, ceil_mode and
divisor rule exported with a dynamic batch, and convolutions in every padding_mode, run by
onnxruntime to minigrad's outputs."""
import numpy as np
import pytest

import minigrad as mg

pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
mo = pytest.importorskip("minigrad.onnx")


def _run(path, x):
    session = ort.InferenceSession(str(path))
    return session.run(None, {session.get_inputs()[0].name: x})[0]


def test_a_cnn_exports_and_runs_to_the_same_outputs(tmp_path):
    nn = mg.nn
    mg.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
        nn.MaxPool2d(3, 2, 1, ceil_mode=True),
        nn.Conv2d(4, 4, 3, groups=2, dilation=2, padding="same"),
        nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
        nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1),
        nn.AdaptiveAvgPool2d((3, 2)), nn.Flatten(), nn.Linear(12, 2))
    model.train()
    model(mg.randn(4, 1, 11, 10))  # running statistics that are not the initial ones
    model.eval()
    path = tmp_path / "cnn.onnx"
    mo.export(model, (mg.zeros(2, 1, 11, 10),), path, input_names=["x"],
              dynamic_axes={"x": {0: "batch"}})
    x = np.random.default_rng(0).standard_normal((3, 1, 11, 10)).astype(np.float32)
    np.testing.assert_allclose(_run(path, x), model(mg.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    seq = nn.Sequential(nn.Conv1d(2, 3, 3, stride=2), nn.MaxPool1d(2), nn.AdaptiveAvgPool1d(2),
                        nn.AvgPool1d(2))
    mo.export(seq, (mg.zeros(1, 2, 15),), path)
    x = np.random.default_rng(1).standard_normal((1, 2, 15)).astype(np.float32)
    np.testing.assert_allclose(_run(path, x), seq(mg.tensor(x)).detach().numpy(), rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_convolutions_pad_in_every_mode(tmp_path, mode):
    mg.manual_seed(2)
    model = mg.nn.Conv2d(2, 3, 3, padding=(2, 1), padding_mode=mode).eval()
    conv1d = mg.nn.Conv1d(2, 2, 3, stride=2, padding=2, dilation=2, padding_mode=mode).eval()
    for m, shape in ((model, (2, 2, 5, 6)), (conv1d, (2, 2, 9))):
        mo.export(m, (mg.zeros(*shape),), tmp_path / "c.onnx", input_names=["x"],
                  dynamic_axes={"x": {0: "batch"}})
        x = np.random.default_rng(3).standard_normal((3,) + shape[1:]).astype(np.float32)
        np.testing.assert_allclose(_run(tmp_path / "c.onnx", x),
                                   m(mg.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)
