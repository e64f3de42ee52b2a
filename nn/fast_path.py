"""Fused fast paths of the layers: one op doing the work of several modules, with their numbers.

A Transformer layer calls Dropout right after a ReLU, or right before a residual add (and,
post-norm, a LayerNorm). Each pair or triple reads and writes whole activations several times;
the functions here do it in one op, one pass each way, drawing the dropout seed exactly as
`functional.dropout` would, so that the numbers are those of the separate calls bit for bit.
None is in PyTorch, which has fast paths of its own inside its Transformer layers. The
helpers at the end are those fast paths for this package's layers: they use a fused op only
when the modules it stands in for are the plain ones, training, and unwatched by hooks.
"""
from __future__ import annotations

from minigrad import ops
from minigrad.random import next_seed

from . import functional as F
from .layers import Dropout
from .normalization import LayerNorm


def relu_dropout(input, p=0.5, training=True):
    """dropout(relu(input), p, training) as one op, one pass each way (not in PyTorch).

    It draws its seed as `dropout` does, so it gives the very numbers of the two calls."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"relu_dropout: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return F.relu(input)
    return ops.ReluDropout.apply(input, p=p, seed=next_seed())


def dropout_add(input, residual, p, training=True):
    """residual + dropout(input, p) as one op (not in PyTorch): a pre-norm residual
    connection, with the seed `dropout` would draw, so the very numbers of the two calls."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_add: p must be in [0, 1), got {p}")
    if not training or p == 0.0:
        return residual + input
    return ops.DropoutAdd.apply(residual, input, p=p, seed=next_seed())


def dropout_add_layer_norm(input, residual, p, weight=None, bias=None, eps=1e-5, training=True):
    """layer_norm(residual + dropout(input, p), (D,), weight, bias, eps) as one op (not in
    PyTorch): a post-norm residual connection. It draws its seed as `dropout` does, so it gives
    the very numbers of the three calls. input and residual (..., D); weight, bias (D,)."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout_add_layer_norm: p must be in [0, 1), got {p}")
    d = residual.shape[-1:]
    if not training or p == 0.0:
        return F.layer_norm(residual + input, d, weight, bias, eps)
    if bias is not None and weight is None:
        raise ValueError("dropout_add_layer_norm: a bias needs a weight")
    return ops.DropoutAddLayerNorm.apply(residual, input, weight, bias, p=p, seed=next_seed(),
                                         eps=eps)


# --- the layers' fast paths (transformer.py calls them) ---------------------------------

def _unhooked(module):
    """True when nothing watches `module` run, so a fused op may stand in for its call."""
    return not (module._forward_hooks or module._forward_pre_hooks)


def _fusable(drop):
    """True when the Dropout module `drop` may run inside a fused op: training, p > 0, plain."""
    return (drop.training and type(drop) is Dropout and drop.p > 0 and not drop.inplace
            and _unhooked(drop))


def activation_dropout(layer, h):
    """layer.dropout(layer.activation(h)); ReLU then dropout runs as one fused op when training
    (the same numbers, the same seed), the hidden layer of every feed-forward network."""
    if layer.activation is F.relu and _fusable(layer.dropout):
        return relu_dropout(h, layer.dropout.p)
    return layer.dropout(layer.activation(h))


def add_residual(drop, x, sub):
    """x + drop(sub), a pre-norm residual connection; one fused op when training."""
    if _fusable(drop) and x.shape == sub.shape and x.dtype == sub.dtype:
        return dropout_add(sub, x, drop.p)
    return x + drop(sub)


def add_norm(norm, drop, x, sub):
    """norm(x + drop(sub)), a post-norm residual connection; one fused op when training."""
    if (_fusable(drop) and type(norm) is LayerNorm and len(norm.normalized_shape) == 1
            and _unhooked(norm) and x.shape == sub.shape and x.dtype == sub.dtype):
        return dropout_add_layer_norm(sub, x, drop.p, norm.weight, norm.bias, norm.eps)
    return norm(x + drop(sub))
