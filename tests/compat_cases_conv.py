"""Compatibility cases: convolution, pooling, interpolation, channel dropout and the
normalisation layers of CNNs (Conv1d, Conv2d, Conv3d and their transposes, the max, average
and adaptive pools in 1, 2 and 3 dims, Upsample, Dropout1d/2d, BatchNorm2d, GroupNorm,
RMSNorm) and their functions."""
import numpy as np

from compat_cases_nn import fill
from compat_table import A, case, f32, f64

CASES = []
add = CASES.append


@add
@case("F.conv2d", inputs=(f32(2, 4, 7, 6), f32(6, 2, 3, 2), f32(6)), rtol=1e-4, atol=1e-5)
def _(lib, x, w, b):
    F = lib.nn.functional
    return (F.conv2d(x, w[:, :1].repeat(1, 4, 1, 1), b), F.conv2d(x, w, b, groups=2),
            F.conv2d(x, w, None, (2, 1), (1, 2), (2, 1), 2), F.conv2d(x, w, b, 1, "same", 2, 2),
            F.conv2d(x, w, padding="valid", groups=2), F.conv2d(x[0], w, stride=2, groups=2),
            F.conv2d(x.transpose(2, 3), w, b, padding=1, groups=2))


@add
@case("F.conv1d", inputs=(f32(3, 4, 9), f32(6, 2, 3), f32(6), f64(2, 3, 5), f64(4, 3, 2)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, w, b, x64, w64):
    F = lib.nn.functional
    return (F.conv1d(x, w, b, groups=2), F.conv1d(x, w, None, 2, 1, 2, 2),
            F.conv1d(x, w, b, padding="same", groups=2), F.conv1d(x[1], w, groups=2),
            F.conv1d(x64, w64, padding=1), F.conv1d(x64[:0], w64))


@add
@case("nn.Conv2d", "nn.Conv1d", inputs=(f32(2, 4, 6, 5), f32(2, 4, 8)), rtol=1e-4, atol=1e-5)
def _(lib, x, seq):
    nn = lib.nn
    mods = [nn.Conv2d(4, 6, 3), nn.Conv2d(4, 2, (2, 3), stride=(2, 1), padding=1, bias=False),
            nn.Conv2d(4, 4, 3, padding="same", dilation=2, groups=4),
            nn.Conv2d(4, 3, 3, padding=(1, 2), padding_mode="reflect"),
            nn.Conv2d(4, 3, 3, padding=2, padding_mode="circular"),
            nn.Conv2d(4, 3, 2, padding=1, padding_mode="replicate")]
    mods1 = [nn.Conv1d(4, 6, 3, groups=2), nn.Conv1d(4, 2, 4, padding="same", bias=False),
             nn.Conv1d(4, 3, 3, padding=2, padding_mode="reflect")]
    for i, m in enumerate(mods + mods1):
        fill(lib, m, seed=i)
    conv = nn.Conv2d(4, 6, 3)
    return ([m(x) for m in mods] + [m(seq) for m in mods1]
            + [[repr(m) for m in mods + mods1], conv.weight.shape, conv.kernel_size,
               conv.stride, conv.padding, conv.dilation, conv.groups, conv.padding_mode,
               sorted(conv.state_dict()), mods1[1].padding])


@add
@case("nn.Conv2d", "nn.Conv1d")
def _(lib):
    # the default initialisation: PyTorch's bound 1/sqrt(fan_in) for the weight and the bias
    # (the draws themselves come from each library's own stream)
    conv, conv1 = lib.nn.Conv2d(6, 8, (3, 2), groups=2), lib.nn.Conv1d(2, 3, 5, bias=False)
    bound, bound1 = 1 / (3 * 3 * 2) ** 0.5, 1 / 10 ** 0.5
    return (tuple(conv.weight.shape), conv.weight.dtype == lib.float32,
            bool(conv.weight.abs().max() <= bound), bool(conv.bias.abs().max() <= bound),
            bool(conv.weight.abs().max() > 0.8 * bound), bool(conv.bias.abs().max() > 0.5 * bound),
            bool(conv1.weight.abs().max() <= bound1), bool(conv1.weight.abs().max() > 0.8 * bound1),
            conv1.bias is None)


@add
@case("F.conv_transpose2d", "F.conv_transpose1d", "nn.ConvTranspose2d", "nn.ConvTranspose1d",
      inputs=(f32(2, 4, 5, 4), f32(4, 3, 3, 2), f32(6), f32(2, 4, 6)), rtol=1e-4, atol=1e-5)
def _(lib, x, w, b, seq):
    F, nn = lib.nn.functional, lib.nn
    ups = [nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2),
           nn.ConvTranspose2d(4, 2, (2, 3), stride=(1, 2), dilation=(2, 1), bias=False)]
    ups1 = [nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1)]
    for i, m in enumerate(ups + ups1):
        fill(lib, m, seed=i)
    return ([F.conv_transpose2d(x, w, b[:3]), F.conv_transpose2d(x, w, b, 2, 1, 1, groups=2),
             F.conv_transpose2d(x[0], w, None, (2, 3), (0, 1), (1, 2), 1, (2, 1)),
             F.conv_transpose2d(x.transpose(2, 3), w, b, 2, groups=2),
             F.conv_transpose1d(seq, w[:, :, 0], b[:3], 3, 1, 2),
             F.conv_transpose1d(seq[1], w[:, :2, :, 0], None, groups=2)]
            + [m(x) for m in ups] + [ups[0](x, output_size=(10, 8)), ups1[0](seq)]
            + [repr(m) for m in ups + ups1] + [tuple(ups[0].weight.shape), ups[0].transposed])


@add
@case("F.conv_transpose2d", compare="raises", match=r"conv_transpose2d: given transposed=1.*"
      r"expected input\[2, 5, 4, 4\] to have 4 channels", inputs=(f32(2, 5, 4, 4), f32(4, 3, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv_transpose2d(x, w)


@add
@case("F.conv2d", compare="raises", match=r"conv2d.*weight of size \[4, 3, 3, 3\].*input"
      r"\[2, 5, 8, 8\] to have 3 channels, but got 5", inputs=(f32(2, 5, 8, 8), f32(4, 3, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv2d(x, w)


@add
@case("F.conv2d", compare="raises", match=r"conv2d.*\[2, 3\]", inputs=(f32(2, 3), f32(4, 3, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv2d(x, w)


@add
@case("F.conv2d", compare="raises", match="Kernel size can't be greater than actual input size",
      inputs=(f32(2, 3, 2, 2), f32(4, 3, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv2d(x, w)


@add
@case("F.conv1d", compare="raises", match="padding='same' is not supported for strided",
      inputs=(f32(2, 3, 8), f32(4, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv1d(x, w, stride=2, padding="same")


@add
@case("F.conv1d", compare="raises", match=r"input type \(float64\) and weight type \(float32\)",
      inputs=(f64(2, 3, 8), f32(4, 3, 3)))
def _(lib, x, w):
    return lib.nn.functional.conv1d(x, w)


@add
@case("nn.Conv2d", compare="raises", match="in_channels must be divisible by groups")
def _(lib):
    return lib.nn.Conv2d(3, 4, 3, groups=2)


@add
@case("F.max_pool2d", "F.max_pool1d", "nn.MaxPool2d", "nn.MaxPool1d",
      inputs=(f32(2, 3, 7, 6), f32(2, 3, 9)))
def _(lib, x, seq):
    F, nn = lib.nn.functional, lib.nn
    pools = [nn.MaxPool2d(2), nn.MaxPool2d(3, 2, 1), nn.MaxPool2d((2, 3), ceil_mode=True),
             nn.MaxPool2d(2, 1, dilation=2), nn.MaxPool2d(2, return_indices=True)]
    return ([p(x) for p in pools] + [repr(p) for p in pools]
            + [F.max_pool2d(x, 3, 2, 1, return_indices=True), F.max_pool2d(x[0], 2),
               F.max_pool2d(x, (3, 2), ceil_mode=True, return_indices=True),
               F.max_pool2d(x.transpose(2, 3), 2), F.max_pool2d(x[:0], 2),
               F.max_pool1d(seq, 3), F.max_pool1d(seq, 2, 2, 1, ceil_mode=True,
                                                 return_indices=True),
               nn.MaxPool1d(4, 2)(seq), repr(nn.MaxPool1d(4, 2))])


@add
@case("F.max_pool2d", compare="raises", match="pad should be at most half of effective kernel",
      inputs=(f32(2, 3, 8, 8),))
def _(lib, x):
    return lib.nn.functional.max_pool2d(x, 3, padding=2)


@add
@case("F.max_pool2d", compare="raises", match=r"input size: \(3x2x2\). Calculated output size: "
      r"\(3x0x0\). Output size is too small", inputs=(f32(2, 3, 2, 2),))
def _(lib, x):
    return lib.nn.functional.max_pool2d(x, 3)


@add
@case("F.avg_pool2d", "F.avg_pool1d", "nn.AvgPool2d", "nn.AvgPool1d",
      inputs=(f32(2, 3, 7, 6), f32(2, 3, 9)))
def _(lib, x, seq):
    F, nn = lib.nn.functional, lib.nn
    pools = [nn.AvgPool2d(2), nn.AvgPool2d(3, 2, 1), nn.AvgPool2d(3, 2, 1, ceil_mode=True),
             nn.AvgPool2d((2, 3), 2, 1, count_include_pad=False),
             nn.AvgPool2d(3, 2, 1, True, False), nn.AvgPool2d(2, divisor_override=3)]
    return ([p(x) for p in pools] + [repr(p) for p in pools]
            + [F.avg_pool2d(x[1], 3), F.avg_pool2d(x.transpose(2, 3), 2, 1),
               F.avg_pool1d(seq, 3, 2, 1, True, False), F.avg_pool1d(seq, 2),
               nn.AvgPool1d(3, 2, 1)(seq), repr(nn.AvgPool1d(3, 2, 1))])


@add
@case("F.adaptive_avg_pool2d", "F.adaptive_avg_pool1d", "nn.AdaptiveAvgPool2d",
      "nn.AdaptiveAvgPool1d", inputs=(f32(2, 3, 7, 6), f32(2, 3, 9)))
def _(lib, x, seq):
    F, nn = lib.nn.functional, lib.nn
    pools = [nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool2d((3, 4)), nn.AdaptiveAvgPool2d(5),
             nn.AdaptiveAvgPool2d((None, 2)), nn.AdaptiveAvgPool1d(4)]
    return ([p(x) for p in pools[:4]] + [pools[4](seq)] + [repr(p) for p in pools]
            + [F.adaptive_avg_pool2d(x[0], (2, 3)), F.adaptive_avg_pool2d(x, 7),
               F.adaptive_avg_pool1d(seq, 1), F.adaptive_avg_pool1d(seq[1], 5)])


@add
@case("nn.BatchNorm2d", inputs=(f32(4, 3, 5, 2),))
def _(lib, x):
    bn = fill(lib, lib.nn.BatchNorm2d(3))
    y = bn(x)
    bn(x * 2 + 1)
    stats = (bn.running_mean.clone(), bn.running_var.clone(), bn.num_batches_tracked.clone())
    bn.eval()
    plain = lib.nn.BatchNorm2d(3, affine=False, track_running_stats=False)
    return (y, stats, bn(x), repr(bn), sorted(bn.state_dict()), plain(x),
            lib.nn.BatchNorm2d(3, momentum=0.5)(x[:, :, :1, :1]))


@add
@case("nn.BatchNorm2d", compare="raises", match=r"BatchNorm2d.*\(N, 3, H, W\).*\[2, 3, 4\]",
      inputs=(f32(2, 3, 4),))
def _(lib, x):
    return lib.nn.BatchNorm2d(3)(x)


@add
@case("F.group_norm", "nn.GroupNorm", inputs=(f32(3, 6, 4, 2), f32(6), f32(6)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, w, b):
    F, nn = lib.nn.functional, lib.nn
    gn = fill(lib, nn.GroupNorm(3, 6))
    return (F.group_norm(x, 2, w, b), F.group_norm(x, 3), F.group_norm(x[:, :, 0], 2, w, b),
            F.group_norm(x, 1, eps=0.1), gn(x), nn.GroupNorm(2, 6, affine=False)(x),
            repr(gn), sorted(gn.state_dict()), F.group_norm(x[:0], 2))


@add
@case("F.group_norm", compare="raises", match=r"divisible by num_groups.*\[3, 6, 4\].*"
      r"num_groups=4", inputs=(f32(3, 6, 4),))
def _(lib, x):
    return lib.nn.functional.group_norm(x, 4)


@add
@case("F.rms_norm", "nn.RMSNorm", inputs=(f32(2, 3, 4), f32(4), f64(2, 5)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, w, x64):
    F, nn = lib.nn.functional, lib.nn
    norm = fill(lib, nn.RMSNorm(4))
    norm2 = fill(lib, nn.RMSNorm([3, 4], eps=1e-3), seed=1)
    return (F.rms_norm(x, (4,), w), F.rms_norm(x, [3, 4]), F.rms_norm(x * 1e-4, (4,), eps=1.0),
            F.rms_norm(x64, (5,)), F.rms_norm(x64 * 1e-9, (5,)), norm(x), norm2(x),
            nn.RMSNorm(5, elementwise_affine=False)(x64), repr(norm), repr(norm2), norm.eps)


@add
@case("F.rms_norm", compare="raises", match=r"normalized_shape=\[3\].*size \[2, 4\]",
      inputs=(f32(2, 4),))
def _(lib, x):
    return lib.nn.functional.rms_norm(x, (3,))


@add
@case("F.interpolate", "F.upsample", "nn.Upsample", "nn.UpsamplingNearest2d",
      "nn.UpsamplingBilinear2d", inputs=(f32(2, 3, 5, 4), f32(2, 3, 6)))
def _(lib, x, seq):
    import warnings
    F, nn = lib.nn.functional, lib.nn
    mods = [nn.Upsample(scale_factor=2), nn.Upsample(size=(7, 3), mode="bilinear"),
            nn.Upsample(scale_factor=(1.5, 2), mode="bilinear", align_corners=True),
            nn.UpsamplingNearest2d(size=6), nn.UpsamplingBilinear2d(scale_factor=2)]
    with warnings.catch_warnings():  # both warn that upsample is deprecated
        warnings.simplefilter("ignore")
        old = F.upsample(x, scale_factor=2, mode="bilinear")
    return ([m(x) for m in mods] + [repr(nn.Sequential(*mods)), old,
            F.interpolate(x, size=3), F.interpolate(x, scale_factor=1.7, mode="nearest-exact"),
            F.interpolate(x, size=(2, 3), mode="area"), F.interpolate(x[0:1, 1:], 4),
            F.interpolate(seq, size=9, mode="linear"),
            F.interpolate(seq, scale_factor=0.5, mode="linear", align_corners=True),
            F.interpolate(x, scale_factor=1.5, mode="bilinear", recompute_scale_factor=True),
            nn.Upsample(scale_factor=2, mode="bicubic", align_corners=True)(x),
            F.interpolate(x, size=(3, 2), mode="bicubic", antialias=True),
            F.interpolate(x, size=(2, 3), mode="lanczos", antialias=True),
            nn.Upsample(size=(3, 4, 2), mode="trilinear")(x[:, None])])


@add
@case("F.interpolate", compare="raises", match="either size or scale_factor should be defined",
      inputs=(f32(2, 3, 5, 4),))
def _(lib, x):
    return lib.nn.functional.interpolate(x)


@add
@case("F.dropout2d", "F.dropout1d", "nn.Dropout2d", "nn.Dropout1d", compare="meta",
      inputs=(f32(4, 3, 5, 2), f32(4, 3, 6)))
def _(lib, x, seq):
    # the masks come from each library's own stream: shapes and dtypes are compared
    F, nn = lib.nn.functional, lib.nn
    outs = (F.dropout2d(x, 0.3), F.dropout1d(seq), F.dropout1d(seq[0], 0.2),
            nn.Dropout2d(0.4)(x), nn.Dropout1d()(seq), F.dropout2d(x.double(), 0.5))
    return [o.detach() for o in outs]


@add
@case("F.dropout2d", "F.dropout1d", "nn.Dropout2d", "nn.Dropout1d",
      inputs=(f32(4, 3, 5, 2), f32(4, 3, 6)))
def _(lib, x, seq):
    F, nn = lib.nn.functional, lib.nn
    off = nn.Dropout2d(0.4).eval()
    return (F.dropout2d(x, 0.3, training=False), F.dropout1d(seq, 0.0), off(x),
            F.dropout1d(seq, 1.0), repr(nn.Sequential(off, nn.Dropout1d(0.1, True))))


@add
@case("F.dropout1d", compare="raises", match="dropout1d: Expected 2D or 3D input",
      inputs=(f32(4, 3, 5, 2),))
def _(lib, x):
    return lib.nn.functional.dropout1d(x)


@add
@case("F.unfold", "F.fold", "nn.Unfold", "nn.Fold", inputs=(f32(2, 3, 6, 5), f32(2, 12, 9)))
def _(lib, x, cols):
    F, nn = lib.nn.functional, lib.nn
    unfold, fold = nn.Unfold((3, 2), dilation=(1, 2), padding=1, stride=(2, 1)), nn.Fold(
        (4, 4), 2, padding=1, stride=2)
    return (F.unfold(x, 2), unfold(x), F.unfold(x[0], 3, stride=2),
            F.fold(cols, (4, 4), 2, 1, 1, 2),
            fold(cols), F.fold(cols[1], 4, 2, padding=1, stride=2),
            F.fold(F.unfold(x, 2, stride=2), (6, 5), 2, stride=2), repr(unfold), repr(fold))


@add
@case("F.fold", compare="raises", match=r"fold: expected size of input's dimension 1 to be "
      r"divisible by the product of kernel_size", inputs=(f32(2, 13, 9),))
def _(lib, cols):
    return lib.nn.functional.fold(cols, (4, 4), 2)


# --- 3-d convolution and pooling (their own stream: the shared one's draws stay as they were) ---

def _own(*shape, seed):
    return A(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), grad=True)


@add
@case("F.conv3d", "F.conv_transpose3d", "nn.Conv3d", "nn.ConvTranspose3d",
      inputs=(_own(2, 4, 5, 4, 6, seed=41), _own(6, 2, 2, 3, 2, seed=42), _own(6, seed=43)),
      rtol=1e-4, atol=1e-5)
def _(lib, x, w, b):
    F, nn = lib.nn.functional, lib.nn
    mods = [nn.Conv3d(4, 6, 3, padding=1), nn.Conv3d(4, 2, (2, 3, 1), stride=(2, 1, 2),
                                                     dilation=(1, 1, 2), groups=2, bias=False),
            nn.Conv3d(4, 3, 2, padding=1, padding_mode="reflect"),
            nn.ConvTranspose3d(4, 2, (2, 2, 3), stride=2, padding=(0, 1, 1), groups=2)]
    for i, m in enumerate(mods):
        fill(lib, m, seed=50 + i)
    return ([F.conv3d(x, w, b, groups=2), F.conv3d(x, w, None, (1, 2, 1), 1, 1, 2),
             F.conv3d(x[1], w, b, padding="same", groups=2),
             F.conv_transpose3d(x, w[:4], stride=2),
             F.conv_transpose3d(x[0], w[:4], b[:4], 1, 1, 0, 2)]
            + [m(x) for m in mods] + [[repr(m) for m in mods], mods[0].weight.shape])


@add
@case("F.max_pool3d", "F.avg_pool3d", "F.adaptive_avg_pool3d", "nn.MaxPool3d", "nn.AvgPool3d",
      "nn.AdaptiveAvgPool3d", inputs=(_own(2, 3, 6, 5, 7, seed=44),))
def _(lib, x):
    F, nn = lib.nn.functional, lib.nn
    values, indices = F.max_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                   return_indices=True)
    pools = [nn.MaxPool3d(2), nn.MaxPool3d(3, 2, 1, dilation=(1, 2, 1), ceil_mode=True),
             nn.AvgPool3d(2), nn.AvgPool3d((3, 2, 2), 1, 1, count_include_pad=False),
             nn.AvgPool3d(3, 2, ceil_mode=True, divisor_override=5), nn.AdaptiveAvgPool3d(2),
             nn.AdaptiveAvgPool3d((3, None, 4))]
    return ([values, indices, F.max_pool3d(x[0], 2), F.avg_pool3d(x, 2, 1, 1),
             F.adaptive_avg_pool3d(x, (1, 2, 3)), F.adaptive_avg_pool3d(x[1], 1)]
            + [p(x) for p in pools] + [[repr(p) for p in pools]])


@add
@case("F.conv3d", compare="raises", match="Expected 4D \\(unbatched\\) or 5D \\(batched\\) input "
      "to conv3d", inputs=(_own(2, 3, 4, seed=45), _own(1, 2, 1, 1, 1, seed=46)))
def _(lib, x, w):
    return lib.nn.functional.conv3d(x, w)
