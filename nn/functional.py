"""`minigrad.nn.functional`: the layers as plain functions (PyTorch's `torch.nn.functional`).

The activations, layer norm and dropout are here; embedding in `functional_embedding.py`; the activations built from other
ops (hardtanh, relu6, glu, logsigmoid, ...) are in `functional_activation.py`, the losses in
`functional_loss.py` (the likelihood and margin losses in `functional_loss_likelihood.py` and
`functional_loss_margin.py`, the CTC loss in `ctc.py`), attention in `functional_attention.py`,
convolution in `functional_conv.py`, pooling in `functional_pool.py` (adaptive max pooling in
`adaptive_max_pool.py`, fractional max pooling in `fractional_max_pool.py`, unpooling in
`max_unpool.py`, power-average pooling in `lp_pool.py`),
batch and instance norm in `functional_batch_norm.py`, group and RMS norm in
`functional_norm.py`, local response norm in `local_response_norm.py`, padding in
`functional_pad.py`, interpolation in `functional_resample.py`, affine grids and grid sampling in
`functional_grid.py`, pixel and channel shuffles in `pixel_shuffle.py`, channel dropout in
`channel_dropout.py`, alpha dropout in `alpha_dropout.py`, rrelu in `randomized_relu.py`,
bilinear in `bilinear.py` and bags of embeddings in `embedding_bag.py`, imported here so that
every name is at PyTorch's path.
"""
from __future__ import annotations

from minigrad import out_arg as _out_arg
from minigrad.out_names import OUT_NAMES as _OUT_NAMES
from minigrad import ops
from minigrad import functional as _core
from minigrad.composite import pdist  # re-exported, as in PyTorch
from minigrad.errors import ShapeError
from minigrad.functional import one_hot  # re-exported, as in PyTorch

from .functional_activation import _implicit_dim  # shared with softmin
from .functional_activation import (celu, glu, gumbel_softmax, hardshrink, hardsigmoid,
                                    hardswish, hardtanh, logsigmoid, mish, prelu, relu6, selu,
                                    softmin, softshrink, softsign, tanhshrink, threshold)
from .adaptive_max_pool import adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d
from .alpha_dropout import alpha_dropout, feature_alpha_dropout
from .bilinear import bilinear
from .channel_dropout import dropout1d, dropout2d, dropout3d
from .embedding_bag import embedding_bag
from .functional_embedding import embedding
from .functional_embedding import padding_row as _padding_row  # the layers' check
from .functional_attention import attention, scaled_dot_product_attention
from .functional_batch_norm import batch_norm, instance_norm
from .functional_conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                              conv_transpose3d, fold, unfold)
from .functional_loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                              cosine_embedding_loss, cross_entropy, huber_loss, kl_div, l1_loss,
                              margin_ranking_loss, mse_loss, nll_loss, pairwise_distance,
                              smooth_l1_loss, triplet_margin_loss)
from .ctc import ctc_loss
from .functional_grid import affine_grid, grid_sample
from .functional_loss_likelihood import gaussian_nll_loss, poisson_nll_loss
from .functional_loss_margin import (hinge_embedding_loss, multi_margin_loss,
                                     multilabel_margin_loss, multilabel_soft_margin_loss,
                                     soft_margin_loss, triplet_margin_with_distance_loss)
from .fractional_max_pool import fractional_max_pool2d, fractional_max_pool3d
from .functional_norm import group_norm, rms_norm
from .functional_pad import pad
from .functional_pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                              avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d,
                              max_pool3d)
from .functional_resample import interpolate, upsample
from .functional_forms import (adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices,
                               adaptive_max_pool3d_with_indices, celu_,
                               fractional_max_pool2d_with_indices,
                               fractional_max_pool3d_with_indices, hardtanh_,
                               max_pool1d_with_indices, max_pool2d_with_indices,
                               max_pool3d_with_indices, rrelu_, selu_, threshold_)
from .local_response_norm import local_response_norm
from .lp_pool import lp_pool1d, lp_pool2d, lp_pool3d
from .max_unpool import max_unpool1d, max_unpool2d, max_unpool3d
from .pixel_shuffle import channel_shuffle, pixel_shuffle, pixel_unshuffle
from .randomized_relu import rrelu

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "affine_grid",
           "alpha_dropout", "attention", "avg_pool1d", "avg_pool2d", "avg_pool3d", "batch_norm",
           "bilinear", "binary_cross_entropy", "binary_cross_entropy_with_logits", "celu",
           "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
           "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss", "cosine_similarity",
           "cross_entropy", "ctc_loss", "dropout", "dropout1d", "dropout2d", "dropout3d", "elu",
           "embedding", "embedding_bag", "feature_alpha_dropout", "fold",
           "fractional_max_pool2d", "fractional_max_pool3d", "gaussian_nll_loss",
           "gelu", "glu", "grid_sample", "group_norm", "gumbel_softmax", "hardshrink",
           "hardsigmoid", "hardswish", "hardtanh", "hinge_embedding_loss", "huber_loss",
           "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu",
           "linear", "local_response_norm", "log_softmax", "logsigmoid", "lp_pool1d", "lp_pool2d",
           "lp_pool3d", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d",
           "max_unpool1d", "max_unpool2d", "max_unpool3d", "mish", "mse_loss",
           "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss",
           "nll_loss", "normalize", "one_hot", "pad", "pairwise_distance", "pdist",
           "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu", "relu6",
           "rms_norm", "rrelu", "scaled_dot_product_attention", "selu", "sigmoid", "silu",
           "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink",
           "softsign", "tanh", "tanhshrink", "threshold", "triplet_margin_loss",
           "triplet_margin_with_distance_loss", "unfold", "upsample"]


# --- activations -----------------------------------------------------------------------------

def linear(input, weight, bias=None):
    """input (..., D_in) @ weight.T (D_in, D_out) + bias -> (..., D_out)."""
    return ops.Linear.apply(input, weight, bias) if bias is not None else ops.Linear.apply(input, weight)


def relu(input, inplace=False):
    """max(x, 0); with inplace=True written into `input` (recorded by autograd, as in PyTorch)."""
    return input.relu_() if inplace else input.relu()


def relu_(input):
    """max(x, 0), written into `input`."""
    return input.relu_()


def gelu(input, approximate="none"):
    return input.gelu(approximate)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """x for x > 0, negative_slope * x otherwise (graph attention uses it for its scores)."""
    return _maybe_inplace(input, inplace, "leaky_relu_",
                          lambda x: ops.LeakyRelu.apply(x, negative_slope=negative_slope))


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu written into `input`."""
    return leaky_relu(input, negative_slope, inplace=True)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / sum(exp(x)) along dim; `dtype` casts the input first. Without a dim, PyTorch's
    deprecated implicit choice (with its warning): dim 0 for 0-, 1- and 3-d inputs, else 1."""
    if dim is None:
        dim = _implicit_dim(input, dim, "softmax", _stacklevel)
    return (input if dtype is None else input.to(dtype)).softmax(dim)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(x)) along dim, computed stably; `dim` and `dtype` as in `softmax`."""
    dim = _implicit_dim(input, dim, "log_softmax", _stacklevel)
    return (input if dtype is None else input.to(dtype)).log_softmax(dim)


def silu(input, inplace=False):
    """x * sigmoid(x), also called swish."""
    return _maybe_inplace(input, inplace, "silu_", ops.Silu.apply)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch).

    Computed as PyTorch computes it, log1p(exp(beta x)) / beta: far below zero it is
    exp(beta x) / beta to full precision, where log(1 + ...) would round to 0. The exp takes 0
    where beta x is above the threshold, so that the branch not taken cannot overflow (its zero
    gradient times inf would be NaN)."""
    from minigrad.functional import where
    z = input * beta
    above = z > threshold
    smooth = where(above, 0.0, z).exp().log1p() / beta
    return where(above, input, smooth)


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (GAT's activation between layers).

    Between -1 and 0, exp(x) - 1 is expm1(x), as PyTorch computes it: near 0 the difference
    would keep only the digits of exp(x) beyond 1. Below -1 it is exp(x) - 1, which loses
    nothing there and whose gradient is exp(x) itself: expm1's gradient, computed from its
    output as (expm1(x) + 1), would be 0 far to the left where PyTorch's is exp(x)."""
    from minigrad.functional import where

    def compute(x):
        # each branch takes x clamped to its own range: a branch not taken must not overflow,
        # or its zero gradient times inf would be NaN
        near = x.clamp(min=-1.0, max=0.0).expm1()
        far = x.clamp(max=-1.0).exp() - 1.0
        return where(x > 0, x, where(x > -1.0, near, far) * alpha)
    return _maybe_inplace(input, inplace, "elu_", compute)


def elu_(input, alpha=1.0, scale=1.0, input_scale=1.0):
    """elu written into `input`; PyTorch's kernel also takes `scale` (of the whole output)
    and `input_scale` (of x inside the exponential), as SELU uses them."""
    if scale == 1 and input_scale == 1:
        return elu(input, alpha, inplace=True)
    from minigrad.functional import where
    return input._assign("elu_", lambda x: where(
        x > 0, x * scale, (x * input_scale).expm1() * (alpha * scale)))


def _maybe_inplace(input, inplace, name, compute):
    """compute(input), or with inplace=True written into `input` (recorded by autograd)."""
    return input._assign(name, compute) if inplace else compute(input)


# --- normalisation, similarity, embedding, dropout ----------------------------------

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims: biased variance, eps inside the root."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input._array.shape[-len(shape):] != shape:  # (a tuple: a Size's slice is slower)
        raise ShapeError(f"layer_norm: input of shape {input.shape} does not end with the "
                         f"normalized shape {shape}: Given normalized_shape={list(shape)}, "
                         f"expected input with shape [*, {str(list(shape))[1:-1]}], but got "
                         f"input of size{list(input.shape)}")
    if bias is None:
        args = (input,) if weight is None else (input, weight)
    elif weight is None:
        raise ValueError("layer_norm: a bias needs a weight")
    else:
        args = (input, weight, bias)
    return ops.LayerNorm.apply(*args, ndims=len(shape), eps=eps)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p over dim, eps): unit vectors along dim."""
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along dim; each norm is floored at eps first."""
    return (normalize(x1, 2.0, dim, eps) * normalize(x2, 2.0, dim, eps)).sum(dim)


def dropout(input, p=0.5, training=True, inplace=False):
    """Inverted dropout (see `minigrad.dropout`); with inplace=True written into `input`."""
    return _maybe_inplace(input, inplace, "dropout_", lambda x: _core.dropout(x, p, training))

# PyTorch's out= on every function here whose PyTorch counterpart takes it (out_arg.py)
globals().update(_out_arg.accept_out(globals(), _OUT_NAMES['nn.functional']))
