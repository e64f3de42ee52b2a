"""`minigrad.nn.functional`: the layers as plain functions (PyTorch's `torch.nn.functional`)."""
from __future__ import annotations

import math

import numpy as np

from minigrad import ops
from minigrad import functional as _core
from minigrad.functional import one_hot  # noqa: F401  (re-exported, as in PyTorch)
from minigrad.random import next_seed as _next_seed
from minigrad.tensor import Tensor
from minigrad.tensor import array_of as _array_of


def linear(input, weight, bias=None):
    """input (..., D_in) @ weight.T (D_in, D_out) + bias -> (..., D_out)."""
    return ops.Linear.apply(input, weight, bias) if bias is not None else ops.Linear.apply(input, weight)


def relu(input, inplace=False):
    """max(x, 0); with inplace=True written into `input` (recorded by autograd, as in PyTorch)."""
    return input.relu_() if inplace else input.relu()


def gelu(input, approximate="none"):
    return input.gelu(approximate)


def tanh(input):
    return input.tanh()


def sigmoid(input):
    return input.sigmoid()


def leaky_relu(input, negative_slope=0.01):
    """x for x > 0, negative_slope * x otherwise (graph attention uses it for its scores)."""
    return ops.LeakyRelu.apply(input, negative_slope=negative_slope)


def softmax(input, dim=-1):
    return input.softmax(dim)


def log_softmax(input, dim=-1):
    return input.log_softmax(dim)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last len(normalized_shape) dims: biased variance, eps inside the root."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input.shape[-len(shape):] != shape:
        raise ValueError(f"layer_norm: input of shape {input.shape} does not end with the "
                         f"normalized shape {shape}")
    if bias is None:
        args = (input,) if weight is None else (input, weight)
    elif weight is None:
        raise ValueError("layer_norm: a bias needs a weight")
    else:
        args = (input, weight, bias)
    return ops.LayerNorm.apply(*args, ndims=len(shape), eps=eps)


def embedding(input, weight, padding_idx=None):
    """Rows of `weight` (V, D) for integer ids of any shape (B, T) -> (B, T, D)."""
    return ops.Embedding.apply(weight, ids=input, padding_idx=padding_idx)


def pad(input, pad, value=0.0):
    """Pad the last dims: `pad` = (left, right) for the last dim, then the one before, ..."""
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: padding {pad} must have an even length of at most "
                         f"2 * {input.ndim}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    from minigrad.creation import full
    from minigrad.functional import cat
    pieces = input
    for d, (a, b) in enumerate(widths):  # concatenate constant blocks on each side
        parts = []
        if a:
            parts.append(full(pieces.shape[:d] + (a,) + pieces.shape[d + 1:], value, dtype=input.dtype))
        parts.append(pieces)
        if b:
            parts.append(full(pieces.shape[:d] + (b,) + pieces.shape[d + 1:], value, dtype=input.dtype))
        if len(parts) > 1:
            pieces = cat(parts, dim=d)
    return pieces


def _check_reduction(reduction, op):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _class_layout(input, target, op):
    """PyTorch's class-id layouts as (M, C) scores and (M,) ids, plus the per-element shape.

    input (C,) takes a target () or (1,); (N, C) takes (N,); (N, C, d1, ...) takes
    (N, d1, ...). Any other target shape is an error: broadcasting (N, 1) against (N,) would
    silently score every row against every target.
    """
    tgt = np.asarray(_array_of(target))
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have a class dim, got a 0-d tensor")
    expected = (input.shape[:1] + input.shape[2:]) if input.ndim > 1 else ()
    if not np.issubdtype(tgt.dtype, np.integer):
        raise TypeError(f"{op}: target must hold class ids (integers) of shape {expected}, got "
                        f"{tgt.dtype} of shape {tgt.shape}")
    if tgt.shape != expected and not (input.ndim == 1 and tgt.shape == (1,)):
        raise ValueError(f"{op}: input of shape {input.shape} and target of shape {tgt.shape} "
                         f"do not match: class ids for this input have shape {expected}")
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    if input.ndim == 1:
        scores = input.reshape(1, -1)
    elif input.ndim == 2:
        scores = input
    else:  # (N, C, d1, ...) -> (N * d1 * ..., C)
        scores = input.permute(0, *range(2, input.ndim), 1).reshape(-1, c)
    return scores, tgt.reshape(-1), expected


def _check_classes(tgt, c, ignore_index, op):
    """Every class id in [0, C) unless it is `ignore_index`."""
    ids = tgt[tgt != ignore_index]
    if ids.size and (ids.min() < 0 or ids.max() >= c):
        bad = ids.max() if ids.max() >= c else ids.min()
        raise IndexError(f"{op}: target {bad} is out of range for {c} classes")


def _broadcasts_to(shape, target_shape):
    try:
        return np.broadcast_shapes(shape, target_shape) == tuple(target_shape)
    except ValueError:
        return False


def dropout(input, p=0.5, training=True, inplace=False):
    """Inverted dropout (see `minigrad.dropout`); with inplace=True written into `input`."""
    if not inplace:
        return _core.dropout(input, p, training)
    return input._assign("dropout_", lambda old: _core.dropout(old, p, training))


def _reduce(loss, reduction, op):
    """The loss per element, or its sum, or its mean; an unknown reduction names the op."""
    _check_reduction(reduction, op)
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Cross entropy of logits (N, C) (or (C,), or (N, C, d...)) against class ids (N,) (or (),
    or (N, d...)), or against class probabilities of the input's shape (a float target).

    Label smoothing and ignore_index combine as in PyTorch: ignored rows count for nothing and
    "mean" divides by the number of rows that are not ignored. A class `weight` (C,) scales
    each row's loss by its target's weight, and "mean" then divides by the summed weights of
    the rows that count (PyTorch's weighted mean); the smoothing term weighs every class.
    """
    if size_average is not None or reduce is not None:
        raise TypeError("cross_entropy: size_average and reduce are deprecated in PyTorch and not "
                        "supported; use reduction='mean' | 'sum' | 'none'")
    _check_reduction(reduction, "cross_entropy")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    tgt = np.asarray(_array_of(target))
    if np.issubdtype(tgt.dtype, np.floating) and tgt.shape == input.shape and input.ndim:
        return _cross_entropy_probabilities(input, target, reduction, label_smoothing)
    logits, ids, shape = _class_layout(input, target, "cross_entropy")
    if weight is not None:
        loss = _weighted_cross_entropy(logits, ids, weight, ignore_index, reduction,
                                       label_smoothing)
        return loss.reshape(shape) if reduction == "none" and input.ndim != 2 else loss
    loss = ops.CrossEntropy.apply(logits, target=ids, ignore_index=ignore_index,
                                  label_smoothing=label_smoothing, reduction=reduction)
    if reduction == "none" and input.ndim != 2:
        loss = loss.reshape(shape)
    return loss


def _weighted_cross_entropy(logits, ids, weight, ignore_index, reduction, eps):
    """Cross entropy of (M, C) logits at ids (M,) with class weights (C,), built from ops."""
    c = logits.shape[1]
    w = weight if isinstance(weight, Tensor) else Tensor._wrap(np.asarray(weight, logits.dtype))
    if w.shape != (c,):
        raise ValueError(f"cross_entropy: weight must have one entry per class ({c},), got "
                         f"shape {w.shape}")
    keep = ids != ignore_index
    safe = np.where(keep, ids, 0)
    if np.any((safe < 0) | (safe >= c)):
        raise IndexError(f"cross_entropy: class ids must be in [0, {c}) or ignore_index "
                         f"{ignore_index}, got {ids[(safe < 0) | (safe >= c)][:5].tolist()}")
    logp = logits.log_softmax(-1)
    w_row = w[safe] * Tensor._wrap(keep.astype(logits.dtype))         # (M,) 0 where ignored
    nll = -logp.gather(1, Tensor._wrap(safe[:, None])).reshape(-1) * w_row
    loss = nll
    if eps:
        smooth = -(logp * w).sum(-1) * Tensor._wrap(keep.astype(logits.dtype))
        loss = nll * (1.0 - eps) + smooth * (eps / c)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / w_row.sum()


def _cross_entropy_probabilities(input, target, reduction, label_smoothing):
    """-sum_c p_c log softmax(x)_c per element; "mean" divides by the number of elements."""
    dim = 1 if input.ndim > 1 else 0
    probs = target if isinstance(target, Tensor) else Tensor._wrap(
        np.asarray(target, dtype=input.dtype))
    if label_smoothing:
        probs = probs * (1.0 - label_smoothing) + label_smoothing / input.shape[dim]
    return _reduce(-(input.log_softmax(dim) * probs).sum(dim), reduction, "cross_entropy")


def nll_loss(input, target, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of log-probabilities (N, C) (or (C,), or (N, C, d...)) at class
    ids (N,) (or (), or (N, d...))."""
    _check_reduction(reduction, "nll_loss")
    logp, ids, shape = _class_layout(input, target, "nll_loss")
    _check_classes(ids, logp.shape[1], ignore_index, "nll_loss")
    keep = ids != ignore_index
    picked = logp.gather(1, np.where(keep, ids, 0)[:, None])[:, 0]
    losses = -picked * Tensor._wrap(keep.astype(input.dtype))
    if reduction == "none":
        return losses.reshape(shape)
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / max(int(keep.sum()), 1) if keep.any() else losses.sum() * np.nan


def mse_loss(input, target, reduction="mean"):
    _check_reduction(reduction, "mse_loss")
    if input.shape != np.shape(_array_of(target)):
        raise ValueError(f"mse_loss: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ")
    d = (input - target) ** 2
    return _reduce(d, reduction, "mse_loss")


def binary_cross_entropy_with_logits(input, target, reduction="mean", pos_weight=None):
    """BCE on logits: (1 - y) x + w softplus(-x), with w = 1 + (pos_weight - 1) y.

    softplus(-x) = log(1 + e^-x) is computed as logsumexp([0, -x]), which never overflows and,
    unlike max(x, 0) + log(1 + e^-|x|), has the right gradient at x = 0.
    """
    _check_reduction(reduction, "binary_cross_entropy_with_logits")
    if input.shape != np.shape(_array_of(target)):
        raise ValueError(f"binary_cross_entropy_with_logits: input shape {input.shape} and "
                         f"target shape {np.shape(_array_of(target))} differ")
    from minigrad.creation import zeros_like
    from minigrad.functional import stack
    softplus_neg = stack([zeros_like(input), -input]).logsumexp(0)
    if pos_weight is not None and not _broadcasts_to(np.shape(_array_of(pos_weight)), input.shape):
        raise ValueError(f"binary_cross_entropy_with_logits: pos_weight of shape "
                         f"{np.shape(_array_of(pos_weight))} does not broadcast to the input's "
                         f"shape {input.shape}")
    weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = (1 - target) * input + weight * softplus_neg
    return _reduce(loss, reduction, "binary_cross_entropy_with_logits")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, training=True):
    """softmax(Q K^T * scale + mask) V with Q (..., L, E), K (..., S, E), V (..., S, Ev).

    PyTorch's SDPA convention: a bool `attn_mask` is True where attention is ALLOWED; a float
    mask is added to the scores. A query whose keys are all masked gets zeros, never NaN.
    """
    out, _ = attention(query, key, value, allowed=_allowed(attn_mask, is_causal, query, key),
                       additive=attn_mask if _is_float(attn_mask) else None,
                       dropout_p=dropout_p, scale=scale, training=training)
    return out


def _is_float(mask):
    return mask is not None and np.issubdtype(np.asarray(_array_of(mask)).dtype, np.floating)


def _allowed(attn_mask, is_causal, query, key):
    allowed = None
    if attn_mask is not None and not _is_float(attn_mask):
        allowed = np.asanyarray(_array_of(attn_mask)).astype(bool, copy=False)  # traceable
    if is_causal:
        causal = np.tril(np.ones((query.shape[-2], key.shape[-2]), dtype=bool))
        allowed = causal if allowed is None else allowed & causal
    return allowed


def attention(q, k, v, allowed=None, additive=None, dropout_p=0.0, scale=None, training=True,
              rel_k=None, rel_v=None):
    """The core of every attention layer; returns (output, weights).

    q (..., L, E), k (..., S, E), v (..., S, Ev); `allowed` a bool array broadcastable to
    (..., L, S), True where a query may look at a key; `additive` a float mask added to scores.
    `rel_k` (L, S, E) and `rel_v` (L, S, Ev) are relative-position embeddings (Shaw et al.,
    2018) added to key j and value j when query i looks at them.
    """
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"attention: queries of shape {q.shape} and keys of shape {k.shape} "
                         f"differ in their last dim")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"attention: {k.shape[-2]} keys but {v.shape[-2]} values "
                         f"(shapes {k.shape} and {v.shape})")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    q = q * scale  # scaling q is cheaper than scaling the L x S scores
    scores = q @ k.transpose(-2, -1)
    if rel_k is not None:  # q_i . a_ij for every (i, j): one batched product per query i
        scores = scores + _per_query(q, rel_k.transpose(-2, -1))
    if additive is not None:  # cast, so a float64 mask does not promote float32 scores
        scores = scores + np.asanyarray(_array_of(additive)).astype(scores.dtype, copy=False)
    # masked_fill(~allowed, -inf), softmax(-1) and dropout as one op: the same numbers and
    # the same seed, one pass each way instead of three
    p = dropout_p if training else 0.0
    if not 0.0 <= p < 1.0:
        raise ValueError(f"attention: dropout_p must be in [0, 1), got {p}")
    weights = ops.MaskedSoftmaxDropout.apply(
        scores, allowed=None if allowed is None else np.asarray(allowed, dtype=bool), p=p,
        seed=_next_seed() if p > 0.0 else 0)
    # the output in the queries' memory order: for heads split from (B, L, E) that is
    # (B, L, H, d_k) memory, so merging the heads back into (B, L, E) is a view, not a copy
    out = ops.MatMul.apply(weights, v, like=_array_of(q))
    if rel_v is not None:
        out = out + _per_query(weights, rel_v)
    return out, weights


def _per_query(x, table):
    """x (..., L, A) times table (L, A, C) separately for every position i: (..., L, C)."""
    lead = x.shape[:-2]
    L, A = x.shape[-2:]
    xi = x.reshape(-1, L, A).permute(1, 0, 2)  # (L, N, A): query position i leads
    out = xi @ table  # (L, N, C)
    return out.permute(1, 0, 2).reshape(lead + (L, table.shape[-1]))


def elu(input, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise (GAT's activation between layers)."""
    from minigrad.functional import where
    # exp of min(x, 0): the branch not taken must not overflow, or its zero gradient times
    # inf would be NaN
    negative = (input.clamp(max=0.0).exp() - 1.0) * alpha
    return where(input > 0, input, negative)


# --- more of torch.nn.functional: activations, normalisation, similarity, losses -------------

def silu(input):
    """x * sigmoid(x), also called swish."""
    return ops.Silu.apply(input)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch).

    log(1 + e^z) is computed as logsumexp([0, z]), which never overflows."""
    from minigrad.creation import zeros_like
    from minigrad.functional import stack, where
    z = input * beta
    smooth = stack([zeros_like(z), z]).logsumexp(0) / beta
    return where(z > threshold, input, smooth)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(||input||_p over dim, eps): unit vectors along dim."""
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine of the angle between x1 and x2 along dim; each norm is floored at eps first."""
    return (normalize(x1, 2.0, dim, eps) * normalize(x2, 2.0, dim, eps)).sum(dim)


def _same_shape(input, target, op):
    if input.shape != np.shape(_array_of(target)):
        raise ValueError(f"{op}: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ")


def l1_loss(input, target, reduction="mean"):
    """Mean (or sum) absolute difference."""
    _same_shape(input, target, "l1_loss")
    return _reduce((input - target).abs(), reduction, "l1_loss")


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) for probabilities p; each log is floored at -100, as
    PyTorch does, so p = 0 or 1 gives a large finite loss instead of inf."""
    _same_shape(input, target, "binary_cross_entropy")
    p = np.asarray(input._array)
    if p.size and (p.min() < 0 or p.max() > 1):
        raise ValueError(f"binary_cross_entropy: input must hold probabilities in [0, 1], got "
                         f"values from {p.min()} to {p.max()} (for logits use "
                         f"binary_cross_entropy_with_logits)")
    if not isinstance(target, Tensor):
        target = Tensor._wrap(np.asarray(target, dtype=input.dtype))
    loss = ops.BinaryCrossEntropy.apply(input, target)
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction, "binary_cross_entropy")


def kl_div(input, target, reduction="mean", log_target=False):
    """KL(target || prediction) for log-probabilities `input`: sum of target (log target - input).

    Elements where target is 0 contribute 0 (the limit of t log t). reduction "batchmean" divides
    the sum by the batch size, which is the true KL divergence per example; "mean" (PyTorch's
    default, kept for compatibility) divides by the number of elements.
    """
    if reduction not in ("mean", "sum", "none", "batchmean"):
        raise ValueError(f"kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                         f"got {reduction!r}")
    if input.shape != np.shape(_array_of(target)):
        raise ValueError(f"kl_div: input shape {input.shape} and target shape "
                         f"{np.shape(_array_of(target))} differ")
    from minigrad.functional import where
    target = target if isinstance(target, Tensor) else Tensor._wrap(np.asarray(target, input.dtype))
    if log_target:
        loss = target.exp() * (target - input)
    else:
        positive = target > 0
        safe = where(positive, target, 1.0)  # log(1) = 0 where target is 0: no NaN
        loss = where(positive, target * (safe.log() - input), 0.0)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction, "kl_div")
