"""Compatibility cases: the further CNN layers of torch.nn and their functions: padding in every
mode and its layers, batch norm's and instance norm's functions, BatchNorm3d, InstanceNorm1d/
2d/3d, pixel and channel shuffles, adaptive and fractional max pooling, max unpooling, LP
pooling, local response norm, Softmax2d, alpha dropout, RReLU, Dropout3d, Bilinear and
LazyLinear."""
import warnings

import numpy as np

from compat_cases_nn import fill
from compat_table import A, case, f32, f64

CASES = []
add = CASES.append

PAD_MODULES = [f"nn.{kind}Pad{n}d" for kind in ("Zero", "Constant", "Reflection", "Replication",
                                                 "Circular") for n in (1, 2, 3)]


@add
@case("F.pad", inputs=(f32(2, 3, 5, 4), f64(3, 4)))
def _(lib, x, v):
    F = lib.nn.functional
    outs = []
    for mode in ("reflect", "replicate", "circular"):
        outs += [F.pad(x[0], (1, 2), mode=mode), F.pad(x, (2, 1, 3, 0), mode=mode),
                 F.pad(x, (1, 1, 2, 2, 0, 1), mode=mode), F.pad(v, (3, 2), mode=mode),
                 F.pad(x.transpose(2, 3), (-1, 2, 1, -2), mode=mode),
                 F.pad(x[0], (0, 0), mode=mode), F.pad(x[:0, 0], (1, 1), mode=mode)]
    return outs + [F.pad(x, (1, -2, -1, 3, 2, 0), value=0.5), F.pad(x, (1, 1), "constant"),
                   F.pad(x, [2, 1], mode="constant", value=None), F.pad(v, (1, 1, 1, 1)),
                   F.pad(lib.arange(6).reshape(2, 3), (1, 1), value=2.5),
                   F.pad(lib.arange(6).reshape(2, 3), (2, 0), mode="reflect"),
                   F.pad(x, (-2, -2)), F.pad(x[0, 0], (1, 2), mode="circular"),
                   F.pad(x, (2, 0, 0, 1), value=-1.0).transpose(0, 1)]


@add
@case("F.pad", compare="raises", match=r"Padding size should be less than the corresponding "
      r"input dimension, but got: padding \(4, 0\) at dimension 2 of input \[1, 3, 4\]",
      inputs=(f32(1, 3, 4),))
def _(lib, x):
    return lib.nn.functional.pad(x, (4, 0), mode="reflect")


@add
@case("F.pad", compare="raises", match="Padding value causes wrapping around more than once",
      inputs=(f32(1, 3, 4),))
def _(lib, x):
    return lib.nn.functional.pad(x, (5, 0), mode="circular")


@add
@case("F.pad", compare="raises", match="Padding size 2 is not supported for 4D input tensor",
      inputs=(f32(1, 1, 3, 4),))
def _(lib, x):
    return lib.nn.functional.pad(x, (1, 1), mode="replicate")


@add
@case("F.pad", compare="raises", match="Unrecognised padding mode wrap", inputs=(f32(1, 3, 4),))
def _(lib, x):
    return lib.nn.functional.pad(x, (1, 1), mode="wrap")


@add
@case("F.pad", compare="raises", match="Padding mode \"reflect\" doesn't take in value",
      inputs=(f32(1, 3, 4),))
def _(lib, x):
    return lib.nn.functional.pad(x, (1, 1), mode="reflect", value=1.0)


@add
@case(*PAD_MODULES, inputs=(f32(2, 3, 4, 5, 4),))
def _(lib, x):
    nn = lib.nn
    mods = [nn.ZeroPad1d(2), nn.ZeroPad2d((1, 0, 2, 1)), nn.ZeroPad3d(1),
            nn.ConstantPad1d((0, 3), 1.5), nn.ConstantPad2d(1, -2.0),
            nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.25), nn.ReflectionPad1d((3, 1)),
            nn.ReflectionPad2d(2), nn.ReflectionPad3d((1, 2, 0, 1, 1, 0)),
            nn.ReplicationPad1d(2), nn.ReplicationPad2d((0, 3, 1, 2)), nn.ReplicationPad3d(1),
            nn.CircularPad1d(1), nn.CircularPad2d((2, 0, 1, 3)), nn.CircularPad3d(1)]
    inputs = {1: x[0, 0, 0], 2: x[0, 0], 3: x}
    outs = [m(inputs[len(m.padding) // 2]) for m in mods]
    outs += [nn.ReflectionPad2d(1)(x[:, 0]), nn.ZeroPad2d(1)(x[0, 0, 0]),
             nn.CircularPad1d(2)(x[0, 0])]
    return outs + [repr(nn.Sequential(*mods)), [m.padding for m in mods]]


@add
@case("nn.CircularPad2d", compare="raises", match=r"expected 3D or 4D input \(got 2D input\)",
      inputs=(f32(3, 4),))
def _(lib, x):
    return lib.nn.CircularPad2d(1)(x)


@add
@case("F.batch_norm", "nn.BatchNorm3d", inputs=(f32(4, 3, 5), f32(3), f32(3), f32(2, 3, 2, 3, 2)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, w, b, v):
    F, nn = lib.nn.functional, lib.nn
    rm, rv = lib.linspace(-1, 1, 3), lib.linspace(0.5, 2, 3)
    train = F.batch_norm(x, rm, rv, w, b, True, 0.3)
    train_stats = (rm.clone(), rv.clone())
    outs = [train, train_stats, F.batch_norm(x, rm, rv, w, b), F.batch_norm(x, rm, rv),
            F.batch_norm(x[:, :, 0], None, None, w, None, training=True, eps=0.1),
            F.batch_norm(x.double(), rm.double(), rv.double(), training=True, momentum=1.0),
            F.batch_norm(x[:0], rm, rv, training=True), (rm, rv)]
    bn = fill(lib, nn.BatchNorm3d(3, momentum=None))
    outs += [bn(v), bn(v * 2 + 1), bn.running_mean.clone(), bn.running_var.clone(),
             bn.num_batches_tracked.clone()]
    bn.eval()
    return outs + [bn(v), repr(bn), sorted(bn.state_dict()),
                   nn.BatchNorm3d(3, affine=False, track_running_stats=False).eval()(v)]


@add
@case("nn.SyncBatchNorm", "nn.Identity", inputs=(f32(6, 4), f32(2, 3, 4, 5)), rtol=1e-4, atol=1e-5)
def _(lib, x, v):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3, momentum=0.2),
                          nn.Sequential(nn.Identity(7, unused="x"), nn.BatchNorm2d(3)))
    bn = model[1]
    with lib.no_grad():
        bn.weight.fill_(1.5)
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    same = [converted is model, converted[1].weight is bn.weight,
            converted[1].running_mean is bn.running_mean, type(converted[2][1]).__name__]
    y = converted[1](converted[0](x))
    sync = nn.SyncBatchNorm(3, affine=False)
    outs = [y, converted[1].running_mean.clone(), sync(v), sync.running_var.clone()]
    sync.eval()
    converted.eval()
    return outs + [sync(v), converted[1](converted[0](x)), same, repr(converted),
                   sorted(converted.state_dict()), converted[2][1].training]


@add
@case("nn.SyncBatchNorm", compare="raises", match=r"expected at least 2D input \(got 1D input\)",
      inputs=(f32(4),))
def _(lib, x):
    return lib.nn.SyncBatchNorm(4)(x)


@add
@case("F.batch_norm", compare="raises", match="running_mean must be defined in evaluation mode",
      inputs=(f32(4, 3),))
def _(lib, x):
    return lib.nn.functional.batch_norm(x, None, None)


@add
@case("F.batch_norm", compare="raises", match="running_mean should contain 3 elements not 2",
      inputs=(f32(4, 3),))
def _(lib, x):
    return lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(2), training=True)


@add
@case("F.instance_norm", "nn.InstanceNorm1d", "nn.InstanceNorm2d", "nn.InstanceNorm3d",
      inputs=(f32(2, 3, 5, 4), f32(3), f32(3)), rtol=1e-4, atol=1e-5)
def _(lib, x, w, b):
    F, nn = lib.nn.functional, lib.nn
    rm, rv = lib.zeros(3), lib.ones(3)
    outs = [F.instance_norm(x), F.instance_norm(x, rm, rv, w, b, momentum=0.2), (rm * 1, rv * 1),
            F.instance_norm(x, rm, rv, w, b, use_input_stats=False),
            F.instance_norm(x[:, :, 0], weight=w, eps=0.1), F.instance_norm(x[:0])]
    in2 = fill(lib, nn.InstanceNorm2d(3, affine=True, track_running_stats=True))
    outs += [in2(x), in2(x[0] + 1), in2.running_mean * 1, in2.running_var * 1,
             in2.num_batches_tracked * 1]
    in2.eval()
    outs += [in2(x), repr(in2), sorted(in2.state_dict())]
    in1, in3 = nn.InstanceNorm1d(3), nn.InstanceNorm3d(2, momentum=None, track_running_stats=True)
    outs += [in1(x[:, :, :, 0]), in1(x[0, :, :, 0]), in3(x), in3.running_mean * 1,
             repr(in1), sorted(in1.state_dict()), nn.InstanceNorm2d(3).eval()(x)]
    with warnings.catch_warnings():  # the channels are not 3: the unused num_features warns
        warnings.simplefilter("ignore")
        outs.append(nn.InstanceNorm2d(3)(x[0, :2]))
    return outs


@add
@case("nn.InstanceNorm2d", compare="raises", match=r"expected 3D or 4D input \(got 2D input\)",
      inputs=(f32(3, 4),))
def _(lib, x):
    return lib.nn.InstanceNorm2d(3)(x)


@add
@case("nn.InstanceNorm1d", compare="raises", match=r"expected input's size at dim=1 to match "
      r"num_features \(4\), but got: 3", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return lib.nn.InstanceNorm1d(4, affine=True)(x)


@add
@case("F.instance_norm", compare="raises", match="Expected more than 1 spatial element when "
      "training", inputs=(f32(2, 3, 1),))
def _(lib, x):
    return lib.nn.functional.instance_norm(x)


@add
@case("F.pixel_shuffle", "F.pixel_unshuffle", "F.channel_shuffle", "nn.PixelShuffle",
      "nn.PixelUnshuffle", "nn.ChannelShuffle", inputs=(f32(2, 12, 3, 4), f32(5, 2, 8, 2, 3)))
def _(lib, x, y):
    F, nn = lib.nn.functional, lib.nn
    return (F.pixel_shuffle(x, 2), F.pixel_shuffle(x[0], 2), F.pixel_shuffle(y, 2),
            F.pixel_shuffle(x.transpose(2, 3), 1), F.pixel_unshuffle(x, 1),
            F.pixel_unshuffle(F.pixel_shuffle(x, 2), 2), F.pixel_unshuffle(x[:, :, :2], 2),
            F.channel_shuffle(x, 3), F.channel_shuffle(x[:, :, 0], 4), F.channel_shuffle(y, 2),
            nn.PixelShuffle(2)(x), nn.PixelUnshuffle(2)(x[..., :2, :]), nn.ChannelShuffle(6)(x),
            repr(nn.Sequential(nn.PixelShuffle(3), nn.PixelUnshuffle(2), nn.ChannelShuffle(4))),
            F.pixel_shuffle(lib.arange(16).reshape(1, 4, 2, 2), 2))


@add
@case("F.pixel_shuffle", compare="raises", match=r"divisible by the square of upscale_factor, "
      r"but input.size\(-3\)=7 is not divisible by 4", inputs=(f32(2, 7, 3, 3),))
def _(lib, x):
    return lib.nn.functional.pixel_shuffle(x, 2)


@add
@case("F.channel_shuffle", compare="raises", match="Number of channels must be divisible by "
      "groups. Got 5 channels and 3 groups.", inputs=(f32(2, 5, 3),))
def _(lib, x):
    return lib.nn.functional.channel_shuffle(x, 3)


@add
@case("F.adaptive_max_pool1d", "F.adaptive_max_pool2d", "F.adaptive_max_pool3d",
      "nn.AdaptiveMaxPool1d", "nn.AdaptiveMaxPool2d", "nn.AdaptiveMaxPool3d",
      inputs=(f32(2, 3, 7, 5), f64(2, 5, 4, 3)))
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    return (F.adaptive_max_pool2d(x, (3, 2)), F.adaptive_max_pool2d(x, 4, True),
            F.adaptive_max_pool2d(x[0], (None, 3), return_indices=True),
            F.adaptive_max_pool2d(x, (9, 11), True), F.adaptive_max_pool2d(x.transpose(2, 3), 1),
            F.adaptive_max_pool1d(x[0], 3, True), F.adaptive_max_pool1d(x[:, 0], (4,)),
            F.adaptive_max_pool3d(v, (2, 3, 2), True), F.adaptive_max_pool3d(v, 1),
            F.adaptive_max_pool2d(x[:0], 2), nn.AdaptiveMaxPool2d((2, None))(x),
            nn.AdaptiveMaxPool1d(2, return_indices=True)(x[0]), nn.AdaptiveMaxPool3d(2)(v),
            repr(nn.AdaptiveMaxPool2d((3, None), True)), repr(nn.AdaptiveMaxPool1d(4)))


_own = np.random.default_rng(21)


@add
@case("F.fractional_max_pool2d", "F.fractional_max_pool3d", "nn.FractionalMaxPool2d",
      "nn.FractionalMaxPool3d",
      # drawn from a generator of its own: the shared one's later draws (other cases' inputs)
      # stay as they were
      inputs=(A(_own.uniform(-2, 2, (2, 3, 9, 7)).astype(np.float32), True),
              A(_own.uniform(-2, 2, (2, 3, 6, 5, 7)), True)))
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    u = np.random.default_rng(0).random((2, 3, 3))  # the windows' offsets, given
    u2, u3 = lib.tensor(u[:, :, :2], dtype=x.dtype), lib.tensor(u, dtype=v.dtype)
    return (F.fractional_max_pool2d(x, 2, output_size=(4, 5), _random_samples=u2),
            F.fractional_max_pool2d(x, (3, 2), output_ratio=(0.5, 0.7), return_indices=True,
                                    _random_samples=u2),
            F.fractional_max_pool2d(x[0], 2, output_size=3, _random_samples=u2[:1]),
            F.fractional_max_pool3d(v, 2, output_size=(3, 2, 4), return_indices=True,
                                    _random_samples=u3),
            nn.FractionalMaxPool2d(3, output_size=5, return_indices=True,
                                   _random_samples=u2)(x),
            nn.FractionalMaxPool3d((2, 1, 3), output_ratio=0.5, _random_samples=u3)(v),
            repr(nn.FractionalMaxPool2d(2, output_ratio=0.5)))


@add
@case("F.adaptive_max_pool2d", compare="raises", match=r"adaptive_max_pool2d\(\): Expected 3D "
      r"or 4D tensor, but got: \[7, 5\]", inputs=(f32(7, 5),))
def _(lib, x):
    return lib.nn.functional.adaptive_max_pool2d(x, 2)


@add
@case("F.max_unpool1d", "F.max_unpool2d", "F.max_unpool3d", "nn.MaxUnpool1d", "nn.MaxUnpool2d",
      "nn.MaxUnpool3d", inputs=(f32(2, 3, 7, 5), f32(2, 2, 4, 4, 6)))
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    y, i = F.max_pool2d(x, 2, return_indices=True)
    y1, i1 = F.max_pool1d(x[0], 3, 2, 1, return_indices=True)
    y3, i3 = F.max_pool3d(v, 2, return_indices=True)
    return (F.max_unpool2d(y, i, 2, output_size=(7, 5)),
            F.max_unpool2d(y[0], i[0], (2, 2), output_size=[7, 5]),
            F.max_unpool2d(*F.max_pool2d(x[..., :6, :4], 2, return_indices=True), 2),
            F.max_unpool1d(y1, i1, 3, 2, 1), F.max_unpool1d(y1, i1, 3, 2, 1, output_size=(6,)),
            F.max_unpool3d(y3, i3, 2), F.max_unpool3d(y3[1], i3[1], 2, output_size=(5, 4, 7)),
            nn.MaxUnpool2d(2)(y, i, output_size=[2, 3, 7, 5]), nn.MaxUnpool1d(3, 2, 1)(y1, i1),
            nn.MaxUnpool3d((2, 2, 2))(y3, i3),
            repr(nn.Sequential(nn.MaxUnpool1d(3, 2, 1), nn.MaxUnpool2d(2), nn.MaxUnpool3d(2))))


@add
@case("F.max_unpool2d", compare="raises", match=r"invalid output_size \"\(8, 5\)\" \(dim 0 must "
      r"be between 4 and 8\)", inputs=(f32(2, 3, 7, 5),))
def _(lib, x):
    F = lib.nn.functional
    y, i = F.max_pool2d(x, 2, return_indices=True)
    return F.max_unpool2d(y, i, 2, output_size=(8, 5))


@add
@case("F.lp_pool1d", "F.lp_pool2d", "F.lp_pool3d", "nn.LPPool1d", "nn.LPPool2d", "nn.LPPool3d",
      inputs=(f32(2, 3, 7, 6, low=0.1, high=2.0), f64(2, 3, 4, 4, 5)), rtol=1e-4, atol=1e-5)
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    return (F.lp_pool2d(x, 2, 3), F.lp_pool2d(x, 1.5, (2, 3), ceil_mode=True),
            F.lp_pool2d(x[0], 3, 2, stride=1), F.lp_pool1d(x[0], 2, 3, 2),
            F.lp_pool1d(x[:, 0], 1, 2), F.lp_pool2d(x, float("inf"), 2),
            F.lp_pool3d(v, 2, 2), F.lp_pool3d(v.abs(), 1.5, (2, 1, 3), 1),
            nn.LPPool2d(2, 3, 2)(x), nn.LPPool1d(3, 2)(x[0]), nn.LPPool3d(2, 2)(v),
            repr(nn.Sequential(nn.LPPool1d(1.5, 3, 2), nn.LPPool2d(2, (2, 3)),
                               nn.LPPool3d(2, 2, ceil_mode=True))))


@add
@case("F.local_response_norm", "nn.LocalResponseNorm", "nn.Softmax2d",
      inputs=(f32(2, 6, 5), f32(2, 5, 3, 4), f64(1, 4, 2, 3, 2)), rtol=1e-4, atol=1e-5)
def _(lib, x, y, v):
    F, nn = lib.nn.functional, lib.nn
    return (F.local_response_norm(x, 3), F.local_response_norm(y, 2, 1e-2, 0.5, 2.0),
            F.local_response_norm(v, 5, alpha=0.1), F.local_response_norm(y[:0], 3),
            nn.LocalResponseNorm(4, 0.3)(y), repr(nn.LocalResponseNorm(3, k=2.0)),
            nn.Softmax2d()(y), nn.Softmax2d()(y[0]), nn.Softmax2d()(v[0]), repr(nn.Softmax2d()))


@add
@case("F.local_response_norm", compare="raises", match=r"Expected 3D or higher dimensionality "
      r"\s*input \(got 2 dimensions\)", inputs=(f32(3, 4),))
def _(lib, x):
    return lib.nn.functional.local_response_norm(x, 2)


@add
@case("nn.Softmax2d", compare="raises", match="Softmax2d: expected input to be 3D or 4D, got 2D "
      "instead", inputs=(f32(3, 4),))
def _(lib, x):
    return lib.nn.Softmax2d()(x)


@add
@case("F.rrelu", "nn.RReLU", "F.alpha_dropout", "F.feature_alpha_dropout", "nn.AlphaDropout",
      "nn.FeatureAlphaDropout", "F.dropout3d", "nn.Dropout3d",
      inputs=(f32(4, 3, 5), f64(2, 3, 2, 2, 2)))
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    # evaluation is deterministic: values and gradients are compared
    eval_mode = [F.rrelu(x), F.rrelu(x, 0.1, 0.5), F.rrelu(x * 1.0, inplace=True), nn.RReLU()
                 .eval()(x), nn.RReLU(0.2, 0.4, True).eval()(x * 1.0), F.alpha_dropout(x),
                 F.alpha_dropout(x, 0.3, training=False), F.feature_alpha_dropout(v),
                 nn.AlphaDropout(0.2).eval()(x), nn.FeatureAlphaDropout().eval()(v),
                 F.dropout3d(v, training=False), nn.Dropout3d().eval()(v),
                 F.alpha_dropout(x, 0.0, True), F.alpha_dropout(x, 1.0, True),
                 F.feature_alpha_dropout(v, 1.0, True), F.dropout3d(v, 0.0), F.dropout3d(v, 1.0),
                 F.dropout3d(v[0], 1.0), F.rrelu(x, 0.3, 0.3, training=True)]
    return eval_mode + [repr(nn.Sequential(nn.RReLU(), nn.RReLU(0.1, 0.3, True),
                                           nn.AlphaDropout(0.2), nn.FeatureAlphaDropout(),
                                           nn.Dropout3d(0.3, True)))]


@add
@case("F.rrelu", "nn.RReLU", "F.alpha_dropout", "F.feature_alpha_dropout", "nn.AlphaDropout",
      "nn.FeatureAlphaDropout", "F.dropout3d", "nn.Dropout3d", compare="meta",
      inputs=(f32(4, 3, 5), f64(2, 3, 2, 2, 2)))
def _(lib, x, v):
    F, nn = lib.nn.functional, lib.nn
    # training draws from each library's own stream: shapes and dtypes are compared
    outs = (F.rrelu(x, training=True), nn.RReLU()(x), F.alpha_dropout(x, 0.3, True),
            F.feature_alpha_dropout(v, 0.4, True), nn.AlphaDropout(0.5)(x),
            nn.FeatureAlphaDropout(0.2)(v), F.dropout3d(v), nn.Dropout3d(0.3)(v[0]),
            F.dropout3d(v * 1.0, 0.5, inplace=True))
    return [t.detach() for t in outs]


@add
@case("F.alpha_dropout", compare="raises", match="dropout probability has to be between 0 and "
      "1, but got 1.5", inputs=(f32(4, 3),))
def _(lib, x):
    return lib.nn.functional.alpha_dropout(x, 1.5)


@add
@case("F.bilinear", "nn.Bilinear", "nn.LazyLinear",
      inputs=(f32(4, 3), f32(4, 5), f32(2, 3, 5), f32(2, 2), f32(3, 2, 3)), rtol=1e-4, atol=1e-5)
def _(lib, x1, x2, w, b, y1):
    F, nn = lib.nn.functional, lib.nn
    bil = fill(lib, nn.Bilinear(3, 5, 2))
    lazy = nn.LazyLinear(4)
    before = (repr(lazy), lazy.in_features)
    lazy(y1)
    fill(lib, lazy)
    return (F.bilinear(x1, x2, w, b[0]), F.bilinear(x1, x2, w), F.bilinear(y1, y1[..., :1]
            .expand(3, 2, 5), w), bil(x1, x2), bil(x1[0], x2[0]), repr(bil), before,
            lazy(y1), repr(lazy), type(lazy).__name__, lazy.weight.shape,
            sorted(lazy.state_dict()))


@add
@case("F.bilinear", compare="raises", match=r"bilinear\(\): input1 size does not match weight "
      r"size: got 4 but expected 3", inputs=(f32(2, 4), f32(2, 5), f32(2, 3, 5)))
def _(lib, x1, x2, w):
    return lib.nn.functional.bilinear(x1, x2, w)
