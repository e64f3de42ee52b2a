"""Compatibility cases: PyTorch's other names for functions minigrad has (comparisons,
subtract, multiply, divide, negative, absolute, fix, clone, swapaxes, moveaxis, ravel, fliplr,
flipud, msort), as functions and as Tensor methods; cov and corrcoef; broadcast_shapes and
broadcast_tensors. Inputs come from their own stream, so the shared one's draws stay as they
were."""
import numpy as np

from compat_table import A, case

CASES = []
add = CASES.append
_own = np.random.default_rng(26)


def _f32(*shape):
    return A(_own.standard_normal(shape).astype(np.float32), grad=True)


@add
@case("minigrad.eq", "minigrad.ne", "minigrad.gt", "minigrad.ge", "minigrad.lt", "minigrad.le",
      "minigrad.greater", "minigrad.greater_equal", "minigrad.less", "minigrad.less_equal",
      "minigrad.not_equal", "Tensor.greater", "Tensor.greater_equal", "Tensor.less",
      "Tensor.less_equal", "Tensor.not_equal",
      inputs=(_f32(3, 4), _f32(3, 4), A(np.arange(12).reshape(3, 4) % 5)))
def _(lib, x, y, i):
    return (lib.eq(x, y), lib.eq(i, 2), lib.ne(x, x), lib.gt(x, y), lib.ge(i, 3), lib.lt(x, 0),
            lib.le(x, y), lib.greater(x, y), lib.greater_equal(i, i.t().reshape(3, 4)),
            lib.less(x, y[0]), lib.less_equal(x, 0.5), lib.not_equal(i, 1), x.greater(y),
            x.greater_equal(0), i.less(3), x.less_equal(y), x.not_equal(y))


@add
@case("minigrad.subtract", "Tensor.subtract", "minigrad.multiply", "Tensor.multiply",
      "minigrad.divide", "Tensor.divide", "minigrad.true_divide", "Tensor.true_divide",
      "minigrad.negative", "Tensor.negative", "minigrad.absolute", "Tensor.absolute",
      "minigrad.fix", "Tensor.fix", "minigrad.clone",
      inputs=(_f32(3, 4), _f32(3, 4), A(np.arange(-5, 7).reshape(3, 4))))
def _(lib, x, y, i):
    return (lib.subtract(x, y, alpha=2), x.subtract(y), lib.subtract(i, 2), lib.multiply(x, y),
            x.multiply(3), lib.divide(x, y), x.divide(y, rounding_mode="floor"),
            lib.divide(i, 3, rounding_mode="trunc"), lib.true_divide(i, 4), x.true_divide(y),
            lib.negative(x), x.negative(), lib.absolute(i), x.absolute(), lib.fix(x * 3),
            (x * 3).fix(), lib.clone(x), lib.clone(i))


@add
@case("minigrad.swapaxes", "minigrad.swapdims", "minigrad.moveaxis", "Tensor.moveaxis",
      "minigrad.ravel", "Tensor.ravel", "minigrad.fliplr", "Tensor.fliplr", "minigrad.flipud",
      "Tensor.flipud", "minigrad.msort", "Tensor.msort", inputs=(_f32(2, 3, 4),))
def _(lib, x):
    return (lib.swapaxes(x, 0, 2), lib.swapdims(x, -1, 1), lib.moveaxis(x, 0, -1),
            x.moveaxis((0, 1), (2, 0)), lib.ravel(x.transpose(0, 2)), x[0].t().ravel(),
            lib.fliplr(x), x[0].fliplr(), lib.flipud(x[0, 0]), x.flipud(), lib.msort(x[0]),
            x.msort())


@add
@case("minigrad.fliplr", compare="raises", match="Input must be >= 2-d")
def _(lib):
    return lib.fliplr(lib.ones(3))


# --- covariance and broadcasting -------------------------------------------------------------

@add
@case("minigrad.cov", "minigrad.corrcoef",
      inputs=(_f32(3, 6), A(np.array([1, 2, 0, 3, 1, 1])),
              A(np.array([0.5, 1.0, 2.0, 0.25, 1.5, 1.0], np.float32))), rtol=1e-4, atol=1e-5)
def _(lib, x, fw, aw):
    return (lib.cov(x), lib.cov(x, correction=0), lib.cov(x[0]), lib.cov(x, fweights=fw),
            lib.cov(x, aweights=aw), lib.cov(x, fweights=fw, aweights=aw, correction=2),
            lib.cov(lib.tensor([[1, 2, 3], [2, 5, 4]])), lib.corrcoef(x), lib.corrcoef(x[1]),
            lib.corrcoef(lib.tensor([[1, 2, 3], [2, 5, 4]])))


@add
@case("minigrad.broadcast_shapes", "minigrad.broadcast_tensors",
      inputs=(_f32(2, 1), _f32(3), _f32(1, 1)))
def _(lib, a, b, c):
    return (lib.broadcast_shapes((2, 1), (3,), (1, 1, 1)), lib.broadcast_shapes(4, (2, 1)),
            lib.broadcast_shapes(), lib.broadcast_tensors(a, b, c), lib.broadcast_tensors(b))


@add
@case("minigrad.broadcast_shapes", "minigrad.broadcast_tensors", compare="raises",
      match="do not broadcast")
def _(lib):
    return lib.broadcast_tensors(lib.ones(2, 3), lib.ones(3, 2))


@add
@case("minigrad.pi", "minigrad.e", "minigrad.inf", "minigrad.nan", "minigrad.newaxis",
      "minigrad.range", "minigrad.scalar_tensor", inputs=(_f32(2, 3),))
def _(lib, x):
    import math
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # range is deprecated in both
        ranges = (lib.range(0, 1, 0.1), lib.range(1, 4), lib.range(1, 10, 3, dtype=lib.long),
                  lib.range(5, 1, -1.5), lib.range(0.5, 2.5, dtype=lib.float64),
                  lib.range(0, 1, 1 / 3))
    return (lib.pi, lib.e, lib.inf, math.isnan(lib.nan), lib.newaxis is None,
            x[lib.newaxis].shape, x[:, lib.newaxis, :].shape, ranges, lib.scalar_tensor(3),
            lib.scalar_tensor(2.5, dtype=lib.float64), lib.scalar_tensor(True),
            lib.scalar_tensor(7.9, dtype=lib.long), x.masked_fill(x > 0, -lib.inf))


@add
@case("minigrad.concatenate", "minigrad.row_stack", "minigrad.adjoint", "minigrad.detach",
      "minigrad.unflatten", "minigrad.is_nonzero", "minigrad.is_signed",
      inputs=(_f32(2, 4), _f32(2, 4)))
def _(lib, x, y):
    return (lib.concatenate([x, y], axis=1), lib.concatenate((x, y)), lib.row_stack([x, y[0]]),
            lib.adjoint(x), lib.detach(x * 2).requires_grad, lib.unflatten(x, 1, (2, 2)),
            lib.is_nonzero(lib.tensor([2.0])), lib.is_nonzero(lib.tensor(0)),
            lib.is_signed(x), lib.is_signed(lib.ones(1, dtype=lib.uint8)))


@add
@case("minigrad.conv1d", "minigrad.conv2d", "minigrad.conv3d", "minigrad.conv_transpose1d",
      "minigrad.conv_transpose2d", "minigrad.conv_transpose3d", "minigrad.max_pool1d",
      "minigrad.max_pool2d", "minigrad.max_pool3d", "minigrad.avg_pool1d",
      "minigrad.adaptive_avg_pool1d", "minigrad.layer_norm", "minigrad.group_norm",
      "minigrad.rms_norm", "minigrad.cosine_similarity", "minigrad.pairwise_distance",
      "minigrad.pixel_shuffle", "minigrad.pixel_unshuffle", "minigrad.prelu", "minigrad.selu",
      "minigrad.celu", "minigrad.hardshrink", "minigrad.bilinear",
      "minigrad.channel_shuffle", "minigrad.alpha_dropout",
      inputs=(_f32(2, 4, 4, 4), _f32(3, 4, 2, 2), _f32(2, 4), _f32(5, 4, 4)), rtol=1e-4,
      atol=1e-5)
def _(lib, x, w, v, b):
    return (lib.conv1d(x[:, :, 0], w[:, :, 0]), lib.conv2d(x, w, padding=1),
            lib.conv3d(x[:, :, None], w[:, :, None], stride=(1, 2, 1)),
            lib.conv_transpose1d(x[:, :, 0], w.transpose(0, 1)[:, :, 0]),
            lib.conv_transpose2d(x, w.transpose(0, 1), stride=2),
            lib.conv_transpose3d(x[:, :, None], w.transpose(0, 1)[:, :, None]),
            lib.max_pool1d(x[:, :, 0], 2), lib.max_pool2d(x, 2, 1), lib.max_pool3d(x[None], 2),
            lib.avg_pool1d(x[:, :, 0], 3, 1, 1), lib.adaptive_avg_pool1d(x[:, :, 0], 3),
            lib.layer_norm(x, (4,), w[0, 0, 0].repeat(2), None, 1e-3),
            lib.group_norm(x, 2, v[0], v[1]), lib.rms_norm(x, (4, 4), None, 1e-5),
            lib.cosine_similarity(v, v.flip(0)), lib.pairwise_distance(v, v * 2),
            lib.pixel_shuffle(x, 2), lib.pixel_unshuffle(x, 2), lib.prelu(x, v[0, :1]),
            lib.selu(x), lib.celu(x, 0.5), lib.hardshrink(x, 0.3),
            lib.bilinear(v, v, b, None), lib.channel_shuffle(x, 2),
            lib.alpha_dropout(x, 0.2, False))


@add
@case("minigrad.diagflat", "Tensor.diagflat", "minigrad.isreal", "Tensor.isreal", "minigrad.is_neg",
      "Tensor.is_neg", "minigrad.narrow_copy", "Tensor.narrow_copy", "Tensor.broadcast_to",
      "Tensor.where", "Tensor.cov", "Tensor.corrcoef", "Tensor.histogram",
      inputs=(_f32(2, 3), _f32(3)))
def _(lib, x, v):
    z = lib.complex(v, v * (v > 0))
    return (lib.diagflat(x), x.diagflat(-2), lib.diagflat(v, 1), lib.isreal(z), z.isreal(),
            lib.isreal(x), lib.is_neg(x), x.neg().is_neg(), lib.narrow_copy(x, 1, 1, 2),
            x.narrow_copy(0, 0, 1), v.broadcast_to(2, 3), v.broadcast_to((4, 3)),
            x.where(x > 0, v), x.where(x < 0, 0.5), x.cov(), x.cov(correction=0), x.corrcoef(),
            x.detach().histogram(4), x.detach().histogram(3, range=(-1.0, 1.0), density=True))


@add
@case("F.relu_", "F.elu_", "F.leaky_relu_", "F.hardtanh_", "F.threshold_", "F.selu_", "F.celu_",
      "F.rrelu_", "F.max_pool1d_with_indices", "F.max_pool2d_with_indices",
      "F.max_pool3d_with_indices", "F.adaptive_max_pool1d_with_indices",
      "F.adaptive_max_pool2d_with_indices", "F.adaptive_max_pool3d_with_indices",
      "F.fractional_max_pool2d_with_indices", "F.fractional_max_pool3d_with_indices",
      inputs=(_f32(2, 3, 4, 4),))
def _(lib, x):
    F = lib.nn.functional
    outs = []
    for name, args in [("relu_", ()), ("elu_", (0.5,)), ("leaky_relu_", (0.2,)),
                       ("hardtanh_", (-0.5, 0.5)), ("threshold_", (0.1, -3.0)), ("selu_", ()),
                       ("celu_", (0.7,)), ("rrelu_", (0.1, 0.3, False))]:
        y = x * 1
        outs += [getattr(F, name)(y, *args) is y, y]
    samples = lib.tensor(np.full((2, 3, 3), 0.5, np.float32))
    return outs + [F.max_pool1d_with_indices(x[0], 2), F.max_pool2d_with_indices(x, 2, 1),
                   F.max_pool3d_with_indices(x[None], 2), F.adaptive_max_pool1d_with_indices(x[0], 3),
                   F.adaptive_max_pool2d_with_indices(x, 3), F.adaptive_max_pool3d_with_indices(x, 2),
                   F.fractional_max_pool2d_with_indices(x, 2, output_size=3,
                                                        _random_samples=samples[:, :, :2]),
                   F.fractional_max_pool3d_with_indices(x[None], 2, output_size=(1, 2, 2),
                                                        _random_samples=samples[:1, :2])]


@add
@case("minigrad.asarray", "minigrad.empty_strided", "minigrad.scatter_reduce", "minigrad.vander",
      inputs=(_f32(2, 3),))
def _(lib, x):
    a = np.arange(4.0)
    shared = lib.asarray(a)
    copied = lib.asarray(a, copy=True)
    a[0] = 9.0
    errors = []
    try:
        lib.asarray(a, dtype=lib.float32, copy=False)
    except ValueError:
        errors.append("alias")
    strided = lib.empty_strided((2, 3), (1, 2))
    v = lib.tensor([1.0, 2.0, 3.0])
    return (shared, copied, lib.asarray([1, 2]), lib.asarray([1.5]), lib.asarray(x) is x,
            lib.asarray(x, dtype=lib.float64), lib.asarray(x.detach().numpy()).dtype == lib.float32,
            errors,
            strided.shape, strided.stride(),
            lib.scatter_reduce(x, 1, lib.tensor([[0, 0, 2], [1, 1, 1]]), x * 2, "amax"),
            lib.scatter_reduce(x, 0, lib.tensor([[1, 0, 1]]), x[:1], "sum", include_self=False),
            lib.vander(v), lib.vander(v, 4, increasing=True),
            lib.vander(lib.tensor([1, 2], dtype=lib.int32)),
            lib.vander(v, 1), lib.vander(v, 0).shape)


@add
@case("Tensor.register_post_accumulate_grad_hook")
def _(lib):
    w = lib.tensor([0.5, -1.0], requires_grad=True)
    seen = []
    handle = w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.clone()))
    (w * lib.tensor([3.0, 4.0])).sum().backward()
    (w.square()).sum().backward()
    handle.remove()
    w.sum().backward()
    return seen, w.grad
