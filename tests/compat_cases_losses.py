"""Compatibility cases: the likelihood and margin losses, the CTC loss, affine_grid,
grid_sample and pdist, in functional and module form, every reduction, and their errors."""
import warnings

import numpy as np

from compat_table import A, case, f32, f64

CASES = []
add = CASES.append

REDUCTIONS = ("none", "mean", "sum")


# --- Poisson and Gaussian negative log-likelihoods -------------------------------------------

@add
@case("F.poisson_nll_loss", "nn.PoissonNLLLoss",
      inputs=(f32(3, 4), A(np.random.default_rng(1).integers(0, 6, (3, 4)).astype(np.float32))))
def _(lib, x, counts):
    F, nn = lib.nn.functional, lib.nn
    rate = x.exp() + 0.1
    return ([F.poisson_nll_loss(x, counts, reduction=r) for r in REDUCTIONS]
            + [F.poisson_nll_loss(x, counts, full=True, reduction="none"),
               F.poisson_nll_loss(rate, counts, log_input=False),
               F.poisson_nll_loss(rate, counts, False, True, None, 1e-3, None, "sum"),
               nn.PoissonNLLLoss(log_input=False, full=True, reduction="none")(rate, counts),
               nn.PoissonNLLLoss()(x[0], counts[0]), F.poisson_nll_loss(x[:0], counts[:0])])


@add
@case("F.gaussian_nll_loss", "nn.GaussianNLLLoss",
      inputs=(f32(4, 3), f32(4, 3), f32(4, 3, low=0.0, high=2.0), f32(4, 1, low=0.1, high=2.0),
              f32(4, low=0.1, high=2.0)))
def _(lib, mu, y, var, var_col, var_row):
    F, nn = lib.nn.functional, lib.nn
    tiny = var * lib.tensor([1.0, 1e-9, 1.0])  # clamped at eps, its gradient passed through
    return ([F.gaussian_nll_loss(mu, y, var, reduction=r) for r in REDUCTIONS]
            + [F.gaussian_nll_loss(mu, y, var_col, full=True),
               F.gaussian_nll_loss(mu, y, var_row, reduction="none"),
               F.gaussian_nll_loss(mu, y, tiny, eps=1e-3, reduction="none"),
               F.gaussian_nll_loss(mu, y, 0.5, reduction="sum"),
               nn.GaussianNLLLoss(full=True, eps=1e-4, reduction="none")(mu, y, var_col),
               nn.GaussianNLLLoss()(mu[0], y[0], var[0])])


@add
@case("F.gaussian_nll_loss", compare="raises", match="var is of incorrect size",
      inputs=(f32(4, 3), f32(4, 3), f32(3, 4)))
def _(lib, mu, y, var):
    return lib.nn.functional.gaussian_nll_loss(mu, y, var.abs())


@add
@case("F.gaussian_nll_loss", compare="raises", match="negative entry",
      inputs=(f32(4, 3), f32(4, 3), f32(4, 3)))
def _(lib, mu, y, var):
    return lib.nn.functional.gaussian_nll_loss(mu, y, var - 3)


# --- margin losses ------------------------------------------------------------------------------

@add
@case("F.soft_margin_loss", "nn.SoftMarginLoss", "F.hinge_embedding_loss",
      "nn.HingeEmbeddingLoss", inputs=(f32(3, 5, low=-3, high=3), f32(6, low=0.0, high=3.0)))
def _(lib, x, d):
    F, nn = lib.nn.functional, lib.nn
    y = lib.tensor([[1.0, -1.0, 1.0, 1.0, -1.0]] * 3)
    yd = lib.tensor([1.0, -1.0, -1.0, 1.0, 0.0, 2.0])  # others take both terms, as in PyTorch
    return ([F.soft_margin_loss(x, y, reduction=r) for r in REDUCTIONS]
            + [F.hinge_embedding_loss(d, yd, reduction=r) for r in REDUCTIONS]
            + [nn.SoftMarginLoss(reduction="none")(x[0], y[0]),
               nn.HingeEmbeddingLoss(margin=2.0)(d, yd),
               F.hinge_embedding_loss(d.reshape(2, 3), yd.reshape(2, 3), 0.5, reduction="none")])


@add
@case("F.multilabel_soft_margin_loss", "nn.MultiLabelSoftMarginLoss",
      inputs=(f32(4, 5, low=-3, high=3), f32(5, grad=False, low=0.2, high=2.0)))
def _(lib, x, w):
    F, nn = lib.nn.functional, lib.nn
    y = lib.tensor([[1, 0, 1, 0, 0], [0, 0, 0, 0, 1], [1, 1, 1, 1, 1], [0, 1, 0, 1, 0]]).float()
    return ([F.multilabel_soft_margin_loss(x, y, reduction=r) for r in REDUCTIONS]
            + [F.multilabel_soft_margin_loss(x, y, w, reduction="none"),
               nn.MultiLabelSoftMarginLoss(weight=w, reduction="sum")(x, y),
               nn.MultiLabelSoftMarginLoss()(x[1], y[1])])


@add
@case("F.multi_margin_loss", "nn.MultiMarginLoss",
      inputs=(f32(5, 4), f32(4, grad=False, low=0.5, high=2.0), f32(4)))
def _(lib, x, w, row):
    F, nn = lib.nn.functional, lib.nn
    y = lib.tensor([0, 3, 1, 1, 2])
    return ([F.multi_margin_loss(x, y, reduction=r) for r in REDUCTIONS]
            + [F.multi_margin_loss(x, y, p=2, margin=0.5, reduction="none"),
               F.multi_margin_loss(x, y, weight=w, reduction="sum"),
               nn.MultiMarginLoss(p=2, weight=w)(x, y),
               nn.MultiMarginLoss(reduction="none")(row, lib.tensor(2)),
               nn.MultiMarginLoss(reduction="none")(row, lib.tensor([2])),
               F.multi_margin_loss(x[:0], y[:0], reduction="none")])


@add
@case("F.multi_margin_loss", compare="raises", match="only p == 1 and p == 2",
      inputs=(f32(5, 4),))
def _(lib, x):
    return lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 3, 1, 1, 2]), p=3)


@add
@case("F.multi_margin_loss", compare="raises", match="inconsistent target size",
      inputs=(f32(5, 4),))
def _(lib, x):
    return lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 3, 1]))


@add
@case("F.multilabel_margin_loss", "nn.MultiLabelMarginLoss", inputs=(f32(4, 5), f32(5)))
def _(lib, x, row):
    F, nn = lib.nn.functional, lib.nn
    y = lib.tensor([[3, 0, -1, 1, 1], [4, 4, 1, -1, -1], [0, 1, 2, 3, 4], [-1, 2, 2, 2, 2]])
    return ([F.multilabel_margin_loss(x, y, reduction=r) for r in REDUCTIONS]
            + [nn.MultiLabelMarginLoss(reduction="none")(row, y[0]),
               nn.MultiLabelMarginLoss()(row, y[1])])


@add
@case("F.multilabel_margin_loss", compare="raises", match="inconsistent target size",
      inputs=(f32(4, 5),))
def _(lib, x):
    return lib.nn.functional.multilabel_margin_loss(x, lib.tensor([[3, 0, -1, 1]] * 4))


@add
@case("F.triplet_margin_with_distance_loss", "nn.TripletMarginWithDistanceLoss",
      inputs=(f32(5, 3), f32(5, 3), f32(5, 3)))
def _(lib, a, p, n):
    F, nn = lib.nn.functional, lib.nn

    def cosine_distance(x, y):
        return 1.0 - F.cosine_similarity(x, y)
    module = nn.TripletMarginWithDistanceLoss(distance_function=nn.PairwiseDistance(p=1.0),
                                              margin=0.5, swap=True)
    return ([F.triplet_margin_with_distance_loss(a, p, n, reduction=r) for r in REDUCTIONS]
            + [F.triplet_margin_with_distance_loss(a, p, n, distance_function=cosine_distance,
                                                   margin=0.3, swap=True, reduction="none"),
               module(a, p, n), nn.TripletMarginWithDistanceLoss()(a, p, n),
               len(list(nn.TripletMarginWithDistanceLoss().children()))])


@add
@case("nn.TripletMarginWithDistanceLoss", compare="raises", match="greater than 0")
def _(lib):
    return lib.nn.TripletMarginWithDistanceLoss(margin=0.0)


@add
@case("F.multi_margin_loss", compare="raises", match="target out of range", inputs=(f32(5, 4),))
def _(lib, x):
    return lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 3, 1, 1, 4]))


# --- CTC --------------------------------------------------------------------------------------

_ctc_rng = np.random.default_rng(7)
_CTC_TARGETS = _ctc_rng.integers(1, 5, (3, 4))
_CTC_TARGETS[0, 1] = _CTC_TARGETS[0, 0]  # a repeated label needs a blank between


@add
@case("F.ctc_loss", "nn.CTCLoss", inputs=(f32(9, 3, 5), A(_CTC_TARGETS)), rtol=1e-5,
      atol=1e-5)
def _(lib, x, targets):
    F, nn = lib.nn.functional, lib.nn
    lp = x.log_softmax(2)
    il, tl = lib.tensor([9, 7, 5]), lib.tensor([4, 2, 0])
    flat = lib.cat([targets[0, :4], targets[1, :2]])
    return ([F.ctc_loss(lp, targets, il, tl, reduction=r) for r in REDUCTIONS]
            + [F.ctc_loss(lp, flat, il, tl, reduction="none"),
               F.ctc_loss(lp, targets, (9, 7, 5), (4, 2, 0), reduction="sum"),
               nn.CTCLoss(blank=4, reduction="none")(lp, targets.clamp(max=3), il, tl),
               nn.CTCLoss(zero_infinity=True)(lp, targets, lib.tensor([3, 7, 5]), tl),
               nn.CTCLoss(reduction="none")(lp, targets, lib.tensor([3, 7, 5]), tl),
               F.ctc_loss(lp[:, 0], targets[0], lib.tensor(9), lib.tensor(4), reduction="none")])


@add
@case("F.ctc_loss", compare="raises", match="input_lengths to have value at most 9",
      inputs=(f32(9, 2, 5),))
def _(lib, x):
    return lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                                      lib.tensor([10, 9]), lib.tensor([2, 2]))


@add
@case("F.ctc_loss", compare="raises", match="size at least 3 at dimension 1",
      inputs=(f32(9, 2, 5),))
def _(lib, x):
    return lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                                      lib.tensor([9, 9]), lib.tensor([3, 2]))


@add
@case("F.ctc_loss", compare="raises", match="blank must be in label range",
      inputs=(f32(9, 2, 5),))
def _(lib, x):
    return lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor([[1, 2], [3, 3]]),
                                      lib.tensor([9, 9]), lib.tensor([2, 2]), blank=5)


# --- affine_grid, grid_sample, pdist -----------------------------------------------------------

_THETA = np.array([[[0.9, -0.3, 0.1], [0.2, 1.1, -0.2]], [[1.3, 0.4, 0.3], [-0.5, 0.7, 0.6]]],
                  np.float32)


@add
@case("F.affine_grid", "F.grid_sample",
      inputs=(A(_THETA, grad=True), f32(2, 3, 5, 6), f64(1, 3, 4, 2, low=-1.5, high=1.5),
              f64(1, 2, 3, 4)), atol=1e-5)  # grids a rounding apart in float32 (bmm's order)
def _(lib, theta, img, grid64, img64):
    F = lib.nn.functional
    out = []
    for align in (False, True):
        grid = F.affine_grid(theta, (2, 3, 4, 7), align_corners=align)
        out.append(grid)
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                out.append(F.grid_sample(img, grid, mode, pad, align))
                out.append(F.grid_sample(img64, grid64, mode, pad, align))
    with warnings.catch_warnings():  # both warn that the default align_corners changed
        warnings.simplefilter("ignore")
        out.append(F.grid_sample(img, F.affine_grid(theta, img.size())))
    out.append(F.affine_grid(lib.tensor([[[1.0, 0.2, 0.0, 0.1], [0.0, 0.9, 0.1, 0.0],
                                          [0.3, 0.0, 1.1, -0.2]]]), (1, 2, 3, 2, 4),
                             align_corners=False))
    out.append(F.grid_sample(img[:0], grid[:0], align_corners=False))
    return out


@add
@case("F.grid_sample", compare="raises", match="same batch size",
      inputs=(f32(2, 3, 5, 6), f32(3, 4, 4, 2)))
def _(lib, img, grid):
    return lib.nn.functional.grid_sample(img, grid, align_corners=False)


@add
@case("F.affine_grid", compare="raises", match="Nx2x3",
      inputs=(f32(2, 3, 3),))
def _(lib, theta):
    return lib.nn.functional.affine_grid(theta, (2, 1, 4, 4), align_corners=False)


@add
@case("minigrad.pdist", "F.pdist", inputs=(f32(5, 3), f64(4, 2), f32(1, 3)))
def _(lib, x, x64, one):
    F = lib.nn.functional
    dup = lib.cat([x[:2], x[:1]])  # a zero distance: gradient 0
    return (lib.pdist(x), F.pdist(x, p=1.0), lib.pdist(x, 3.0), lib.pdist(x, float("inf")),
            lib.pdist(x, 0.0), lib.pdist(x64), lib.pdist(dup), lib.pdist(one))


@add
@case("minigrad.pdist", compare="raises", match="2D", inputs=(f32(2, 3, 4),))
def _(lib, x):
    return lib.pdist(x)
