"""Compatibility cases: the activation modules and functions built from other ops, the
regression and embedding losses and their modules, Embedding.from_pretrained; and the torch
functions composed from other ops (addmm, baddbmm, lerp, cdist)."""
import numpy as np

from compat_table import A, case, f32, watch

CASES = []
add = CASES.append


@add
@case("F.logsigmoid", "F.relu6", "F.hardtanh", "F.hardsigmoid", "F.hardswish", "F.mish",
      "F.softsign", "F.glu", inputs=(f32(3, 6, low=-7, high=7),))
def _(lib, x):
    F = lib.nn.functional
    return (F.logsigmoid(x), F.relu6(x), F.hardtanh(x), F.hardtanh(x, -2.0, 3.5),
            F.hardsigmoid(x), F.hardswish(x), F.mish(x), F.softsign(x), F.glu(x),
            F.glu(x[:2], 0), F.relu6(x * 1.0, inplace=True), F.hardtanh(x * 1.0, inplace=True),
            F.mish(x * 1.0, True), F.hardswish(x * 1.0, True), F.hardsigmoid(x * 1.0, True))


@add
@case("nn.SiLU", "nn.Softplus", "nn.LogSoftmax", "nn.ELU", "nn.Mish", "nn.Hardtanh", "nn.ReLU6",
      "nn.Hardsigmoid", "nn.Hardswish", "nn.LogSigmoid", "nn.Softsign", "nn.GLU",
      inputs=(f32(4, 6, low=-7, high=7),))
def _(lib, x):
    import warnings
    nn = lib.nn
    mods = [nn.SiLU(), nn.SiLU(True), nn.Softplus(), nn.Softplus(0.5, 2), nn.LogSoftmax(1),
            nn.ELU(), nn.ELU(0.3, True), nn.Mish(), nn.Hardtanh(), nn.Hardtanh(-0.5, 0.5),
            nn.ReLU6(), nn.ReLU6(inplace=True), nn.Hardsigmoid(), nn.Hardswish(),
            nn.LogSigmoid(), nn.Softsign(), nn.GLU(), nn.GLU(0)]
    outs = [m(x * 1.0) for m in mods]
    with warnings.catch_warnings():  # both warn that the implicit dim is deprecated
        warnings.simplefilter("ignore")
        outs.append(nn.LogSoftmax()(x))
    return outs + [repr(nn.Sequential(*mods)), nn.ReLU6().max_val]


@add
@case("F.selu", "F.celu", "F.tanhshrink", "F.threshold", "F.hardshrink", "F.softshrink",
      "F.softmin", "F.prelu", inputs=(f32(2, 3, 4, low=-3, high=3), f32(3, low=0, high=0.5)))
def _(lib, x, w):
    import warnings
    F = lib.nn.functional
    with warnings.catch_warnings():  # both warn that the implicit dim is deprecated
        warnings.simplefilter("ignore")
        implicit = F.softmin(x)
    return (F.selu(x), F.celu(x), F.celu(x, 0.5), F.tanhshrink(x), F.threshold(x, 0.5, -1.0),
            F.hardshrink(x), F.hardshrink(x, 1.0), F.softshrink(x), F.softshrink(x, 0.2),
            F.softmin(x, dim=-1), F.softmin(x, 1, dtype=lib.float64), implicit,
            F.prelu(x, w), F.prelu(x, w[:1]), F.selu(x * 1.0, True), F.celu(x * 1.0, 2.0, True),
            F.threshold(x * 1.0, 0.0, 2.0, True))


@add
@case("nn.SELU", "nn.CELU", "nn.Threshold", "nn.Hardshrink", "nn.Softshrink", "nn.Tanhshrink",
      "nn.Softmin", "nn.PReLU", inputs=(f32(2, 4, 3, low=-3, high=3),))
def _(lib, x):
    nn = lib.nn
    prelu = nn.PReLU(4, init=0.1)
    watch(prelu.weight)
    mods = [nn.SELU(), nn.CELU(1.5), nn.Threshold(0.2, 0.0), nn.Hardshrink(0.7),
            nn.Softshrink(), nn.Tanhshrink(), nn.Softmin(dim=1), prelu, nn.PReLU()]
    return [m(x) for m in mods] + [repr(nn.Sequential(*mods)), prelu.weight]


@add
@case("F.gumbel_softmax", compare="meta", inputs=(f32(4, 6),))
def _(lib, logits):
    F = lib.nn.functional
    # the noise comes from each library's own stream: shapes and dtypes are compared
    return (F.gumbel_softmax(logits).detach(), F.gumbel_softmax(logits, 0.5, True).detach(),
            F.gumbel_softmax(logits.double(), dim=0).detach(),
            F.gumbel_softmax(logits, hard=True).sum(-1).detach())


@add
@case("nn.GLU", compare="raises", match="Halving dimension must be even",
      inputs=(f32(2, 3),))
def _(lib, x):
    return lib.nn.GLU()(x)


@add
@case("nn.Hardtanh", compare="raises", match="must be greater than", inputs=())
def _(lib):
    return lib.nn.Hardtanh(2.0, 1.0)


@add
@case("F.smooth_l1_loss", "F.huber_loss", "nn.SmoothL1Loss", "nn.HuberLoss",
      inputs=(f32(5, 3), f32(5, 3), f32(5, 3, grad=False, low=0.5, high=2)))
def _(lib, a, b, w):
    F = lib.nn.functional
    return (F.smooth_l1_loss(a, b), F.smooth_l1_loss(a, b, reduction="none", beta=0.5),
            F.smooth_l1_loss(a, b, None, None, "sum", 0.0), F.huber_loss(a, b),
            F.huber_loss(a, b, "none", 0.3), F.huber_loss(a, b, delta=2.0, weight=w),
            F.huber_loss(a, b, "sum", weight=w), lib.nn.SmoothL1Loss(beta=0.2)(a, b),
            lib.nn.HuberLoss("sum", 0.5)(a, b), lib.nn.HuberLoss()(a, b))


@add
@case("F.cosine_embedding_loss", "nn.CosineEmbeddingLoss", "nn.MarginRankingLoss",
      "nn.TripletMarginLoss", inputs=(f32(6, 4), f32(6, 4), f32(6, 4)))
def _(lib, a, b, c):
    F = lib.nn.functional
    t = lib.tensor([1, -1, -1, 1, 1, -1])
    sign = t.float()
    return (F.cosine_embedding_loss(a, b, t), F.cosine_embedding_loss(a, b, t, 0.3,
                                                                      reduction="none"),
            F.cosine_embedding_loss(a[1], b[1], lib.tensor(-1), margin=-0.2),
            lib.nn.CosineEmbeddingLoss(0.1, reduction="sum")(a, b, t),
            lib.nn.MarginRankingLoss()(a[:, 0], b[:, 0], sign),
            lib.nn.MarginRankingLoss(margin=0.5, reduction="none")(a[:, 1], c[:, 1], sign),
            lib.nn.TripletMarginLoss()(a, b, c),
            lib.nn.TripletMarginLoss(0.5, 1.0, swap=True, reduction="none")(a, b, c),
            repr(lib.nn.TripletMarginLoss()), lib.nn.HuberLoss(delta=0.5).delta)


@add
@case("nn.PairwiseDistance", "nn.CosineSimilarity", inputs=(f32(5, 4), f32(5, 4)))
def _(lib, a, b):
    nn = lib.nn
    return (nn.PairwiseDistance()(a, b), nn.PairwiseDistance(1.0, 0.0, True)(a, b),
            nn.PairwiseDistance(p=3.0)(a, a.detach()), nn.CosineSimilarity()(a, b),
            nn.CosineSimilarity(dim=0, eps=1e-3)(a, b), nn.CosineSimilarity(-1)(a[0], b),
            repr(nn.Sequential(nn.PairwiseDistance(), nn.CosineSimilarity())))


@add
@case("nn.Embedding.from_pretrained", "nn.Embedding",
      inputs=(f32(5, 3), ))
def _(lib, table):
    ids = lib.tensor(np.array([[0, 4, 2], [2, 1, 2]]))
    frozen = lib.nn.Embedding.from_pretrained(table * 1.0)
    free = lib.nn.Embedding.from_pretrained(table * 2.0, freeze=False, padding_idx=2)
    return (frozen(ids), free(ids), frozen.weight.requires_grad, free.weight.requires_grad,
            free.padding_idx, repr(free), free.weight.is_leaf)


# --- torch.addmm, baddbmm, lerp, cdist --------------------------------------------------------

@add
@case("minigrad.addmm", "minigrad.baddbmm",
      inputs=(f32(3, 2), f32(3, 4), f32(4, 2), f32(2, 3, 4), f32(2, 4, 2)))
def _(lib, i, a, b, b1, b2):
    return (lib.addmm(i, a, b), lib.addmm(i[0], a, b, beta=0.5, alpha=-2.0),
            lib.addmm(i, a, b, beta=0), lib.baddbmm(i, b1, b2),
            lib.baddbmm(i[:, :1], b1, b2, beta=2.0, alpha=0.25))


@add
@case("minigrad.lerp", inputs=(f32(3, 4), f32(3, 4), f32(3, 4, low=-0.5, high=1.5)))
def _(lib, s, e, w):
    return lib.lerp(s, e, w), lib.lerp(s, e, 0.3), lib.lerp(s, e[0], 0.9), lib.lerp(s, e, w[0])


@add
@case("minigrad.cdist", inputs=(f32(2, 4, 3), f32(2, 5, 3)))
def _(lib, a, b):
    return (lib.cdist(a, b), lib.cdist(a[0], b[0], p=1.0), lib.cdist(a, b[:1], 3.0),
            lib.cdist(a, b, float("inf")), lib.cdist(a, b, 0.0),
            lib.cdist(a, b, compute_mode="donot_use_mm_for_euclid_dist"))


@add
@case("minigrad.cdist", compare="raises", match="same number of columns",
      inputs=(f32(2, 3), f32(2, 4)))
def _(lib, a, b):
    return lib.cdist(a, b)


@add
@case("minigrad.log1p", "minigrad.expm1", inputs=(f32(3, 4, low=-0.9, high=3),))
def _(lib, x):
    tiny = lib.tensor([1e-9, -3e-8, 0.0, 2e-12])
    return (lib.log1p(x), lib.expm1(x), lib.log1p(tiny), lib.expm1(tiny),
            lib.log1p(lib.tensor([0, 3])), lib.expm1(x.double()))


def _own(*shape, grad=True, scale=2.0):
    """An input drawn from its own stream, so the cases after these keep their inputs."""
    return A(np.random.default_rng(sum(shape) + 100 * len(shape)).uniform(
        -scale, scale, shape).astype(np.float32), grad)


@add
@case("Tensor.addmm", "Tensor.baddbmm", "Tensor.lerp", "Tensor.log1p", "Tensor.expm1",
      inputs=(_own(3, 2), _own(3, 4), _own(4, 2), _own(2, 4, 2), _own(2, 3, scale=0.5)))
def _(lib, i, a, b, b2, small):
    b1 = a.reshape(3, 4).unsqueeze(0).expand(2, 3, 4)
    small = small.t()
    return (i.addmm(a, b), i.addmm(a, b, beta=0.5, alpha=2.0), i.baddbmm(b1, b2, alpha=0.5),
            i.lerp(small, 0.25), i.lerp(small, small.abs()), small.log1p(),
            (small * 1e-6).log1p(), small.expm1())


@add
@case("Tensor.lerp_", inputs=(_own(3, 2, grad=False), _own(2, 3)))
def _(lib, ema, p):
    p = p.t()
    with lib.no_grad():
        ema.lerp_(p, 0.1)                 # the weight average's update
    return ema, p.clone().lerp_(ema, 0.5)


@add
@case("Tensor.bincount", "minigrad.bincount")
def _(lib):
    x = lib.tensor([1, 3, 3, 0, 7])
    return (x.bincount(), lib.bincount(x, minlength=10), x.bincount(lib.tensor([.5, 1., 2., 3., 4.])),
            x.bincount(lib.tensor([1., 2., 3., 4., 5.], dtype=lib.float64)),
            lib.tensor([], dtype=lib.int64).bincount(minlength=3))


@add
@case("minigrad.bincount", compare="raises", match="non-negative")
def _(lib):
    return lib.bincount(lib.tensor([1, -1]))


# --- EmbeddingBag (its own stream: the shared one's later draws stay as they were) ------------

@add
@case("nn.EmbeddingBag", "nn.EmbeddingBag.from_pretrained", "F.embedding_bag",
      inputs=(A(np.random.default_rng(31).standard_normal((6, 3)).astype(np.float32), grad=True),
              A(np.random.default_rng(32).standard_normal(7).astype(np.float32), grad=True)))
def _(lib, table, weights):
    F = lib.nn.functional
    flat, offsets = lib.tensor([1, 4, 4, 0, 5, 2, 2]), lib.tensor([0, 2, 2, 5])
    mean = lib.nn.EmbeddingBag.from_pretrained(table * 1.0, freeze=False)
    biggest = lib.nn.EmbeddingBag.from_pretrained(table * 2.0, mode="max", padding_idx=4,
                                                  include_last_offset=True)
    return (mean(flat.reshape(1, 7)), mean(flat, offsets), biggest(flat, lib.tensor([0, 3, 7])),
            F.embedding_bag(flat, table, offsets, mode="sum", per_sample_weights=weights),
            F.embedding_bag(flat.reshape(7, 1), table, padding_idx=2), repr(mean), repr(biggest),
            mean.weight.requires_grad, biggest.weight.requires_grad, biggest.padding_idx,
            lib.nn.EmbeddingBag(4, 2, mode="sum").weight.shape)
