"""grid_sample of volumes (trilinear and nearest) and bicubic grid_sample of images: values,
both gradients and second derivatives against PyTorch for every padding rule and
align_corners, on odd and one-pixel axes, points far outside (several reflections), both
float dtypes, non-contiguous and empty inputs; float64 gradient checks of first and second
order; the errors; the ONNX export (bicubic) and its refusal (volumes)."""
import io

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from test_grid_sample import _both, second_derivatives_match

rng = np.random.default_rng(12)
PADDINGS = ("zeros", "border", "reflection")
# (input shape, grid's spatial shape, how far outside [-1, 1] the points reach)
VOLUMES = (((2, 3, 4, 5, 6), (3, 2, 4), 1.3), ((1, 2, 1, 3, 1), (2, 2, 3), 1.1),
           ((1, 1, 3, 4, 2), (2, 1, 2), 5.5))
IMAGES = (((2, 3, 5, 7), (4, 3), 1.3), ((1, 2, 1, 4), (2, 5), 1.1), ((1, 1, 4, 4), (3, 6), 6.5))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("padding_mode", PADDINGS)
def test_matches_pytorch(torch, dtype, padding_mode):
    cases = ([(s, o, r, m) for s, o, r in VOLUMES for m in ("bilinear", "nearest")]
             + [(s, o, r, "bicubic") for s, o, r in IMAGES])
    for shape, out, spread, mode in cases:
        img = rng.standard_normal(shape).astype(dtype)
        grid = rng.uniform(-spread, spread, (shape[0], *out, len(shape) - 2)).astype(dtype)
        for align in (False, True):
            _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
                i, g, mode, padding_mode, align), [img, grid])


def test_non_contiguous_and_empty_inputs(torch):
    vol = rng.standard_normal((2, 4, 3, 4, 5)).astype(np.float32)
    grid = rng.uniform(-1.2, 1.2, (2, 2, 3, 6, 4)).astype(np.float32)
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i.transpose(2, 4).transpose(2, 4)[:, ::2], g[..., :3].transpose(1, 3), "bilinear",
        "reflection", False), [vol, grid])
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i[:, :, 0].transpose(2, 3), g[:, 0, ..., 2:], "bicubic", "border", False), [vol, grid])
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i[:0], g[:0, ..., :3], align_corners=True), [vol, grid])
    _both(torch, lambda lib, i, g: lib.nn.functional.grid_sample(
        i, g[:, :0, ..., :3], "nearest", align_corners=True), [vol, grid])


@pytest.mark.parametrize("padding_mode", PADDINGS)
def test_gradcheck_and_gradgradcheck(padding_mode):
    # points off the lattice and off the padding rules' kinks, inside and outside
    vol = mg.tensor(rng.standard_normal((1, 1, 3, 2, 3)), requires_grad=True)
    vgrid = mg.tensor(rng.uniform(-1.3, 1.3, (1, 2, 1, 1, 3)) + 0.013, requires_grad=True)
    img = mg.tensor(rng.standard_normal((1, 1, 3, 4)), requires_grad=True)
    grid = mg.tensor(rng.uniform(-1.3, 1.3, (1, 2, 2, 2)) + 0.013, requires_grad=True)
    for align in (False, True):
        assert gradcheck(lambda i, g: F.grid_sample(i, g, "bilinear", padding_mode, align),
                         [vol, vgrid])
        assert gradcheck(lambda i: F.grid_sample(i, vgrid.detach(), "nearest", padding_mode,
                                                 align), [vol])
        assert gradcheck(lambda i, g: F.grid_sample(i, g, "bicubic", padding_mode, align),
                         [img, grid])
    assert gradgradcheck(lambda i, g: F.grid_sample(i, g, "bilinear", padding_mode, False),
                         [vol, vgrid])
    assert gradgradcheck(lambda i, g: F.grid_sample(i, g, "bicubic", padding_mode, True),
                         [img, grid])


def test_second_derivatives_match_pytorch(torch):
    cases = [(rng.standard_normal((2, 2, 3, 4, 3)),
              rng.uniform(-1.4, 1.4, (2, 3, 2, 2, 3)) + 0.013, "bilinear"),
             (rng.standard_normal((2, 3, 4, 5)), rng.uniform(-1.4, 1.4, (2, 3, 2, 2)) + 0.013,
              "bicubic")]
    for x, g, mode in cases:
        for padding_mode in PADDINGS:
            second_derivatives_match(torch, x, g, mode, padding_mode, True, power=2)


def test_errors_and_forward_mode_as_pytorch(torch):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="bicubic interpolation only supports 4D input"):
            lib.nn.functional.grid_sample(lib.zeros(1, 1, 2, 2, 2), lib.zeros(1, 1, 1, 1, 3),
                                          "bicubic", align_corners=False)
    import minigrad.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        vol = fwAD.make_dual(mg.zeros(1, 1, 2, 2, 2), mg.ones(1, 1, 2, 2, 2))
        with pytest.raises(NotImplementedError, match="forward AD with grid_sampler_3d"):
            F.grid_sample(vol, mg.zeros(1, 1, 1, 2, 3), align_corners=False)


def test_onnx_exports_bicubic_and_refuses_volumes():
    pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    mo = pytest.importorskip("minigrad.onnx")

    class Sample(mg.nn.Module):
        def __init__(self, padding_mode, align):
            super().__init__()
            self.kw = dict(mode="bicubic", padding_mode=padding_mode, align_corners=align)

        def forward(self, x, g):
            return F.grid_sample(x, g, **self.kw)

    x = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    g = rng.uniform(-1.3, 1.3, (2, 4, 3, 2)).astype(np.float32)
    for padding_mode in PADDINGS:
        for align in (False, True):
            buf = io.BytesIO()
            model = Sample(padding_mode, align)
            mo.export(model, (mg.tensor(x), mg.tensor(g)), buf, input_names=["x", "g"])
            got = ort.InferenceSession(buf.getvalue()).run(None, {"x": x, "g": g})[0]
            np.testing.assert_allclose(got, model(mg.tensor(x), mg.tensor(g)).numpy(),
                                       rtol=1e-5, atol=1e-5, err_msg=f"{padding_mode} {align}")
    trilinear = Sample("zeros", False)
    trilinear.kw["mode"] = "bilinear"
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="GridSample takes volumes"):
        mo.export(trilinear, (mg.zeros(1, 1, 2, 2, 2), mg.zeros(1, 1, 1, 1, 3)),
                  io.BytesIO())
