"""Fused fast paths of the layers: one op doing the work of several modules, with their numbers.

A Transformer layer calls Dropout right after a ReLU, or right before a residual add (and,
post-norm, a LayerNorm). Each pair or triple reads and writes whole activations several times;
the functions here do it in one op, one pass each way, drawing the dropout mask exactly as
`functional.dropout` would (PyTorch's, in the op's pass, by default; under
random.use_pytorch_dropout(False), the hash's seed), so that the numbers are those of the
separate calls bit for bit.
None is in PyTorch, which has fast paths of its own inside its Transformer layers. The
helpers at the end are those fast paths for this package's layers: they use a fused op only
when the modules it stands in for are the plain ones, training, and unwatched by hooks.
`PackedAttention` is multi-head attention's own: from the packed in-projection's output to
the concatenated heads in one op (MultiheadAttention calls it in training). `EmbedPositions`
is a Transformer's input, embeddings scaled, positions added and dropout, in one op (the
translation model calls it through `embed_positions` in training).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import kernels, ops
from minigrad.autograd.op import Op
from minigrad.graph_rules import rule, saved_input
from minigrad.jvp_rules import jvp_rule
from minigrad.ops import matmul as _matmul
from minigrad.ops.matmul import mm
from minigrad.random import engine, next_seed, pytorch_dropout_enabled
from minigrad.random_draws import dropout_drawn, dropout_mask, fused_dropout
from minigrad.tensor import array_of

from . import module_hooks
from . import functional as F
from .layers import Dropout, Embedding
from .normalization import LayerNorm
from .positional import PositionalEncoding


def relu_dropout(input, p=0.5, training=True):
    """dropout(relu(input), p, training) as one op, one pass each way (not in PyTorch).

    It draws its seed as `dropout` does, so it gives the very numbers of the two calls."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"relu_dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return F.relu(input)
    if pytorch_dropout_enabled():  # PyTorch's mask, drawn in the op's pass where it can be
        gen = engine()
        if not fused_dropout(gen, np.asarray(array_of(input))):
            return F.dropout(F.relu(input), p)
        return ops.ReluDropout.apply(input, p=p, seed=0, gen=gen)
    return ops.ReluDropout.apply(input, p=p, seed=next_seed())


def _drawing(input, residual):
    """The generator to draw PyTorch's mask of dropout(input) from, inside a residual
    connection's fused op (random.use_pytorch_dropout), when the op's one pass takes input
    and residual; None when the op uses the hash's mask (the setting off); False when the
    pass cannot take them (another dtype, a layout with gaps, no view of the generator's
    state): the separate ops then draw the mask."""
    if not pytorch_dropout_enabled():
        return None
    gen = engine()
    arr, res = np.asarray(array_of(input)), np.asarray(array_of(residual))
    if not (fused_dropout(gen, arr) and res.shape == arr.shape and res.dtype == arr.dtype):
        return False
    return gen


def dropout_add(input, residual, p, training=True):
    """residual + dropout(input, p) as one op (not in PyTorch): a pre-norm residual
    connection, with the mask (PyTorch's, or the hash's seed) `dropout` would draw, so the
    very numbers of the two calls."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_add: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return residual + input
    gen = _drawing(input, residual)
    if gen is False:
        return residual + F.dropout(input, p)
    if gen is not None:   # PyTorch's mask, drawn in the pass that adds
        return ops.DropoutAdd.apply(residual, input, p=p, seed=0, gen=gen)
    return ops.DropoutAdd.apply(residual, input, p=p, seed=next_seed())


def dropout_add_layer_norm(input, residual, p, weight=None, bias=None, eps=1e-5, training=True):
    """layer_norm(residual + dropout(input, p), (D,), weight, bias, eps) as one op (not in
    PyTorch): a post-norm residual connection. It draws its mask (PyTorch's, or the hash's
    seed) as `dropout` does, so it gives the very numbers of the three calls. input and
    residual (..., D); weight, bias (D,)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_add_layer_norm: p must be in [0, 1), got {p}")
    d = residual.shape[-1:]
    if not training or p == 0.0:
        return F.layer_norm(residual + F.dropout(input, p, training), d, weight, bias, eps)
    gen = _drawing(input, residual)
    if gen is False:
        return F.layer_norm(residual + F.dropout(input, p), d, weight, bias, eps)
    if bias is not None and weight is None:
        raise ValueError("dropout_add_layer_norm: a bias needs a weight")
    if gen is not None:   # PyTorch's mask, drawn in the pass that makes the sum
        return ops.DropoutAddLayerNorm.apply(residual, input, weight, bias, p=p, seed=0,
                                             eps=eps, gen=gen)
    return ops.DropoutAddLayerNorm.apply(residual, input, weight, bias, p=p, seed=next_seed(),
                                         eps=eps)


# --- the layers' fast paths (transformer.py calls them) ---------------------------------

def _unhooked(module):
    """True when nothing watches `module` run, so a fused op may stand in for its call."""
    return not module_hooks.any_hooks(module)


def _plain(drop):
    """True when the Dropout module `drop` is training, with p > 0, plain and unwatched."""
    return (drop.training and type(drop) is Dropout and drop.p > 0 and not drop.inplace
            and _unhooked(drop))


def activation_dropout(layer, h):
    """layer.dropout(layer.activation(h)); ReLU then dropout runs as one fused op when training
    (the same numbers, the same seed or PyTorch's mask), the hidden layer of every
    feed-forward network."""
    if layer.activation is F.relu and _plain(layer.dropout):
        return relu_dropout(h, layer.dropout.p)
    return layer.dropout(layer.activation(h))


def add_residual(drop, x, sub):
    """x + drop(sub), a pre-norm residual connection; one fused op when training."""
    if _plain(drop) and x.shape == sub.shape and x.dtype == sub.dtype:
        return dropout_add(sub, x, drop.p)
    return x + drop(sub)


def add_norm(norm, drop, x, sub):
    """norm(x + drop(sub)), a post-norm residual connection; one fused op when training."""
    if (_plain(drop) and type(norm) is LayerNorm and len(norm.normalized_shape) == 1
            and _unhooked(norm) and x.shape == sub.shape and x.dtype == sub.dtype):
        return dropout_add_layer_norm(sub, x, drop.p, norm.weight, norm.bias, norm.eps)
    return norm(x + drop(sub))


# --- a Transformer's input: embeddings scaled, positions added, dropout ----------------------

class EmbedPositions(Op):
    """dropout(weight[ids] * scale + pe, p) as one op (not in PyTorch): a Transformer's input,
    its token embeddings times sqrt(d_model) plus the positional encoding, then dropout.

    weight (V, D); ids (B, T) integers (a keyword: index data); pe (T, D), a constant of
    weight's dtype; output (B, T, D). It computes what Embedding, Mul, Add and Dropout compute,
    in their order and with their roundings, so the numbers are theirs bit for bit; what it
    saves is three nodes and two (B, T, D) arrays. With `gen` (a Generator: the default,
    random.use_pytorch_dropout) the mask is PyTorch's, drawn from it in the pass that applies
    it (that of dropout of the (B, T, D) sum) and kept for backward as ctx.mask; without, it
    is the hash's, regenerated from the seed backward (as the fused dropouts do). Backward
    scatters dropout(g) * scale into the table, the padding row left untrained (as
    Embedding's backward)."""

    takes_indices = True

    @staticmethod
    def forward(ctx, weight, ids=None, pe=None, scale=1.0, p=0.0, seed=0, padding_idx=None,
                gen=None):
        # Embedding's own checks and lookup; they leave on ctx what its backward reads
        x = ops.Embedding.forward(ctx, weight, ids=ids, padding_idx=padding_idx)
        ctx.weight, ctx.pe, ctx.p, ctx.seed, ctx.mask = weight, pe, p, seed, None
        ctx.scale = scale = weight.dtype.type(scale)   # the 0-d operand Mul multiplies by
        np.multiply(x, scale, out=x)                   # (x is the lookup's own copy)
        np.add(x, pe, out=x)
        if gen is not None:
            out, ctx.mask = dropout_drawn(gen, x, p)
            return out
        return kernels.dropout(x, p, seed)

    @staticmethod
    def backward(ctx, g):
        if ctx.mask is not None:
            g = np.multiply(g, ctx.mask, order="C")
        else:
            g = kernels.dropout(np.ascontiguousarray(g), ctx.p, ctx.seed)
        return ops.Embedding.backward(ctx, np.multiply(g, ctx.scale, out=g))


def _embed_positions_separately(weight, ids, pe, scale, p, seed, padding_idx, mask=None):
    """EmbedPositions by the separate differentiable ops (its rules use them); `mask`: the
    kept one (PyTorch's), instead of the seed's."""
    x = ops.Embedding.apply(weight, ids=ids, padding_idx=padding_idx) * float(scale)
    return ops.Dropout.apply(x + pe, p=p, seed=seed, mask=mask)


@rule(EmbedPositions)
def _embed_positions_rule(ctx, g):
    """The separate ops' own rules, through a second trace of them (the op is linear in the
    table, so any table of its shape traces the same gradient)."""
    from minigrad.autograd import grad
    from minigrad.grad_mode import enable_grad
    w = saved_input(ctx, 0, ctx.weight)
    with enable_grad():
        out = _embed_positions_separately(w, ctx.ids, ctx.pe, ctx.scale, ctx.p, ctx.seed,
                                          ctx.padding_idx, ctx.mask)
        (gw,) = grad(out, [w], g, create_graph=True)
    return gw


@jvp_rule(EmbedPositions)
def _embed_positions_jvp(ctx, out, tangents):
    """dropout(t[ids] * scale): pe is a constant."""
    t = tangents[0]
    if t is None:
        return None
    t = np.multiply(t[ctx.ids], ctx.scale)
    if ctx.mask is not None:
        return np.multiply(t, ctx.mask, out=t)
    return kernels.dropout(t, ctx.p, ctx.seed)


def embed_positions(embedding, pos, ids, scale, offset=0):
    """pos(embedding(ids) * scale, offset=offset): the input of a Transformer with batch-first
    ids (B, T); one EmbedPositions op when training, with plain, unwatched modules (the same
    numbers, the same dropout mask: PyTorch's, or the hash's seed), the separate modules
    otherwise."""
    # (ids a plain array only: an ONNX export's traced ids take the modules, which trace)
    if (pos.training and pos.p > 0 and type(pos) is PositionalEncoding and pos.batch_first
            and type(embedding) is Embedding and embedding.max_norm is None
            and not embedding.scale_grad_by_freq and _unhooked(embedding) and _unhooked(pos)
            and type(ids) is np.ndarray and ids.ndim == 2 and ids.dtype.kind in "iu"
            and 0 <= offset and offset + ids.shape[1] <= pos.max_len
            and embedding.weight.shape[1] == pos.d_model):
        w = embedding.weight
        pe = pos.pe._array[offset:offset + ids.shape[1]].astype(w.dtype, copy=False)
        if not pytorch_dropout_enabled():
            return EmbedPositions.apply(w, ids=ids, pe=pe, scale=scale, p=pos.p,
                                        seed=next_seed(), padding_idx=embedding.padding_idx)
        gen = engine()
        if fused_dropout(gen, pe):   # (pe: of the output's dtype, C-contiguous as it is)
            return EmbedPositions.apply(w, ids=ids, pe=pe, scale=scale, p=pos.p, seed=0,
                                        padding_idx=embedding.padding_idx, gen=gen)
    return pos(embedding(ids) * scale, offset=offset)


# --- multi-head attention from packed projections ------------------------------------------

def _heads(x, i, num_heads, E):
    """Block i of the E-wide blocks of x (B, T, n*E) as heads (B, H, T, d_k): a view when
    x's last dim is contiguous (a reshape copies otherwise, which reading can afford)."""
    B, T = x.shape[:2]
    return x[..., i * E:(i + 1) * E].reshape(B, T, num_heads, E // num_heads).transpose(0, 2, 1, 3)


def _qkv(qkv, kv, num_heads):
    """Q, K, V heads (B, H, T, d_k) of PackedAttention's inputs: all three from qkv
    (B, L, 3E), or Q from qkv (B, L, E) and K, V from kv (B, S, 2E)."""
    if kv is None:
        E = qkv.shape[-1] // 3
        return tuple(_heads(qkv, i, num_heads, E) for i in range(3))
    E = qkv.shape[-1]
    return _heads(qkv, 0, num_heads, E), _heads(kv, 0, num_heads, E), _heads(kv, 1, num_heads, E)


class PackedAttention(Op):
    """Multi-head attention between the in-projection and the out-projection, as one op:
    concat_h(dropout(softmax(Q_h K_h^T / sqrt(d_k), masked where not `allowed`), p) V_h).

    Inputs: qkv (B, L, 3E), the three projections of one input as one product's output
    (self-attention), or qkv (B, L, E) the queries and kv (B, S, 2E) the keys and values
    (cross-attention). Output (B, L, E). `allowed` is a bool array broadcastable to (B, H, L,
    S) or None. It makes the calls F.attention and the head splits and merges make, in the
    same order, so Q, K and V get the bits the separate ops give them; what it saves is the
    dozen nodes of those ops and the sum of three input gradients, since the gradients of
    Q, K and V are written into one array, the in-projection's output gradient.
    """

    @staticmethod
    def forward(ctx, qkv, kv=None, num_heads=1, allowed=None, p=0.0, seed=0, gen=None):
        # `gen`: a Generator to draw PyTorch's mask of the weights from (use_pytorch_dropout),
        # in C order of (B, H, L, S), PyTorch's (B * H, L, S); kept for backward as ctx.mask
        q, k, v = _qkv(qkv, kv, num_heads)
        ctx.num_heads, ctx.allowed, ctx.p, ctx.seed = num_heads, allowed, p, seed
        ctx.scale = scale = 1.0 / math.sqrt(q.shape[-1])
        qs = np.multiply(q, scale)  # scaling q is cheaper than scaling the L x S scores
        scores = mm(qs, k.swapaxes(-1, -2))
        ctx.mask = None
        if gen is None:
            y, w = kernels.masked_softmax_dropout(scores, allowed, p, seed)
        else:
            y, _ = kernels.masked_softmax_dropout(scores, allowed, 0.0, 0)
            if fused_dropout(gen, y):
                w, ctx.mask = dropout_drawn(gen, y, p)
            else:
                ctx.mask = dropout_mask(gen, y.shape, p, y.dtype, like=y)
                w = np.multiply(y, ctx.mask)
        out = mm(w, v, like=qs)  # in qs's memory order, (B, L, H, d_k): the merge is a view
        ctx.save_for_backward(qkv, kv, qs, y, w if p else None)
        B, H, L, d = out.shape
        return out.transpose(0, 2, 1, 3).reshape(B, L, H * d)

    @staticmethod
    def backward(ctx, g):
        qkv, kv, qs, y, w = ctx.saved
        w = y if w is None else w
        _, k, v = _qkv(qkv, kv, ctx.num_heads)
        B, L, E = g.shape
        g = g.reshape(B, L, ctx.num_heads, E // ctx.num_heads).transpose(0, 2, 1, 3)
        gqkv = np.empty(qkv.shape, qkv.dtype)
        gkv = None if kv is None else np.empty(kv.shape, kv.dtype)
        gq, gk, gv = _qkv(gqkv, gkv, ctx.num_heads)  # views: written in place below
        # Each product's result is read by the very next call, while it is still in L2:
        # gV first, so that no product (w and gV, 1.7 MB of traffic) runs between gW and
        # the softmax's backward that reads it (the products are independent: same bits)
        _matmul.product(w.swapaxes(-1, -2), g, gv)  # (the module's name: timers wrap it)
        gw = mm(g, v.swapaxes(-1, -2), like=w)
        if ctx.mask is not None:   # PyTorch's mask: the dropout's backward, then softmax's
            np.multiply(gw, ctx.mask, out=gw)
            gs = kernels.masked_softmax_dropout_backward(y, gw, ctx.allowed, 0.0, 0)
        else:
            gs = kernels.masked_softmax_dropout_backward(y, gw, ctx.allowed, ctx.p, ctx.seed)
        _matmul.product(qs.swapaxes(-1, -2), gs, gk.swapaxes(-1, -2))
        # the product into gq itself, then scaled there: no temporary the size of Q to
        # allocate, write and read back (the same two roundings)
        _matmul.product(gs, k, gq)
        np.multiply(gq, ctx.scale, out=gq)
        return gqkv, gkv


def packed_attention(qkv, kv, num_heads, allowed=None, dropout_p=0.0, training=True):
    """PackedAttention (see there) with F.attention's dropout seed: the same numbers as the
    in-projection's output split into heads, F.attention and the heads merged again."""
    p = dropout_p if training else 0.0
    if not 0.0 <= p < 1.0:
        raise ValueError(f"attention: dropout_p must be in [0, 1), got {p}")
    allowed = None if allowed is None else np.asarray(allowed, bool)
    if p > 0.0 and pytorch_dropout_enabled():  # PyTorch's mask, drawn in the op
        return PackedAttention.apply(qkv, kv, num_heads=num_heads, allowed=allowed, p=p,
                                     seed=0, gen=engine())
    return PackedAttention.apply(qkv, kv, num_heads=num_heads, allowed=allowed, p=p,
                                 seed=next_seed() if p > 0.0 else 0)


def _separate(qkv, kv, num_heads, allowed, p, seed, mask=None):
    """PackedAttention by the separate differentiable ops (the rules below use it); with
    `mask` (PyTorch's, drawn), the weights are multiplied by it, after the op's own dropout."""
    from minigrad import ops as _ops
    E = qkv.shape[-1] // (3 if kv is None else 1)
    B, L = qkv.shape[:2]

    def heads(x, i):
        T = x.shape[1]
        x = x[..., i * E:(i + 1) * E].reshape(B, T, num_heads, E // num_heads)
        return x.permute(0, 2, 1, 3)
    q, k, v = ((heads(qkv, 0), heads(qkv, 1), heads(qkv, 2)) if kv is None else
               (heads(qkv, 0), heads(kv, 0), heads(kv, 1)))
    scores = (q * (1.0 / math.sqrt(q.shape[-1]))) @ k.transpose(-2, -1)
    w = _ops.MaskedSoftmaxDropout.apply(scores, allowed=allowed, p=p, seed=seed)
    if mask is not None:
        w = w * mask
    return (w @ v).permute(0, 2, 1, 3).reshape(B, L, E)


@rule(PackedAttention)
def _packed_attention_rule(ctx, g):
    """The separate ops' own rules, through a second trace of them on the saved inputs."""
    from minigrad.autograd import grad
    from minigrad.grad_mode import enable_grad
    qkv, kv = ctx.saved[0], ctx.saved[1]
    ins = [saved_input(ctx, 0, qkv)] + ([] if kv is None else [saved_input(ctx, 1, kv)])
    with enable_grad():
        drawn = ctx.mask is not None
        out = _separate(*ins, *([None] if kv is None else []), ctx.num_heads, ctx.allowed,
                        0.0 if drawn else ctx.p, 0 if drawn else ctx.seed, ctx.mask)
        wanted = [t for t in ins if t.requires_grad]  # an input may want no gradient
        got = iter(grad(out, wanted, g, create_graph=True, allow_unused=True) if wanted else ())
    return tuple(next(got) if t.requires_grad else None for t in ins) + ((None,) if kv is None
                                                                         else ())


@jvp_rule(PackedAttention)
def _packed_attention_jvp(ctx, out, tangents):
    """Tangent of the output from those of qkv and kv (None: zero)."""
    qkv, kv, qs, y, w = ctx.saved
    w = y if w is None else w
    zeros = lambda a: None if a is None else np.zeros_like(a)  # noqa: E731
    tqkv = zeros(qkv) if tangents[0] is None else tangents[0]
    tkv = None if kv is None else (zeros(kv) if tangents[1] is None else tangents[1])
    _, k, v = _qkv(qkv, kv, ctx.num_heads)
    tq, tk, tv = _qkv(np.ascontiguousarray(tqkv), None if tkv is None else
                      np.ascontiguousarray(tkv), ctx.num_heads)
    ts = mm(tq * ctx.scale, k.swapaxes(-1, -2)) + mm(qs, tk.swapaxes(-1, -2))
    tw = kernels.softmax_backward(y, np.ascontiguousarray(ts))
    if ctx.mask is not None:
        tw = tw * ctx.mask
    elif ctx.p:
        tw = kernels.dropout(tw, ctx.p, ctx.seed)
    t = mm(tw, v) + mm(w, tv)
    B, H, L, d = t.shape
    return t.transpose(0, 2, 1, 3).reshape(B, L, H * d)
