"""ONNX export of the newer layers and functions: padding in every mode, pixel and channel
shuffles, instance, batch and local response norm, adaptive max and LP pooling, Bilinear,
SiLU, diagonal, the windows of Tensor.unfold, nn.Unfold and nn.Fold, scatter, affine_grid and
grid_sample, running sums and products, products, einsum, log1p and the inverse trigonometric and
hyperbolic functions. Each is exported with a dynamic batch, checked by onnx's checker and
run by onnxruntime, on another batch than the traced one, to minigrad's outputs; a model of
several of them gives PyTorch's outputs with the same weights."""
import io

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
import minigrad.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
mo = pytest.importorskip("minigrad.onnx")


class Fn(nn.Module):
    """A module running fn on its inputs (for functions and Tensor methods)."""

    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


def _exported_matches(model, traced, inputs, rtol=1e-5, atol=1e-6):
    """Export `model` on `traced` with every input's dim 0 dynamic, then run the file on
    `inputs` and compare with minigrad."""
    model.eval()
    names = [f"x{i}" for i in range(len(traced))]
    buf = io.BytesIO()
    mo.export(model, tuple(traced), buf, input_names=names,
              dynamic_axes={n: {0: "batch"} for n in names})
    proto = onnx.load_from_string(buf.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {n: x.numpy() for n, x in zip(names, inputs)})
    want = model(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.numpy().dtype and g.shape == tuple(w.shape)
        np.testing.assert_allclose(g, w.detach().numpy(), rtol=rtol, atol=atol)
    return proto


def _images(*shape, seed=0):
    return mg.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


LAYERS = {
    "pad_constant": lambda: Fn(lambda x: F.pad(x, (1, 2, 0, 1), value=0.5)),
    "pad_reflect": lambda: Fn(lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect")),
    "pad_replicate": lambda: Fn(lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate")),
    "pad_circular": lambda: Fn(lambda x: F.pad(x, (1, 2, 2, 1), mode="circular")),
    "pad_negative": lambda: Fn(lambda x: F.pad(x, (-1, 2, 0, -2))),
    "ZeroPad2d": lambda: nn.ZeroPad2d((1, 0, 2, 1)),
    "ConstantPad3d": lambda: Fn(lambda x: nn.ConstantPad3d(1, -2.0)(x.unsqueeze(1))),
    "ReflectionPad2d": lambda: nn.ReflectionPad2d((2, 1, 0, 3)),
    "ReplicationPad2d": lambda: nn.ReplicationPad2d(2),
    "CircularPad2d": lambda: nn.CircularPad2d((1, 2, 3, 0)),
    "PixelShuffle": lambda: nn.PixelShuffle(2),
    "PixelUnshuffle": lambda: nn.PixelUnshuffle(2),
    "ChannelShuffle": lambda: nn.ChannelShuffle(2),
    "InstanceNorm2d": lambda: nn.InstanceNorm2d(4, affine=True),
    "InstanceNorm2d_running": lambda: nn.InstanceNorm2d(4, track_running_stats=True),
    "BatchNorm2d": lambda: nn.BatchNorm2d(4),
    "GroupNorm": lambda: nn.GroupNorm(2, 4),
    "LocalResponseNorm": lambda: nn.LocalResponseNorm(3, alpha=0.1, beta=0.6, k=1.5),
    "AdaptiveMaxPool2d": lambda: nn.AdaptiveMaxPool2d((4, 3)),
    "AdaptiveMaxPool2d_None": lambda: nn.AdaptiveMaxPool2d((None, 1)),
    "LPPool2d": lambda: nn.LPPool2d(2, 3, stride=2),
    "LPPool2d_p3": lambda: Fn(lambda x: nn.LPPool2d(3, 2)(x.abs())),
    "SiLU": lambda: nn.SiLU(),
    "unfold_dim": lambda: Fn(lambda x: x.unfold(3, 3, 2)),
    "unfold_overlapping": lambda: Fn(lambda x: x.unfold(1, 2, 1)),
    "diagonal": lambda: Fn(lambda x: x.diagonal(1, 2, 3) + x.diagonal(-1, 3, 1).sum()),
    "nn_Unfold": lambda: nn.Unfold((2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1)),
    "scatter": lambda: Fn(lambda x: x.scatter(3, x.argmax(3, keepdim=True), x * 3)),
    "scatter_add_traced_index": lambda: Fn(lambda x: x.scatter_add(
        3, x.argmax(3, keepdim=True), x.sum(3, keepdim=True))),
    "scatter_value": lambda: Fn(lambda x: x.scatter(1, x.argmin(1, keepdim=True), -5.0)),
    "cumsum": lambda: Fn(lambda x: x.cumsum(2)),
    "cumsum_bool": lambda: Fn(lambda x: (x > 0).cumsum(-1)),
    "cumprod": lambda: Fn(lambda x: x.cumprod(2)),
    "cumprod_int": lambda: Fn(lambda x: (x * 3).long().cumprod(0)),
    "prod": lambda: Fn(lambda x: x.prod(1, keepdim=True)),
    "einsum": lambda: Fn(lambda x: mg.einsum("...hw,...wk->...hk", x, x)),
    "log1p": lambda: Fn(lambda x: x.abs().log1p() + (x * 1e-9).log1p() * 1e9),
    "inverse_trig": lambda: Fn(lambda x: (x / 4).asin() + (x / 4).acos() + x.atan()),
    "hyperbolic": lambda: Fn(lambda x: x.sinh() + x.cosh() + x.asinh() + (x.abs() + 1).acosh()
                             + (x / 4).atanh()),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_exports_with_a_dynamic_batch(name):
    mg.manual_seed(0)
    model = LAYERS[name]()
    if isinstance(model, (nn.BatchNorm2d, nn.InstanceNorm2d)):
        model.train()
        model(_images(5, 4, 6, 6, seed=3))  # running statistics other than the initial ones
    _exported_matches(model, [_images(2, 4, 6, 6)], [_images(3, 4, 6, 6, seed=1)])


def test_one_d_layers_export():
    mg.manual_seed(1)
    seq = nn.Sequential(nn.ReflectionPad1d(2), nn.InstanceNorm1d(3, affine=True),
                        nn.LPPool1d(2, 3), nn.ReplicationPad1d((0, 2)), nn.CircularPad1d(1),
                        nn.SiLU())
    _exported_matches(seq, [_images(2, 3, 9)], [_images(4, 3, 9, seed=2)])


@pytest.mark.parametrize("name, node", [("cumprod", "Scan"), ("cumsum", "CumSum")])
def test_exported_float32_running_sums_and_products_are_pytorchs_bit_for_bit(torch, name, node):
    """They run in double and round each output once, as PyTorch's CPU kernels."""
    x = np.random.default_rng(5).normal(1.0, 0.1, (3, 2000)).astype(np.float32)
    model = Fn(lambda t: getattr(t, name)(-1))
    proto = _exported_matches(model, [mg.tensor(x[:1])], [mg.tensor(x)], rtol=0, atol=0)
    assert node in {n.op_type for n in proto.graph.node}
    buf = io.BytesIO()
    mo.export(model, (mg.tensor(x),), buf)
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    got = session.run(None, {session.get_inputs()[0].name: x})[0]
    np.testing.assert_array_equal(got, getattr(torch.from_numpy(x), name)(-1).numpy())


def test_bilinear_of_two_inputs_exports():
    mg.manual_seed(2)
    model = nn.Bilinear(5, 3, 4)
    _exported_matches(model, [_images(2, 5), _images(2, 3, seed=1)],
                      [_images(6, 5, seed=2), _images(6, 3, seed=3)])
    no_bias = Fn(lambda a, b: F.bilinear(a, b, model.weight, None))
    _exported_matches(no_bias, [_images(2, 7, 5), _images(2, 7, 3, seed=1)],
                      [_images(3, 7, 5, seed=2), _images(3, 7, 3, seed=3)])


def test_windows_are_gathers_exact_for_inf_and_nan():
    """Windows read elements, never multiply them: inf and NaN come out where they were."""
    x = _images(2, 3, 5, 6)
    x[0, 1, 2, 3], x[1, 0, 0, 0] = float("inf"), float("nan")
    model = Fn(lambda t: (F.unfold(t, 2, padding=1), t.unfold(2, 2, 1)))
    proto = _exported_matches(model, [_images(1, 3, 5, 6)], [x])
    assert {n.op_type for n in proto.graph.node} >= {"Gather", "Pad"}
    assert not {"Conv", "MatMul", "Mul"} & {n.op_type for n in proto.graph.node}


def test_adaptive_max_pool_bins_are_computed_in_the_graph():
    """The bins' maxima are found by the graph (not positions found for the traced input),
    overlapping bins included, NaN winning as in PyTorch, in 1, 2 and 3 spatial dims."""
    for model, shape in ((nn.AdaptiveMaxPool1d(4), (2, 3, 7)),
                         (nn.AdaptiveMaxPool2d((3, 4)), (2, 3, 7, 5)),
                         (nn.AdaptiveMaxPool3d((2, 1, 3)), (2, 2, 5, 4, 7))):
        x = _images(4, *shape[1:], seed=5)
        x.view(-1)[3], x.view(-1)[10] = float("nan"), float("inf")
        _exported_matches(model, [_images(*shape)], [x], rtol=0, atol=0)
    with pytest.raises(mo.errors.UnsupportedOperatorError, match="outside the traced"):
        mo.export(nn.AdaptiveMaxPool2d(2, return_indices=True), (_images(1, 2, 5, 5),),
                  io.BytesIO())


def test_fold_sums_overlapping_blocks():
    fold = nn.Fold((7, 6), (2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
    blocks = 4 * 2  # positions: (7 + 2 - 2) // 2 + 1 rows, (6 - 5) + 1 columns
    _exported_matches(fold, [_images(2, 4 * 6, blocks)], [_images(3, 4 * 6, blocks, seed=4)])
    # unfold then fold: each element times the number of blocks that read it
    both = Fn(lambda x: F.fold(F.unfold(x, 3, padding=1), (5, 6), 3, padding=1))
    _exported_matches(both, [_images(1, 2, 5, 6)], [_images(2, 2, 5, 6, seed=6)])
    # float64 (onnxruntime's Col2Im is float32 only), padding, dilation and stride per dim
    fold64 = Fn(lambda x: F.fold(x, (5, 4), (2, 3), padding=(1, 2), dilation=(2, 1),
                                 stride=(1, 2)))
    x = _images(2, 12, 5 * 3).double()
    _exported_matches(fold64, [x], [_images(4, 12, 5 * 3, seed=7).double()], rtol=1e-12)


class SpatialTransformer(nn.Module):
    """A spatial transformer: an affine map from a linear layer, affine_grid, grid_sample."""

    def __init__(self, mode, padding_mode, align_corners):
        super().__init__()
        self.loc = nn.Linear(4 * 6 * 6, 6)
        self.sample = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        with mg.no_grad():  # a map that reaches outside the image, so padding_mode matters
            self.loc.weight.mul_(0.1)
            self.loc.bias.copy_(mg.tensor([1.2, 0.1, 0.05, -0.1, 0.9, 0.1]))

    def forward(self, x):
        theta = self.loc(x.flatten(1)).reshape(-1, 2, 3)
        grid = F.affine_grid(theta, (x.shape[0], 4, 5, 7),
                             align_corners=self.sample["align_corners"])
        return F.grid_sample(x, grid, **self.sample)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_grid_sample_export(mode, padding_mode, align_corners):
    mg.manual_seed(4)
    model = SpatialTransformer(mode, padding_mode, align_corners)
    _exported_matches(model, [_images(2, 4, 6, 6)], [_images(3, 4, 6, 6, seed=8)], atol=1e-5)


def _super_resolution(lib):
    n = lib.nn
    return n.Sequential(n.ReflectionPad2d(1), n.Conv2d(4, 8, 3), n.InstanceNorm2d(8, affine=True),
                        n.SiLU(), n.PixelShuffle(2),
                        n.Conv2d(2, 4, 3, padding=1, padding_mode="circular"),
                        n.AdaptiveMaxPool2d((5, 3)), n.LocalResponseNorm(2), n.ZeroPad2d(1))


def test_the_exported_file_computes_pytorchs_outputs(torch):
    """The same layers in PyTorch, with minigrad's weights: the file run by onnxruntime
    gives PyTorch's outputs."""
    mg.manual_seed(6)
    model = _super_resolution(mg).eval()
    reference = _super_resolution(torch).eval()
    reference.load_state_dict({k: torch.tensor(v.numpy()) for k, v in model.state_dict().items()})
    buf = io.BytesIO()
    mo.export(model, (_images(2, 4, 6, 6),), buf, input_names=["x"],
              dynamic_axes={"x": {0: "batch"}})
    session = ort.InferenceSession(buf.getvalue(), providers=["CPUExecutionProvider"])
    x = _images(3, 4, 6, 6, seed=9).numpy()
    got, = session.run(None, {"x": x})
    with torch.no_grad():
        want = reference(torch.tensor(x)).numpy()
    assert got.shape == want.shape == (3, 4, 7, 5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_sort_and_topk_export_values_and_indices():
    """NumPy's stable argsort is TopK's order (the lower index first among equal values);
    NaN sorts last ascending and first descending, as in PyTorch."""
    model = Fn(lambda x: (*x.sort(2, descending=True), *(x * 2).round().topk(3, 1),
                          x.argsort(-1), x.kthvalue(2, 1).values,
                          *mg.where(x > 1, float("nan"), x).sort(1)))
    _exported_matches(model, [_images(2, 5, 4)], [_images(3, 5, 4, seed=10)])
