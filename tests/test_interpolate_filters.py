"""F.interpolate's bicubic, trilinear and antialiased (bilinear, bicubic, lanczos) modes, and
nearest and area on volumes: values and gradients against PyTorch on both float dtypes, many
sizes and scale factors, both align_corners, non-contiguous and empty inputs; float64
gradient checks; the errors; the ONNX export of the same resizes."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from helpers import t64

_rng = np.random.default_rng(0)
X4, X5 = _rng.standard_normal((2, 3, 9, 11)), _rng.standard_normal((2, 2, 4, 5, 6))
SIZES = [dict(size=(17, 5)), dict(scale_factor=2), dict(scale_factor=1.7),
         dict(scale_factor=0.45), dict(size=(1, 1)), dict(size=(3, 30)),
         dict(scale_factor=(0.3, 1.3), recompute_scale_factor=True)]
VOLUMES = [dict(size=(7, 3, 9)), dict(scale_factor=2), dict(scale_factor=0.6),
           dict(scale_factor=(1.5, 0.5, 2.3))]
CASES = ([(X4, dict(mode="bicubic", align_corners=ac, **kw))
          for ac in (False, True) for kw in SIZES]
         + [(X4, dict(mode=m, align_corners=ac, antialias=True, **kw))
            for m in ("bilinear", "bicubic") for ac in (False, True) for kw in SIZES]
         + [(X4, dict(mode="lanczos", antialias=True, **kw)) for kw in SIZES]
         + [(X5, dict(mode="trilinear", align_corners=ac, **kw))
            for ac in (False, True) for kw in VOLUMES]
         + [(X5, dict(mode=m, **kw)) for m in ("nearest", "nearest-exact", "area")
            for kw in VOLUMES[:2]])


def _run(lib, x, kw, noncontiguous=False):
    t = lib.tensor(x, requires_grad=True)
    src = t.transpose(-1, -2).contiguous().transpose(-1, -2) if noncontiguous else t
    y = lib.nn.functional.interpolate(src, **kw)
    w = np.sin(np.arange(y.numel())).reshape(tuple(y.shape)).astype(x.dtype)
    (y * lib.tensor(w)).sum().backward()
    return y.detach().numpy(), t.grad.numpy(), str(y.dtype).split(".")[-1]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_and_gradients_match_pytorch(torch, dtype):
    tol = 2e-5 if dtype == np.float32 else 1e-12
    for i, (x, kw) in enumerate(CASES):
        x = x.astype(dtype)
        (y, g, dt), (y_t, g_t, dt_t) = (_run(mg, x, kw, noncontiguous=i % 2),
                                        _run(torch, x, kw))
        assert y.shape == y_t.shape and dt == dt_t, kw
        np.testing.assert_allclose(y, y_t, rtol=tol, atol=tol, err_msg=str(kw))
        np.testing.assert_allclose(g, g_t, rtol=tol, atol=tol, err_msg=str(kw))


def test_upsample_layer_and_empty_batch_match_pytorch(torch):
    x = X5[:1].astype(np.float32)
    for kw in (dict(scale_factor=1.5, mode="trilinear"), dict(size=(3, 2, 8), mode="nearest")):
        y = mg.nn.Upsample(**kw)(mg.tensor(x))
        np.testing.assert_allclose(y.numpy(), torch.nn.Upsample(**kw)(torch.tensor(x)).numpy(),
                                   rtol=1e-5, atol=1e-6)
    up = dict(scale_factor=2, mode="bicubic", align_corners=True)
    y = mg.nn.Upsample(**up)(mg.tensor(X4.astype(np.float32)))
    np.testing.assert_allclose(y.numpy(), torch.nn.Upsample(**up)(
        torch.tensor(X4.astype(np.float32))).numpy(), rtol=1e-5, atol=1e-5)
    empty = F.interpolate(mg.zeros(0, 2, 4, 4), size=3, mode="bicubic", antialias=True)
    assert tuple(empty.shape) == (0, 2, 3, 3)


def test_gradcheck_and_gradgradcheck():
    x = t64(_rng.standard_normal((1, 2, 5, 6)))
    for kw in (dict(scale_factor=1.5, mode="bicubic"),
               dict(size=(3, 7), mode="bicubic", align_corners=True),
               dict(size=(2, 3), mode="bilinear", antialias=True),
               dict(size=(3, 9), mode="bicubic", antialias=True),
               dict(size=(2, 4), mode="lanczos", antialias=True)):
        assert gradcheck(lambda x: F.interpolate(x, **kw), [x]), kw
    assert gradgradcheck(lambda x: F.interpolate(x, size=(3, 4), mode="bicubic") ** 2, [x])
    vol = t64(_rng.standard_normal((1, 1, 3, 2, 4)))
    assert gradcheck(lambda v: F.interpolate(v, scale_factor=(1.5, 2, 0.5), mode="trilinear",
                                             align_corners=True), [vol])
    assert gradcheck(lambda v: mg.nn.Upsample(size=(2, 3, 3), mode="trilinear")(v), [vol])


def test_errors_name_the_problem(torch):
    cases = [((1, 1, 4, 4), dict(size=2, mode="trilinear"), NotImplementedError,
              "Got 4D input, but trilinear mode needs 5D input"),
             ((1, 1, 4, 4, 4), dict(size=2, mode="bilinear", antialias=True), ValueError,
              "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes"),
             ((1, 1, 4, 4), dict(size=2, mode="nearest", antialias=True), ValueError,
              "requires a 4-D tensor as input"),
             ((1, 1, 4, 4), dict(size=2, mode="lanczos"), ValueError,
              "Lanczos mode requires antialias=True"),
             ((1, 1, 4, 4), dict(size=2, mode="lanczos", antialias=True, align_corners=True),
              ValueError, "Lanczos mode does not support align_corners=True"),
             ((1, 1, 1, 4, 4, 4), dict(size=2), NotImplementedError,
              "Only 3D, 4D and 5D input Tensors supported (got 6D)"),
             ((1, 1, 4, 4), dict(size=2, mode="cubic"), NotImplementedError, "(got cubic)")]
    for shape, kw, exc, text in cases:
        for lib in (mg, torch):
            with pytest.raises(exc) as info:
                lib.nn.functional.interpolate(lib.zeros(*shape), **kw)
            assert text in str(info.value), (lib.__name__, kw, str(info.value))


def test_onnx_export_runs_to_the_same_outputs(tmp_path):
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    mo = pytest.importorskip("minigrad.onnx")

    class Resize(mg.nn.Module):
        def forward(self, x, v):
            y = F.interpolate(x, scale_factor=2, mode="bicubic")
            y = F.interpolate(y, size=(5, 4), mode="bicubic", antialias=True)
            return (y, F.interpolate(v, size=(3, 7, 2), mode="trilinear"),
                    mg.nn.AdaptiveAvgPool3d((2, 1, 3))(v))

    x, v = (_rng.standard_normal(s).astype(np.float32) for s in ((2, 3, 9, 11), (2, 2, 4, 5, 6)))
    path = tmp_path / "resize.onnx"
    mo.export(Resize(), (mg.tensor(x), mg.tensor(v)), path, input_names=["x", "v"])
    outs = ort.InferenceSession(str(path)).run(None, {"x": x, "v": v})
    want = Resize()(mg.tensor(x), mg.tensor(v))
    for got, w in zip(outs, want):
        np.testing.assert_allclose(got, w.numpy(), rtol=1e-5, atol=1e-5)
